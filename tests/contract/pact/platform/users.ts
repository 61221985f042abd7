/**
 * Platform pact, consumer cases of a customer's users with its owner key: create, activate, issue
 * a user token, read, list one page at a time, and the 401, 404 and 422 answers (docs/contract.md).
 */
import { MatchersV3 } from "@pact-foundation/pact";
import { expect } from "vitest";
import { activateUser, createUser, createUserToken, getUser, listUsers } from "../../../../generated/client/platform/sdk.gen.js";
import type { CreateUserRequest } from "../../../../generated/client/platform/types.gen.js";
import { PlatformApiError, data, listed, platformClient } from "./client.js";
import {
  ANY_LIFECYCLE,
  EXAMPLE_OWNER_KEY,
  EXAMPLE_SESSION,
  NEW_USER,
  PENDING,
  PENDING_USER,
  STATE,
  UNKNOWN_USER,
  VERIFIED,
  VERIFIED_USER,
  failure,
  meta,
  ok,
  ownerKey,
  timestamp,
  user,
  type ConsumerCase,
} from "./setup.js";

const { like, constrainedArrayLike, arrayContaining, regex, uuid, integer } = MatchersV3;

/** The cases, in the order they run. */
export const userCases: ConsumerCase[] = [
  {
    title: "creates a PENDING user with the owner key",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .uponReceiving("a request to create a user")
        .withRequest("POST", "/api/v1/users", (b) => b.headers(ownerKey).jsonBody(NEW_USER))
        .willRespondWith(201, (b) => b.jsonBody(ok(user("1e2d3c4b-5a69-4788-9a0b-c1d2e3f4a5b6", PENDING))))
        .executeTest(async (mock) => {
          const created = await data(createUser({ client: platformClient(mock.url, { apiKey: EXAMPLE_OWNER_KEY }), body: NEW_USER }));
          expect(created).toMatchObject({ status: "PENDING", is_active: false, verification_status: "pending" });
          expect(created.individual.dob).toBe("1990-05-17");
        });
    },
  },

  {
    title: "activates a PENDING user",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.pendingUser)
        .uponReceiving("a request to activate a pending user")
        .withRequest("POST", `/api/v1/users/${PENDING_USER}/activate`, (b) => b.headers(ownerKey))
        .willRespondWith(200, (b) => b.jsonBody(ok({ message: like("User activated.") })))
        .executeTest(async (mock) => {
          const outcome = await data(activateUser({ client: platformClient(mock.url, { apiKey: EXAMPLE_OWNER_KEY }), path: { user_id: PENDING_USER } }));
          expect(outcome.message).toBe("User activated.");
        });
    },
  },

  {
    title: "issues a user token for a VERIFIED user",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.verifiedUser)
        .uponReceiving("a request to issue a user token")
        .withRequest("POST", `/api/v1/users/${VERIFIED_USER}/token`, (b) => b.headers(ownerKey))
        .willRespondWith(201, (b) =>
          b.jsonBody(ok({ token: like(EXAMPLE_SESSION), token_type: "Bearer", expires_at: timestamp(), user_id: uuid(VERIFIED_USER) })),
        )
        .executeTest(async (mock) => {
          const token = await data(createUserToken({ client: platformClient(mock.url, { apiKey: EXAMPLE_OWNER_KEY }), path: { user_id: VERIFIED_USER } }));
          expect(token).toMatchObject({ token_type: "Bearer", user_id: VERIFIED_USER });
        });
    },
  },

  {
    title: "reads a user",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.verifiedUser)
        .uponReceiving("a request to read a user")
        .withRequest("GET", `/api/v1/users/${VERIFIED_USER}`, (b) => b.headers(ownerKey))
        .willRespondWith(200, (b) => b.jsonBody(ok(user(VERIFIED_USER, VERIFIED))))
        .executeTest(async (mock) => {
          const found = await data(getUser({ client: platformClient(mock.url, { apiKey: EXAMPLE_OWNER_KEY }), path: { user_id: VERIFIED_USER } }));
          expect(found).toMatchObject({ user_id: VERIFIED_USER, status: "VERIFIED", is_active: true });
        });
    },
  },

  {
    title: "lists users one page at a time, with meta.pagination",
    run: async (pact) => {
      const link = (skip: number) => regex(/^\/users\?(.*&)?filter\[limit\]=\d+&filter\[skip\]=\d+$/, `/users?filter[limit]=2&filter[skip]=${skip}`);
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.threeUsers)
        .uponReceiving("a request for the first page of users")
        .withRequest("GET", "/api/v1/users", (b) => b.headers(ownerKey).query({ page: "1", limit: "2" }))
        .willRespondWith(200, (b) =>
          b.jsonBody({
            success: true,
            data: constrainedArrayLike(user(VERIFIED_USER, ANY_LIFECYCLE), 1, 2, 2),
            meta: {
              ...meta(),
              pagination: {
                records: { skip: 0, limit: 2, has_previous: false, has_next: true, total: integer(3) },
                navigation: { first: link(0), last: link(2), previous: null, next: link(2) },
              },
            },
          }),
        )
        .executeTest(async (mock) => {
          const page = await listed(listUsers({ client: platformClient(mock.url, { apiKey: EXAMPLE_OWNER_KEY }), query: { page: 1, limit: 2 } }));
          expect(page.data).toHaveLength(2);
          expect(page.pagination.records).toMatchObject({ skip: 0, limit: 2, has_next: true, has_previous: false });
          expect(page.pagination.navigation.previous).toBeNull();
          expect(page.pagination.navigation.next).toContain("filter[skip]=2");
        });
    },
  },

  {
    title: "gets 401 UNAUTHORIZED without an API key",
    run: async (pact) => {
      await pact
        .addInteraction()
        .uponReceiving("a request to read a user without credentials")
        .withRequest("GET", `/api/v1/users/${VERIFIED_USER}`)
        .willRespondWith(401, (b) =>
          b.jsonBody(failure([{ code: "UNAUTHORIZED", message: like("Missing credentials: send x-api-key or Authorization: Bearer <token>.") }])),
        )
        .executeTest(async (mock) => {
          const error = await data(getUser({ client: platformClient(mock.url), path: { user_id: VERIFIED_USER } })).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(PlatformApiError);
          expect(error).toMatchObject({ status: 401, code: "UNAUTHORIZED", traceId: "3f0c9a6e-2b1d-4c5e-8f7a-1b2c3d4e5f60" });
        });
    },
  },

  {
    title: "gets 404 USER_NOT_FOUND for an unknown user",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.unknownUser)
        .uponReceiving("a request to read an unknown user")
        .withRequest("GET", `/api/v1/users/${UNKNOWN_USER}`, (b) => b.headers(ownerKey))
        .willRespondWith(404, (b) =>
          b.jsonBody(failure([{ code: "USER_NOT_FOUND", message: like(`User '${UNKNOWN_USER}' not found.`) }])),
        )
        .executeTest(async (mock) => {
          const error = await data(getUser({ client: platformClient(mock.url, { apiKey: EXAMPLE_OWNER_KEY }), path: { user_id: UNKNOWN_USER } })).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(PlatformApiError);
          expect(error).toMatchObject({ status: 404, code: "USER_NOT_FOUND" });
        });
    },
  },

  {
    title: "gets 422 UNPROCESSABLE_ENTITY with one errors[] entry per invalid field",
    run: async (pact) => {
      const invalid: CreateUserRequest = {
        ...NEW_USER,
        email: "not-an-email",
        phone_country_code: "usa",
        individual: { ...NEW_USER.individual, dob: "17/05/1990" },
      };
      const problem = (field: string, message: string) => ({ code: "UNPROCESSABLE_ENTITY", field, message: like(message) });
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .uponReceiving("a request to create a user with three invalid fields")
        .withRequest("POST", "/api/v1/users", (b) => b.headers(ownerKey).jsonBody(invalid))
        .willRespondWith(422, (b) =>
          b.jsonBody(
            failure(
              // Order-independent: each invalid field has its entry.
              arrayContaining(
                problem("email", 'email must match format "email".'),
                problem("phone_country_code", 'phone_country_code must match pattern "^[A-Z]{2}$".'),
                problem("individual.dob", 'individual.dob must match format "date".'),
              ),
            ),
          ),
        )
        .executeTest(async (mock) => {
          const error = await data(createUser({ client: platformClient(mock.url, { apiKey: EXAMPLE_OWNER_KEY }), body: invalid })).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(PlatformApiError);
          const apiError = error as PlatformApiError;
          expect(apiError.status).toBe(422);
          expect(apiError.errors.map((e) => e.field).sort()).toEqual(["email", "individual.dob", "phone_country_code"]);
          expect(apiError.errors.every((e) => e.code === "UNPROCESSABLE_ENTITY")).toBe(true);
        });
    },
  },
];

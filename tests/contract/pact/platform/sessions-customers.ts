/**
 * Platform pact, consumer cases of the operator's first steps: an operator session with the master
 * key, a customer created with it, and the customer's owner credentials (docs/contract.md).
 */
import { MatchersV3 } from "@pact-foundation/pact";
import { expect } from "vitest";
import { createCustomer, createSession, generateCredentials } from "../../../../generated/client/platform/sdk.gen.js";
import { data, platformClient } from "./client.js";
import { ACME, COUNTRY, EXAMPLE_MASTER_KEY, EXAMPLE_OWNER_KEY, EXAMPLE_SESSION, NEW_CUSTOMER, STATE, bearer, ok, timestamp, type ConsumerCase } from "./setup.js";

const { like, regex, uuid } = MatchersV3;

/** The cases, in the order they run. */
export const sessionAndCustomerCases: ConsumerCase[] = [
  {
    title: "opens an operator session with the master key",
    run: async (pact) => {
      await pact
        .addInteraction()
        .uponReceiving("a request to open an operator session")
        .withRequest("POST", "/api/v1/sessions", (b) => b.headers({ "x-master-api-key": like(EXAMPLE_MASTER_KEY) }))
        .willRespondWith(201, (b) =>
          b.jsonBody(
            ok({ token: like(EXAMPLE_SESSION), token_type: "Bearer", expires_at: timestamp(), scope: "operator", customer_id: null }),
          ),
        )
        .executeTest(async (mock) => {
          const session = await data(createSession({ client: platformClient(mock.url, { masterKey: EXAMPLE_MASTER_KEY }) }));
          expect(session).toMatchObject({ token_type: "Bearer", scope: "operator", customer_id: null });
          expect(session.token).toBe(EXAMPLE_SESSION);
        });
    },
  },

  {
    title: "creates a customer with an operator session",
    run: async (pact) => {
      const body = { customer_id: NEW_CUSTOMER, email: "ops@globex.example", entity_name: "Globex Corp" };
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.noNewCustomer)
        .uponReceiving("a request to create a customer")
        .withRequest("POST", "/api/v1/customers", (b) => b.headers(bearer).jsonBody(body))
        .willRespondWith(201, (b) =>
          b.jsonBody(
            ok({
              customer_id: NEW_CUSTOMER,
              email: "ops@globex.example",
              account_type: regex(/^(individual|corporation)$/, "corporation"),
              account_role: regex(/^(client|partner)$/, "client"),
              account_purpose: like("custody and payments"),
              first_name: like("Ada"),
              last_name: like("Lovelace"),
              phone_country_code: COUNTRY("US"),
              phone_number: like("2025550143"),
              business: { entity_name: "Globex Corp", incorporation_country: COUNTRY("US") },
              status: like("VERIFIED"),
              created_at: timestamp(),
              updated_at: timestamp(),
            }),
          ),
        )
        .executeTest(async (mock) => {
          const customer = await data(createCustomer({ client: platformClient(mock.url, { sessionToken: EXAMPLE_SESSION }), body }));
          expect(customer.customer_id).toBe(NEW_CUSTOMER);
          expect(customer.business.entity_name).toBe("Globex Corp");
        });
    },
  },

  {
    title: "generates owner credentials for a customer",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.acme)
        .uponReceiving("a request to generate owner credentials")
        .withRequest("POST", `/api/v1/customers/${ACME}/credentials`, (b) => b.headers(bearer))
        .willRespondWith(201, (b) =>
          b.jsonBody(
            ok({ customer_id: ACME, credential_id: uuid("8d0c3f55-1111-4a4a-9b9b-0123456789ab"), customer_secret: regex(/^sk_[A-Za-z0-9_-]{43}$/, EXAMPLE_OWNER_KEY) }),
          ),
        )
        .executeTest(async (mock) => {
          const generated = await data(generateCredentials({ client: platformClient(mock.url, { sessionToken: EXAMPLE_SESSION }), path: { customer_id: ACME } }));
          expect(generated.customer_id).toBe(ACME);
          expect(generated.customer_secret).toMatch(/^sk_/);
        });
    },
  },
];

/**
 * Platform pact, consumer cases of limits and the withdrawal allowlist
 * (docs/decisions/limits-and-allowlist.md "Limits", "Destination allowlist"): a customer's caps
 * read and replaced with a session of the customer (and caps out of order refused), a user's caps
 * and their use with the owner key, an address added (and the same one refused), the allowlist
 * listed with a user token, and an address deleted (docs/contract.md).
 */
import { MatchersV3 } from "@pact-foundation/pact";
import { expect } from "vitest";
import { addAddress, deleteAddress, getLimits, getUserLimits, listAddresses, setLimits } from "../../../../generated/client/platform/sdk.gen.js";
import type { SetLimitsRequest } from "../../../../generated/client/platform/types.gen.js";
import { PlatformApiError, data, done, listed, platformClient } from "./client.js";
import {
  ACME,
  COLD_ADDRESS,
  EIGHT,
  EXAMPLE_ADDRESS,
  EXAMPLE_OWNER_KEY,
  EXAMPLE_SESSION,
  EXAMPLE_USER_TOKEN,
  STATE,
  UUID_PATTERN,
  VERIFIED_USER,
  bearer,
  failure,
  fromState,
  meta,
  ok,
  ownerKey,
  timestamp,
  userBearer,
  type ConsumerCase,
} from "./setup.js";

const { like, eachLike, regex, uuid, integer, equal, iso8601DateTimeWithMillis } = MatchersV3;

const sessionClient = (url: string) => platformClient(url, { sessionToken: EXAMPLE_SESSION });
const ownerClient = (url: string) => platformClient(url, { apiKey: EXAMPLE_OWNER_KEY });
const limitsPath = `/api/v1/customers/${ACME}/limits`;
const addressesPath = `/api/v1/users/${VERIFIED_USER}/addresses`;

/** Caps as answered: 8-decimal strings (the examples are the service's default btc caps). */
const capSet = (perTransaction = "2.00000000", daily = "5.00000000", monthly = "20.00000000") => ({
  per_transaction: EIGHT(perTransaction),
  daily: EIGHT(daily),
  monthly: EIGHT(monthly),
});
/** {@link ACME}'s limits: btc caps of both kinds (other currencies may follow), its policy and its own currencies. */
const customerLimits = (withdrawal: unknown, transfer: unknown, customized: unknown) => ({
  customer_id: ACME,
  allowlist_required: false,
  withdrawal: { btc: withdrawal },
  transfer: { btc: transfer },
  customized,
});
/** A cap set with its use in the current UTC day and month and when each window resets. */
const capUsage = () => ({
  ...capSet(),
  used: { today: EIGHT("0.10000000"), this_month: EIGHT("0.10000000") },
  remaining_today: EIGHT("1.90000000"),
  remaining_this_month: EIGHT("19.90000000"),
  resets_at: { today: timestamp(), this_month: timestamp() },
});
/** An allowlist entry of {@link VERIFIED_USER}, `PENDING` for the cooldown (a day by default). */
const allowlistAddress = (entry: { currency: string; address: string; label: string }) => ({
  address_id: uuid(EXAMPLE_ADDRESS),
  user_id: equal(VERIFIED_USER),
  currency: equal(entry.currency),
  address: like(entry.address),
  label: like(entry.label),
  status: regex(/^(PENDING|ACTIVE)$/, "PENDING"),
  created_at: timestamp(),
  // A day after timestamp()'s example: the default cooldown.
  activates_at: iso8601DateTimeWithMillis("2026-01-16T10:30:00.000Z"),
});

/** The Set Limits body of the cases: the spec's example with the allowlist left optional. */
const OWN_CAPS: SetLimitsRequest = {
  allowlist_required: false,
  withdrawal: { btc: { per_transaction: "1", daily: "2", monthly: "10" } },
  transfer: { btc: { per_transaction: "0.5", daily: "1", monthly: "5" } },
};

/** The cases, in the order they run. */
export const limitAndAddressCases: ConsumerCase[] = [
  {
    title: "reads a customer's limits with a session of the customer: the service's defaults",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeSession)
        .given(STATE.acmeDefaultLimits)
        .uponReceiving("a request to read a customer's limits")
        .withRequest("GET", limitsPath, (b) => b.headers(bearer))
        .willRespondWith(200, (b) => b.jsonBody(ok(customerLimits(capSet(), capSet(), { withdrawal: [], transfer: [] }))))
        .executeTest(async (mock) => {
          const limits = await data(getLimits({ client: sessionClient(mock.url), path: { customer_id: ACME } }));
          expect(limits).toMatchObject({ customer_id: ACME, allowlist_required: false, customized: { withdrawal: [], transfer: [] } });
          expect(limits.transfer.btc?.per_transaction).toBe("2.00000000");
        });
    },
  },

  {
    title: "replaces a customer's own caps with a session of the customer",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeSession)
        .uponReceiving("a request to set a customer's limits")
        .withRequest("PUT", limitsPath, (b) => b.headers(bearer).jsonBody(OWN_CAPS))
        .willRespondWith(200, (b) =>
          b.jsonBody(
            ok(
              customerLimits(
                capSet("1.00000000", "2.00000000", "10.00000000"),
                capSet("0.50000000", "1.00000000", "5.00000000"),
                { withdrawal: ["btc"], transfer: ["btc"] },
              ),
            ),
          ),
        )
        .executeTest(async (mock) => {
          const limits = await data(setLimits({ client: sessionClient(mock.url), path: { customer_id: ACME }, body: OWN_CAPS }));
          expect(limits.customized).toEqual({ withdrawal: ["btc"], transfer: ["btc"] });
          expect(limits.transfer.btc).toEqual({ per_transaction: "0.50000000", daily: "1.00000000", monthly: "5.00000000" });
        });
    },
  },

  {
    title: "gets 400 BAD_REQUEST for caps out of order",
    run: async (pact) => {
      const body: SetLimitsRequest = { withdrawal: { btc: { per_transaction: "3", daily: "2", monthly: "10" } } };
      await pact
        .addInteraction()
        .given(STATE.acmeSession)
        .uponReceiving("a request to set caps out of order")
        .withRequest("PUT", limitsPath, (b) => b.headers(bearer).jsonBody(body))
        .willRespondWith(400, (b) => b.jsonBody(failure([{ code: "BAD_REQUEST", field: "withdrawal.btc", message: like("withdrawal caps of btc must be in order per_transaction ≤ daily ≤ monthly.") }])))
        .executeTest(async (mock) => {
          const error = await data(setLimits({ client: sessionClient(mock.url), path: { customer_id: ACME }, body })).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(PlatformApiError);
          expect(error).toMatchObject({ status: 400, code: "BAD_REQUEST" });
        });
    },
  },

  {
    title: "reads a user's caps with what was used and what remains, with the owner key",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.transferred)
        .uponReceiving("a request to read a user's limits")
        .withRequest("GET", `/api/v1/users/${VERIFIED_USER}/limits`, (b) => b.headers(ownerKey))
        .willRespondWith(200, (b) => b.jsonBody(ok({ user_id: VERIFIED_USER, withdrawal: { btc: capUsage() }, transfer: { btc: capUsage() } })))
        .executeTest(async (mock) => {
          const limits = await data(getUserLimits({ client: ownerClient(mock.url), path: { user_id: VERIFIED_USER } }));
          expect(limits.user_id).toBe(VERIFIED_USER);
          expect(limits.transfer.btc?.used.today).toMatch(/^\d+\.\d{8}$/);
        });
    },
  },

  {
    title: "adds an address to a user's allowlist, PENDING for the cooldown",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.verifiedUser)
        .given(STATE.noColdAddress)
        .uponReceiving("a request to add an allowlist address")
        .withRequest("POST", addressesPath, (b) => b.headers(ownerKey).jsonBody(COLD_ADDRESS))
        .willRespondWith(201, (b) => b.jsonBody(ok({ ...allowlistAddress(COLD_ADDRESS), address: COLD_ADDRESS.address, status: "PENDING" })))
        .executeTest(async (mock) => {
          const added = await data(addAddress({ client: ownerClient(mock.url), path: { user_id: VERIFIED_USER }, body: COLD_ADDRESS }));
          expect(added).toMatchObject({ user_id: VERIFIED_USER, currency: "btc", address: COLD_ADDRESS.address, status: "PENDING" });
          expect(Date.parse(added.activates_at)).toBeGreaterThan(Date.parse(added.created_at));
        });
    },
  },

  {
    title: "gets 409 ADDRESS_ALREADY_EXISTS for an address already on the allowlist",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.coldAddress)
        .uponReceiving("a request to add an address already on the allowlist")
        .withRequest("POST", addressesPath, (b) => b.headers(ownerKey).jsonBody(COLD_ADDRESS))
        .willRespondWith(409, (b) => b.jsonBody(failure([{ code: "ADDRESS_ALREADY_EXISTS", field: "address", message: like("Already on the allowlist.") }])))
        .executeTest(async (mock) => {
          const error = await data(addAddress({ client: ownerClient(mock.url), path: { user_id: VERIFIED_USER }, body: COLD_ADDRESS })).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(PlatformApiError);
          expect(error).toMatchObject({ status: 409, code: "ADDRESS_ALREADY_EXISTS", errors: [{ field: "address" }] });
        });
    },
  },

  {
    title: "lists a user's allowlist with a user token, with meta.pagination",
    run: async (pact) => {
      const link = regex(/^\/users\/[0-9a-f-]{36}\/addresses\?filter\[limit\]=20&filter\[skip\]=0$/, `/users/${VERIFIED_USER}/addresses?filter[limit]=20&filter[skip]=0`);
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.coldAddress)
        .given(STATE.userToken)
        .uponReceiving("a request to list a user's allowlist with a user token")
        .withRequest("GET", addressesPath, (b) => b.headers(userBearer))
        .willRespondWith(200, (b) =>
          b.jsonBody({
            success: true,
            data: eachLike({ ...allowlistAddress(COLD_ADDRESS), currency: regex(/^[a-z0-9]+$/, "btc") }),
            meta: {
              ...meta(),
              pagination: {
                records: { skip: 0, limit: 20, has_previous: false, has_next: false, total: integer(1) },
                navigation: { first: link, last: link, previous: null, next: null },
              },
            },
          }),
        )
        .executeTest(async (mock) => {
          const page = await listed(listAddresses({ client: platformClient(mock.url, { userToken: EXAMPLE_USER_TOKEN }), path: { user_id: VERIFIED_USER } }));
          expect(page.data[0]).toMatchObject({ user_id: VERIFIED_USER, label: COLD_ADDRESS.label });
          expect(page.pagination.records).toMatchObject({ skip: 0, limit: 20, has_next: false });
        });
    },
  },

  {
    title: "deletes an address from a user's allowlist",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.oldAddress)
        .uponReceiving("a request to delete an allowlist address")
        .withRequest(
          "DELETE",
          fromState(`${addressesPath}/\${addressId}`, `^${addressesPath}/${UUID_PATTERN}$`, `${addressesPath}/${EXAMPLE_ADDRESS}`),
          (b) => b.headers(ownerKey),
        )
        .willRespondWith(204)
        .executeTest(async (mock) => {
          await done(deleteAddress({ client: ownerClient(mock.url), path: { user_id: VERIFIED_USER, address_id: EXAMPLE_ADDRESS } }));
        });
    },
  },
];

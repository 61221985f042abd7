/**
 * Pact contract of the identity and wallet slices, consumer "platform-client" (src/client/platform-client.ts)
 * and provider "custody-platform-api", in one file so that the pact is written before it is
 * verified (vitest runs files in parallel, the describe blocks of one file in order):
 *
 * 1. consumer: every interaction goes through the real PlatformClient against Pact's mock server;
 *    responses are described with matchers (types, UUIDs, ISO 8601 times, regexes), so the pact
 *    pins shapes, statuses and error codes, not the example values;
 * 2. provider: the pact is replayed against the real app (real PostgreSQL, responses validated
 *    against the emitted document) listening on 127.0.0.1. Provider states seed data through the
 *    services (IdentityService, UserService, WalletService), not SQL; the secrets they create differ
 *    on every run, so `requestFilter` swaps the pact's example credentials for the live ones. Wallet
 *    ids are generated too: the wallet states answer `{walletId}` and the interactions inject it into
 *    paths and bodies with `fromProviderState` (provider-state generators).
 *
 * The pact file goes to a fresh temporary directory, removed afterwards; set `PACT_DIR` (for
 * example `tests/contract/pact/pacts`, ignored by git) to keep it.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { MatchersV3, PactV4, Verifier } from "@pact-foundation/pact";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PlatformApiError,
  PlatformClient,
  type CreateUserRequest,
  type CreateWalletRequest,
  type PlatformCredentials,
} from "../../../src/client/platform-client.js";
import { DomainError } from "../../../src/domain/errors.js";
import type { IdentityService } from "../../../src/modules/identity/service.js";
import type { UserService } from "../../../src/modules/users/service.js";
import type { WalletService } from "../../../src/modules/wallets/service.js";
import { freePort } from "../../../src/db/embedded.js";
import { TEST_MASTER_KEY, startTestApp, type TestApp } from "../../support/app.js";
import { BTC_DESTINATION } from "../../support/fixtures.js";
import { startReceiver, type Receiver } from "../../support/webhook-receiver.js";

const {
  like,
  eachLike,
  constrainedArrayLike,
  arrayContaining,
  regex,
  uuid,
  integer,
  number,
  boolean,
  equal,
  fromProviderState,
  iso8601DateTimeWithMillis,
} = MatchersV3;

const CONSUMER = "platform-client";
const PROVIDER = "custody-platform-api";
const keepDir = process.env.PACT_DIR ? resolve(process.env.PACT_DIR) : undefined;
const pactDir = keepDir ?? mkdtempSync(join(tmpdir(), "pact-"));
const pactFile = join(pactDir, `${CONSUMER}-${PROVIDER}.json`);

/** Identifiers the interactions use; provider states create exactly these. */
const ACME = "acme-corp";
const NEW_CUSTOMER = "globex-corp";
const VERIFIED_USER = "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f";
const PENDING_USER = "0b7e4f2a-9c3d-4e5f-a617-2b3c4d5e6f70";
const UNKNOWN_USER = "5d6e7f80-1a2b-4c3d-9e4f-000000000000";
const UNKNOWN_WALLET = "9e8d7c6b-5a49-4838-a726-000000000000";
/** Example wallet id of the pact; on the provider side the wallet states supply the live one. */
const EXAMPLE_WALLET = "2c9d7e1f-3a4b-4c5d-8e6f-7a8b9c0d1e2f";
/** Wallet names the provider states create, and the one Create Wallet uses. */
const MAIN_WALLET = "Main";
const SPARE_WALLET = "Spare";
const NEW_WALLET = "Savings";

/** The customer whose webhook and poller the interactions manage, and one without either. */
const HOOKED = "initech-co";
const UNHOOKED = "umbrella-co";
/** Where the webhook points: a real receiver the provider side starts on this port (both halves run in this file). */
const RECEIVER_PORT = await freePort();
const HOOK_URL = `http://127.0.0.1:${RECEIVER_PORT}/pins`;
/** An IMAP address nothing listens on: Verify Email Poller answers 401 there. */
const IMAP_CLOSED = { host: "127.0.0.1", port: 9, tls: false };
const EXAMPLE_DELIVERY = "3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a9f";
const EXAMPLE_POLLER = "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d";

/** Example credentials recorded in the pact; the provider side replaces them with live ones. */
const EXAMPLE_MASTER_KEY = "mk_example_master_key_0123456789abcdefghij";
const EXAMPLE_SESSION = "eyJhbGciOiJIUzI1NiJ9.eyJraW5kIjoic2Vzc2lvbiJ9.c2lnbmF0dXJl";
const EXAMPLE_OWNER_KEY = "sk_EXAMPLEexampleEXAMPLEexampleEXAMPLEexample0";
const EXAMPLE_USER_TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJraW5kIjoidXNlciJ9.dXNlcnNpZ25hdHVyZQ";

/** Provider states, shared by both halves. */
const STATE = {
  operatorSession: "an operator session is open",
  noNewCustomer: `customer ${NEW_CUSTOMER} does not exist`,
  acme: `customer ${ACME} exists`,
  acmeWithKey: `customer ${ACME} exists with an owner key`,
  verifiedUser: `user ${VERIFIED_USER} exists and is VERIFIED`,
  pendingUser: `user ${PENDING_USER} exists and is PENDING`,
  threeUsers: `customer ${ACME} has at least 3 users`,
  unknownUser: `user ${UNKNOWN_USER} does not exist`,
  userToken: `a user token of ${VERIFIED_USER} is issued`,
  noNewWallet: `user ${VERIFIED_USER} has no wallet named '${NEW_WALLET}'`,
  mainWallet: `user ${VERIFIED_USER} has wallet '${MAIN_WALLET}' with 0.5 btc deposited`,
  spareWallet: `user ${VERIFIED_USER} has wallet '${SPARE_WALLET}' holding btc, without deposits`,
  unknownWallet: `wallet ${UNKNOWN_WALLET} does not exist`,
  hookedCustomer: `customer ${HOOKED} exists with an owner credential`,
  webhook: `customer ${HOOKED} has a webhook`,
  delivered: `customer ${HOOKED} has a delivered withdrawal.pin notification`,
  unhooked: `customer ${UNHOOKED} has no webhook`,
  noPoller: `customer ${HOOKED} has no email poller`,
  poller: `customer ${HOOKED} has an email poller that has polled once, in vain`,
} as const;

// ── Response templates ────────────────────────────────────────────────────────────────────────

const timestamp = () => iso8601DateTimeWithMillis("2026-01-15T10:30:00.000Z");
const meta = () => ({ timestamp: timestamp(), version: "v1", trace_id: like("3f0c9a6e-2b1d-4c5e-8f7a-1b2c3d4e5f60") });
const ok = (data: unknown) => ({ success: true, data, meta: meta() });
const failure = (errors: unknown) => ({ success: false, errors, meta: meta() });
const COUNTRY = (example: string) => regex(/^[A-Z]{2}$/, example);

/** The `individual` object of a user. */
const individual = () => ({
  dob: regex(/^\d{4}-\d{2}-\d{2}$/, "1990-05-17"),
  residential_country_code: COUNTRY("US"),
  residential_address: like("742 Evergreen Terrace"),
  residential_city: like("Springfield"),
  residential_state: like("IL"),
  residential_postal_code: like("62704"),
  id_type: regex(/^(ssn|passport)$/, "ssn"),
  id_number: like("123-45-6789"),
  id_country_code: COUNTRY("US"),
});

/** A user; `lifecycle` pins status, verification and activity where the state fixes them. */
const user = (userId: string, lifecycle: { status: unknown; verification_status: unknown; is_active: unknown }) => ({
  user_id: uuid(userId),
  customer_id: like(ACME),
  account_type: regex(/^(individual|business)$/, "individual"),
  account_role: like("third"),
  account_purpose: regex(/^(trading|investing)$/, "trading"),
  first_name: like("Jane"),
  last_name: like("Doe"),
  email: like("jane.doe@example.com"),
  phone_country_code: COUNTRY("US"),
  phone_number: like("2025550143"),
  ...lifecycle,
  individual: individual(),
  created_at: timestamp(),
  updated_at: timestamp(),
});

const VERIFIED = { status: "VERIFIED", verification_status: "verified", is_active: true };
const PENDING = { status: "PENDING", verification_status: "pending", is_active: false };
const ANY_LIFECYCLE = {
  status: regex(/^(PENDING|VERIFIED|SUSPENDED)$/, "VERIFIED"),
  verification_status: regex(/^(verified|unverified|pending)$/, "verified"),
  is_active: boolean(true),
};

/** The Create User body the consumer sends. */
const NEW_USER: CreateUserRequest = {
  account_type: "individual",
  account_role: "third",
  account_purpose: "trading",
  first_name: "Jane",
  last_name: "Doe",
  email: "jane.doe@example.com",
  phone_country_code: "US",
  phone_number: "2025550143",
  individual: {
    dob: "1990-05-17",
    residential_country_code: "US",
    residential_address: "742 Evergreen Terrace",
    residential_city: "Springfield",
    residential_state: "IL",
    residential_postal_code: "62704",
    id_type: "ssn",
    id_number: "123-45-6789",
    id_country_code: "US",
  },
};

const bearer = { authorization: regex(/^Bearer [A-Za-z0-9._~+/=-]+$/, `Bearer ${EXAMPLE_SESSION}`) };
const ownerKey = { "x-api-key": regex(/^sk_[A-Za-z0-9_-]+$/, EXAMPLE_OWNER_KEY) };
const userBearer = { authorization: regex(/^Bearer [A-Za-z0-9._~+/=-]+$/, `Bearer ${EXAMPLE_USER_TOKEN}`) };

// ── Wallet templates ──────────────────────────────────────────────────────────────────────────

const NETWORK = (example: string) => regex(/^networks\/[a-z0-9-]+$/, example);
const CODE = (example: string) => regex(/^[a-z0-9]+$/, example);
/** An 8-decimal amount string of a balance. */
const EIGHT = (example: string) => regex(/^\d+\.\d{8}$/, example);
const UUID_PATTERN = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

/**
 * `fromProviderState` with a regex instead of its type match: the consumer side matches `regex` and
 * uses `example`; the provider side injects `expression` (here `${walletId}`, which the wallet
 * states answer) through a ProviderState generator.
 */
const fromState = (expression: string, pattern: string, example: string) => ({
  ...fromProviderState(expression, example),
  "pact:matcher:type": "regex",
  regex: pattern,
});
/** Path `/api/v1/wallets/{walletId}/<suffix>`, the wallet id coming from the provider state. */
const walletPath = (suffix: string) =>
  fromState(`/api/v1/wallets/\${walletId}/${suffix}`, `^/api/v1/wallets/${UUID_PATTERN}/${suffix}$`, `/api/v1/wallets/${EXAMPLE_WALLET}/${suffix}`);
/** The wallet id of the provider state, in a body. */
const stateWalletId = () => fromState("${walletId}", `^${UUID_PATTERN}$`, EXAMPLE_WALLET);

/** The networks every created wallet of this file holds, in this order. */
const WALLET_NETWORKS = [
  { name: "networks/bitcoin", currency: "btc" },
  { name: "networks/ethereum", currency: "usdt" },
];

/**
 * A `virtual`, active wallet of {@link VERIFIED_USER}; the addresses (at least two: one per network) are
 * shapes only. `equal` keeps the pinned values exact inside an `eachLike`, which otherwise matches
 * its items by type.
 */
const wallet = (name: unknown, description: unknown, networks: unknown) => ({
  wallet_id: uuid(EXAMPLE_WALLET),
  vault_wallet_id: like("b3c4d5e6-f7a8-4b9c-8d0e-1f2a3b4c5d6e"),
  user_id: equal(VERIFIED_USER),
  name,
  description,
  wallet_type: equal("virtual"),
  networks,
  is_active: equal(true),
  addresses: eachLike(
    {
      address_id: uuid("7e8f9a0b-1c2d-4e3f-8a4b-5c6d7e8f9a0b"),
      currency: CODE("btc"),
      network: NETWORK("networks/bitcoin"),
      address: like("tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"),
    },
    2,
  ),
  created_at: timestamp(),
  updated_at: timestamp(),
});

/** A `deposit` transaction with status `done` of `amount` btc on the bitcoin network. */
const btcDeposit = (amount: unknown, balanceAfter: unknown) => ({
  id: integer(1),
  balance: balanceAfter,
  transaction: {
    order_id: uuid("4a5b6c7d-8e9f-4a0b-9c1d-2e3f4a5b6c7d"),
    trade_id: like(""),
    client_id: equal(ACME),
    idempotency_id: null,
    symbol: equal("BTC"),
    created_at: timestamp(),
    hash: regex(/^[0-9a-f]{64}$/, "9f2c4b7e1d3a5c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c6e"),
    action: equal("deposit"),
    currency: equal("btc"),
    memo: like(""),
    amount,
    net_proceeds: amount,
    price: number(0),
    fees: number(0),
    status: equal("done"),
    description: like("Deposit of 0.50000000 BTC on networks/bitcoin"),
  },
});

// ── Consumer ──────────────────────────────────────────────────────────────────────────────────

describe(`consumer ${CONSUMER}`, () => {
  const pact = new PactV4({ consumer: CONSUMER, provider: PROVIDER, dir: pactDir, logLevel: "warn" });
  const client = (url: string, credentials: PlatformCredentials = {}) => new PlatformClient({ baseUrl: `${url}/api/v1`, ...credentials });

  beforeAll(() => {
    // Pact merges into an existing file: start from none so a renamed interaction does not linger.
    rmSync(pactFile, { force: true });
  });

  it("opens an operator session with the master key", async () => {
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
        const session = await client(mock.url, { masterKey: EXAMPLE_MASTER_KEY }).createSession();
        expect(session).toMatchObject({ token_type: "Bearer", scope: "operator", customer_id: null });
        expect(session.token).toBe(EXAMPLE_SESSION);
      });
  });

  it("creates a customer with an operator session", async () => {
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
        const customer = await client(mock.url, { sessionToken: EXAMPLE_SESSION }).createCustomer(body);
        expect(customer.customer_id).toBe(NEW_CUSTOMER);
        expect(customer.business.entity_name).toBe("Globex Corp");
      });
  });

  it("generates owner credentials for a customer", async () => {
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
        const generated = await client(mock.url, { sessionToken: EXAMPLE_SESSION }).generateCredentials(ACME);
        expect(generated.customer_id).toBe(ACME);
        expect(generated.customer_secret).toMatch(/^sk_/);
      });
  });

  it("creates a PENDING user with the owner key", async () => {
    await pact
      .addInteraction()
      .given(STATE.acmeWithKey)
      .uponReceiving("a request to create a user")
      .withRequest("POST", "/api/v1/users", (b) => b.headers(ownerKey).jsonBody(NEW_USER))
      .willRespondWith(201, (b) => b.jsonBody(ok(user("1e2d3c4b-5a69-4788-9a0b-c1d2e3f4a5b6", PENDING))))
      .executeTest(async (mock) => {
        const created = await client(mock.url, { apiKey: EXAMPLE_OWNER_KEY }).createUser(NEW_USER);
        expect(created).toMatchObject({ status: "PENDING", is_active: false, verification_status: "pending" });
        expect(created.individual.dob).toBe("1990-05-17");
      });
  });

  it("activates a PENDING user", async () => {
    await pact
      .addInteraction()
      .given(STATE.acmeWithKey)
      .given(STATE.pendingUser)
      .uponReceiving("a request to activate a pending user")
      .withRequest("POST", `/api/v1/users/${PENDING_USER}/activate`, (b) => b.headers(ownerKey))
      .willRespondWith(200, (b) => b.jsonBody(ok({ message: like("User activated.") })))
      .executeTest(async (mock) => {
        const outcome = await client(mock.url, { apiKey: EXAMPLE_OWNER_KEY }).activateUser(PENDING_USER);
        expect(outcome.message).toBe("User activated.");
      });
  });

  it("issues a user token for a VERIFIED user", async () => {
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
        const token = await client(mock.url, { apiKey: EXAMPLE_OWNER_KEY }).createUserToken(VERIFIED_USER);
        expect(token).toMatchObject({ token_type: "Bearer", user_id: VERIFIED_USER });
      });
  });

  it("reads a user", async () => {
    await pact
      .addInteraction()
      .given(STATE.acmeWithKey)
      .given(STATE.verifiedUser)
      .uponReceiving("a request to read a user")
      .withRequest("GET", `/api/v1/users/${VERIFIED_USER}`, (b) => b.headers(ownerKey))
      .willRespondWith(200, (b) => b.jsonBody(ok(user(VERIFIED_USER, VERIFIED))))
      .executeTest(async (mock) => {
        const found = await client(mock.url, { apiKey: EXAMPLE_OWNER_KEY }).getUser(VERIFIED_USER);
        expect(found).toMatchObject({ user_id: VERIFIED_USER, status: "VERIFIED", is_active: true });
      });
  });

  it("lists users one page at a time, with meta.pagination", async () => {
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
        const page = await client(mock.url, { apiKey: EXAMPLE_OWNER_KEY }).listUsers({ page: 1, limit: 2 });
        expect(page.data).toHaveLength(2);
        expect(page.pagination.records).toMatchObject({ skip: 0, limit: 2, has_next: true, has_previous: false });
        expect(page.pagination.navigation.previous).toBeNull();
        expect(page.pagination.navigation.next).toContain("filter[skip]=2");
      });
  });

  it("gets 401 UNAUTHORIZED without an API key", async () => {
    await pact
      .addInteraction()
      .uponReceiving("a request to read a user without credentials")
      .withRequest("GET", `/api/v1/users/${VERIFIED_USER}`)
      .willRespondWith(401, (b) =>
        b.jsonBody(failure([{ code: "UNAUTHORIZED", message: like("Missing credentials: send x-api-key or Authorization: Bearer <token>.") }])),
      )
      .executeTest(async (mock) => {
        const error = await client(mock.url).getUser(VERIFIED_USER).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(PlatformApiError);
        expect(error).toMatchObject({ status: 401, code: "UNAUTHORIZED", traceId: "3f0c9a6e-2b1d-4c5e-8f7a-1b2c3d4e5f60" });
      });
  });

  it("gets 404 USER_NOT_FOUND for an unknown user", async () => {
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
        const error = await client(mock.url, { apiKey: EXAMPLE_OWNER_KEY }).getUser(UNKNOWN_USER).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(PlatformApiError);
        expect(error).toMatchObject({ status: 404, code: "USER_NOT_FOUND" });
      });
  });

  it("gets 422 UNPROCESSABLE_ENTITY with one errors[] entry per invalid field", async () => {
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
        const error = await client(mock.url, { apiKey: EXAMPLE_OWNER_KEY }).createUser(invalid).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(PlatformApiError);
        const apiError = error as PlatformApiError;
        expect(apiError.status).toBe(422);
        expect(apiError.errors.map((e) => e.field).sort()).toEqual(["email", "individual.dob", "phone_country_code"]);
        expect(apiError.errors.every((e) => e.code === "UNPROCESSABLE_ENTITY")).toBe(true);
      });
  });

  // Wallets, currencies and the sandbox deposit helper.

  it("creates a wallet with one deposit address per network", async () => {
    const body: CreateWalletRequest = { name: NEW_WALLET, description: "Rainy days", networks: WALLET_NETWORKS };
    // The client fills in the default `wallet_type`.
    const sent = { ...body, wallet_type: "virtual" };
    await pact
      .addInteraction()
      .given(STATE.acmeWithKey)
      .given(STATE.verifiedUser)
      .given(STATE.noNewWallet)
      .uponReceiving("a request to create a wallet")
      .withRequest("POST", `/api/v1/users/${VERIFIED_USER}/wallets`, (b) => b.headers(ownerKey).jsonBody(sent))
      .willRespondWith(201, (b) => b.jsonBody(ok(wallet(NEW_WALLET, "Rainy days", WALLET_NETWORKS))))
      .executeTest(async (mock) => {
        const created = await client(mock.url, { apiKey: EXAMPLE_OWNER_KEY }).createWallet(VERIFIED_USER, body);
        expect(created).toMatchObject({ user_id: VERIFIED_USER, name: NEW_WALLET, wallet_type: "virtual", is_active: true });
        expect(created.networks).toEqual(WALLET_NETWORKS);
        expect(created.addresses).toHaveLength(WALLET_NETWORKS.length);
      });
  });

  it("lists a user's wallets with a user token, with meta.pagination", async () => {
    const link = (skip: number) => regex(/^\/users\/[0-9a-f-]{36}\/wallets\?filter\[limit\]=10&filter\[skip\]=\d+$/, `/users/${VERIFIED_USER}/wallets?filter[limit]=10&filter[skip]=${skip}`);
    await pact
      .addInteraction()
      .given(STATE.acmeWithKey)
      .given(STATE.mainWallet)
      .given(STATE.userToken)
      .uponReceiving("a request to list a user's wallets with a user token")
      .withRequest("GET", `/api/v1/users/${VERIFIED_USER}/wallets`, (b) => b.headers(userBearer).query({ "filter[limit]": "10" }))
      .willRespondWith(200, (b) =>
        b.jsonBody({
          success: true,
          data: eachLike(wallet(like(MAIN_WALLET), like("Seeded by a provider state"), eachLike({ name: NETWORK("networks/bitcoin"), currency: CODE("btc") }))),
          meta: {
            ...meta(),
            pagination: {
              records: { skip: 0, limit: 10, has_previous: false, has_next: false, total: integer(1) },
              navigation: { first: link(0), last: link(0), previous: null, next: null },
            },
          },
        }),
      )
      .executeTest(async (mock) => {
        // Both credentials set: the user token must win (the interaction requires the Bearer header).
        const page = await client(mock.url, { apiKey: EXAMPLE_OWNER_KEY, userToken: EXAMPLE_USER_TOKEN }).listWallets(VERIFIED_USER, { "filter[limit]": 10 });
        expect(page.data[0]).toMatchObject({ user_id: VERIFIED_USER, name: MAIN_WALLET });
        expect(page.pagination.records).toMatchObject({ skip: 0, limit: 10, has_next: false });
      });
  });

  it("simulates a sandbox deposit, recorded as a done deposit transaction", async () => {
    await pact
      .addInteraction()
      .given(STATE.acmeWithKey)
      .given(STATE.spareWallet)
      .uponReceiving("a request to simulate a sandbox deposit")
      .withRequest("POST", "/api/v1/sandbox/deposits", (b) =>
        b.headers(ownerKey).jsonBody({
          wallet_id: stateWalletId(),
          network: "networks/bitcoin",
          currency: "btc",
          amount: 0.25,
        }),
      )
      .willRespondWith(201, (b) => b.jsonBody(ok(btcDeposit(0.25, number(0.25)))))
      .executeTest(async (mock) => {
        const deposit = await client(mock.url, { apiKey: EXAMPLE_OWNER_KEY }).createSandboxDeposit({
          wallet_id: EXAMPLE_WALLET,
          network: "networks/bitcoin",
          currency: "btc",
          amount: 0.25,
        });
        expect(deposit.transaction).toMatchObject({ action: "deposit", status: "done", currency: "btc", amount: 0.25 });
      });
  });

  it("reads a wallet's balances as 8-decimal strings", async () => {
    await pact
      .addInteraction()
      .given(STATE.acmeWithKey)
      .given(STATE.mainWallet)
      .uponReceiving("a request to read a wallet's balance")
      .withRequest("GET", walletPath("balance"), (b) => b.headers(ownerKey))
      .willRespondWith(200, (b) =>
        b.jsonBody(
          ok({
            wallet_id: uuid(EXAMPLE_WALLET),
            user_id: VERIFIED_USER,
            balance: eachLike({ currency: CODE("btc"), balance: EIGHT("0.50000000"), available: EIGHT("0.50000000"), held: EIGHT("0.00000000") }),
          }),
        ),
      )
      .executeTest(async (mock) => {
        const balance = await client(mock.url, { apiKey: EXAMPLE_OWNER_KEY }).getWalletBalance(EXAMPLE_WALLET);
        expect(balance.wallet_id).toBe(EXAMPLE_WALLET);
        expect(balance.balance[0]).toEqual({ currency: "btc", balance: "0.50000000", available: "0.50000000", held: "0.00000000" });
      });
  });

  it("lists a wallet's deposits, most recent first, with meta.pagination", async () => {
    // The links keep the filters (in the request's order, either here) and add the page.
    const link = regex(
      /^\/wallets\/[0-9a-f-]{36}\/transactions\?(filter\[(where\]\[type\]=deposit|sort\]=DESC)&){2}filter\[limit\]=20&filter\[skip\]=0$/,
      `/wallets/${EXAMPLE_WALLET}/transactions?filter[where][type]=deposit&filter[sort]=DESC&filter[limit]=20&filter[skip]=0`,
    );
    await pact
      .addInteraction()
      .given(STATE.acmeWithKey)
      .given(STATE.mainWallet)
      .uponReceiving("a request to list a wallet's deposits")
      .withRequest("GET", walletPath("transactions"), (b) =>
        b.headers(ownerKey).query({ "filter[where][type]": "deposit", "filter[sort]": "DESC" }),
      )
      .willRespondWith(200, (b) =>
        b.jsonBody({
          success: true,
          data: eachLike(btcDeposit(number(0.5), number(0.5))),
          meta: {
            ...meta(),
            pagination: {
              records: { skip: 0, limit: 20, has_previous: false, has_next: false, total: 1 },
              navigation: { first: link, last: link, previous: null, next: null },
            },
          },
        }),
      )
      .executeTest(async (mock) => {
        const page = await client(mock.url, { apiKey: EXAMPLE_OWNER_KEY }).listWalletTransactions(EXAMPLE_WALLET, {
          "filter[where][type]": "deposit",
          "filter[sort]": "DESC",
        });
        expect(page.data[0]?.transaction).toMatchObject({ action: "deposit", status: "done", currency: "btc" });
        expect(page.pagination.records.total).toBe(1);
      });
  });

  it("lists the supported currencies", async () => {
    await pact
      .addInteraction()
      .given(STATE.acmeWithKey)
      .uponReceiving("a request to list currencies")
      .withRequest("GET", "/api/v1/currencies", (b) => b.headers(ownerKey))
      .willRespondWith(200, (b) =>
        b.jsonBody(
          ok(
            eachLike({
              id: integer(1),
              symbol: regex(/^[A-Z0-9]+$/, "BTC"),
              name: like("Bitcoin"),
              code: CODE("btc"),
              currency: CODE("btc"),
              precision: integer(8),
              ascii_sign: like("₿"),
              can_deposit: boolean(true),
              can_withdraw: boolean(true),
              min_withdrawal: number(0.0001),
              is_fiat: boolean(false),
              is_confirmations_needed: boolean(true),
              is_custody_enabled: boolean(true),
              is_trading_enabled: boolean(true),
            }),
          ),
        ),
      )
      .executeTest(async (mock) => {
        const currencies = await client(mock.url, { apiKey: EXAMPLE_OWNER_KEY }).listCurrencies();
        expect(currencies[0]).toMatchObject({ code: "btc", currency: "btc", precision: 8, is_fiat: false });
      });
  });

  it("lists the trading pairs", async () => {
    await pact
      .addInteraction()
      .given(STATE.acmeWithKey)
      .uponReceiving("a request to list trading pairs")
      .withRequest("GET", "/api/v1/currencies/pairs", (b) => b.headers(ownerKey))
      .willRespondWith(200, (b) =>
        b.jsonBody(
          ok(eachLike({ formatted: regex(/^[A-Z0-9]+\/[A-Z0-9]+$/, "BTC/USDT"), symbol: regex(/^[A-Z0-9]+$/, "BTCUSDT"), base: CODE("btc"), quote: CODE("usdt") })),
        ),
      )
      .executeTest(async (mock) => {
        const pairs = await client(mock.url, { apiKey: EXAMPLE_OWNER_KEY }).listTradingPairs();
        expect(pairs[0]).toEqual({ formatted: "BTC/USDT", symbol: "BTCUSDT", base: "btc", quote: "usdt" });
      });
  });

  it("gets 404 WALLET_NOT_FOUND for an unknown wallet", async () => {
    await pact
      .addInteraction()
      .given(STATE.acmeWithKey)
      .given(STATE.unknownWallet)
      .uponReceiving("a request to read the balance of an unknown wallet")
      .withRequest("GET", `/api/v1/wallets/${UNKNOWN_WALLET}/balance`, (b) => b.headers(ownerKey))
      .willRespondWith(404, (b) => b.jsonBody(failure([{ code: "WALLET_NOT_FOUND", message: like(`Wallet '${UNKNOWN_WALLET}' not found.`) }])))
      .executeTest(async (mock) => {
        const error = await client(mock.url, { apiKey: EXAMPLE_OWNER_KEY }).getWalletBalance(UNKNOWN_WALLET).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(PlatformApiError);
        expect(error).toMatchObject({ status: 404, code: "WALLET_NOT_FOUND" });
      });
  });

  it("gets 400 WALLET_NAME_REQUIRED for an empty wallet name", async () => {
    const body: CreateWalletRequest = { name: "", networks: WALLET_NETWORKS, wallet_type: "virtual" };
    await pact
      .addInteraction()
      .given(STATE.acmeWithKey)
      .given(STATE.verifiedUser)
      .uponReceiving("a request to create a wallet without a name")
      .withRequest("POST", `/api/v1/users/${VERIFIED_USER}/wallets`, (b) => b.headers(ownerKey).jsonBody(body))
      .willRespondWith(400, (b) =>
        b.jsonBody(failure([{ code: "WALLET_NAME_REQUIRED", field: "name", message: like("The wallet name is required.") }])),
      )
      .executeTest(async (mock) => {
        const error = await client(mock.url, { apiKey: EXAMPLE_OWNER_KEY }).createWallet(VERIFIED_USER, body).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(PlatformApiError);
        expect(error).toMatchObject({ status: 400, code: "WALLET_NAME_REQUIRED", errors: [{ field: "name" }] });
      });
  });

  // ── Customer webhook and delivery log ──

  const hookPath = (suffix = "") => `/api/v1/customers/${HOOKED}/webhooks${suffix}`;
  const sessionClient = (url: string) => client(url, { sessionToken: EXAMPLE_SESSION });
  const WHSEC = regex(/^whsec_[A-Za-z0-9+/]{43}=$/, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8ZLXCwN4bYA=");
  const pinPayload = () => ({
    type: equal("withdrawal.pin"),
    timestamp: timestamp(),
    data: {
      withdrawal_id: uuid("0b9d6c1e-2f3a-4b5c-8d7e-6f5a4b3c2d1e"),
      user_id: uuid(VERIFIED_USER),
      customer_id: equal(HOOKED),
      code: regex(/^\d{4,8}$/, "482913"),
      expires_at: timestamp(),
    },
  });
  const delivery = (status: unknown) => ({
    delivery_id: uuid(EXAMPLE_DELIVERY),
    webhook_id: regex(/^msg_[A-Za-z0-9_-]{22}$/, "msg_2KWPBgLlAfxdpx2AI54pPJ"),
    event_type: equal("withdrawal.pin"),
    status,
    attempt_count: integer(1),
    attempts: eachLike({ attempted_at: timestamp(), http_status: integer(200), duration_ms: integer(12), error: null }),
    next_attempt_at: null,
    created_at: timestamp(),
    payload: pinPayload(),
  });

  it("registers a webhook and gets its signing secret once", async () => {
    const body = { url: HOOK_URL, headers: [{ key: "X-Initech-Source", value: "custody" }] };
    await pact
      .addInteraction()
      .given(STATE.operatorSession)
      .given(STATE.hookedCustomer)
      .uponReceiving("a request to register a webhook")
      .withRequest("POST", hookPath(), (b) => b.headers(bearer).jsonBody(body))
      .willRespondWith(201, (b) => b.jsonBody(ok({ message: like("Webhook registered."), url: HOOK_URL, signing_secret: WHSEC })))
      .executeTest(async (mock) => {
        const created = await sessionClient(mock.url).createWebhook(HOOKED, body);
        expect(created.url).toBe(HOOK_URL);
        expect(created.signing_secret).toMatch(/^whsec_/);
      });
  });

  it("gets 400 BAD_REQUEST for a header key with a space", async () => {
    const body = { url: HOOK_URL, headers: [{ key: "X Initech", value: "custody" }] };
    await pact
      .addInteraction()
      .given(STATE.operatorSession)
      .given(STATE.hookedCustomer)
      .uponReceiving("a request to register a webhook with an invalid header key")
      .withRequest("POST", hookPath(), (b) => b.headers(bearer).jsonBody(body))
      .willRespondWith(400, (b) => b.jsonBody(failure([{ code: "BAD_REQUEST", field: "headers.0.key", message: like("headers[0].key 'X Initech' may hold only letters, digits, '-' and '_'.") }])))
      .executeTest(async (mock) => {
        const error = await sessionClient(mock.url).createWebhook(HOOKED, body).catch((e: unknown) => e);
        expect(error).toMatchObject({ status: 400, code: "BAD_REQUEST" });
      });
  });

  it("reads the webhook with every header value masked", async () => {
    await pact
      .addInteraction()
      .given(STATE.operatorSession)
      .given(STATE.webhook)
      .uponReceiving("a request to read the webhook")
      .withRequest("GET", hookPath(), (b) => b.headers(bearer))
      .willRespondWith(200, (b) =>
        b.jsonBody(ok({ url: HOOK_URL, headers: eachLike({ key: like("X-Initech-Source"), value: equal("***masked***") }), enabled: true, disabled_reason: null })),
      )
      .executeTest(async (mock) => {
        const webhook = await sessionClient(mock.url).getWebhook(HOOKED);
        expect(webhook.headers.every((h) => h.value === "***masked***")).toBe(true);
      });
  });

  it("gets 404 WEBHOOK_NOT_FOUND for a customer without a webhook", async () => {
    await pact
      .addInteraction()
      .given(STATE.operatorSession)
      .given(STATE.unhooked)
      .uponReceiving("a request to read a webhook that is not configured")
      .withRequest("GET", `/api/v1/customers/${UNHOOKED}/webhooks`, (b) => b.headers(bearer))
      .willRespondWith(404, (b) => b.jsonBody(failure([{ code: "WEBHOOK_NOT_FOUND", message: like("Customer 'umbrella-co' has no webhook configured.") }])))
      .executeTest(async (mock) => {
        const error = await sessionClient(mock.url).getWebhook(UNHOOKED).catch((e: unknown) => e);
        expect(error).toMatchObject({ status: 404, code: "WEBHOOK_NOT_FOUND" });
      });
  });

  it("updates the webhook, keeping its secret", async () => {
    const body = { url: HOOK_URL };
    await pact
      .addInteraction()
      .given(STATE.operatorSession)
      .given(STATE.webhook)
      .uponReceiving("a request to update the webhook")
      .withRequest("PUT", hookPath(), (b) => b.headers(bearer).jsonBody(body))
      .willRespondWith(200, (b) => b.jsonBody(ok({ message: like("Webhook updated."), url: HOOK_URL })))
      .executeTest(async (mock) => {
        expect((await sessionClient(mock.url).updateWebhook(HOOKED, body)).url).toBe(HOOK_URL);
      });
  });

  it("verifies the webhook with a signed test payload", async () => {
    await pact
      .addInteraction()
      .given(STATE.operatorSession)
      .given(STATE.webhook)
      .uponReceiving("a request to verify the webhook")
      .withRequest("POST", hookPath("/verify"), (b) => b.headers(bearer))
      .willRespondWith(200, (b) =>
        b.jsonBody(
          ok({
            message: regex(/^Test notification delivered: .+$/, "Test notification delivered: the webhook answered HTTP 200."),
            payload: { type: equal("webhook.test"), timestamp: timestamp(), data: { customer_id: equal(HOOKED), message: like("Test notification from the custody platform.") } },
          }),
        ),
      )
      .executeTest(async (mock) => {
        const outcome = await sessionClient(mock.url).verifyWebhook(HOOKED);
        expect(outcome.message).toMatch(/delivered/);
      });
  });

  it("rotates the signing secret", async () => {
    await pact
      .addInteraction()
      .given(STATE.operatorSession)
      .given(STATE.webhook)
      .uponReceiving("a request to rotate the webhook signing secret")
      .withRequest("POST", hookPath("/secret"), (b) => b.headers(bearer))
      .willRespondWith(200, (b) => b.jsonBody(ok({ message: like("Signing secret rotated."), signing_secret: WHSEC, previous_secret_expires_at: timestamp() })))
      .executeTest(async (mock) => {
        expect((await sessionClient(mock.url).rotateWebhookSecret(HOOKED)).signing_secret).toMatch(/^whsec_/);
      });
  });

  it("lists the delivery log, newest first, with meta.pagination", async () => {
    await pact
      .addInteraction()
      .given(STATE.operatorSession)
      .given(STATE.delivered)
      .uponReceiving("a request to list webhook deliveries")
      .withRequest("GET", hookPath("/deliveries"), (b) => b.headers(bearer).query({ "filter[limit]": "10" }))
      .willRespondWith(200, (b) =>
        b.jsonBody({
          success: true,
          data: eachLike(delivery(regex(/^(pending|succeeded|failed|disabled)$/, "succeeded"))),
          meta: { ...meta(), pagination: like({ records: { skip: 0, has_next: false, has_previous: false, total: 1, limit: 10 }, navigation: { first: "/customers/initech-co/webhooks/deliveries?filter[limit]=10&filter[skip]=0", last: "/customers/initech-co/webhooks/deliveries?filter[limit]=10&filter[skip]=0", previous: null, next: null } }) },
        }),
      )
      .executeTest(async (mock) => {
        const page = await sessionClient(mock.url).listWebhookDeliveries(HOOKED, { "filter[limit]": 10 });
        expect(page.data[0]?.event_type).toBe("withdrawal.pin");
      });
  });

  it("retries a delivery now with the same webhook-id", async () => {
    await pact
      .addInteraction()
      .given(STATE.operatorSession)
      .given(STATE.delivered)
      .uponReceiving("a request to retry a webhook delivery")
      .withRequest("POST", fromState(`/api/v1/customers/${HOOKED}/webhooks/deliveries/\${deliveryId}/retry`, `^/api/v1/customers/${HOOKED}/webhooks/deliveries/${UUID_PATTERN}/retry$`, hookPath(`/deliveries/${EXAMPLE_DELIVERY}/retry`)), (b) => b.headers(bearer))
      .willRespondWith(200, (b) => b.jsonBody(ok({ ...delivery(equal("succeeded")), attempt_count: integer(2) })))
      .executeTest(async (mock) => {
        const retried = await sessionClient(mock.url).retryWebhookDelivery(HOOKED, EXAMPLE_DELIVERY);
        expect(retried.status).toBe("succeeded");
      });
  });

  it("deletes the webhook", async () => {
    await pact
      .addInteraction()
      .given(STATE.operatorSession)
      .given(STATE.webhook)
      .uponReceiving("a request to delete the webhook")
      .withRequest("DELETE", hookPath(), (b) => b.headers(bearer))
      .willRespondWith(204)
      .executeTest(async (mock) => {
        await expect(sessionClient(mock.url).deleteWebhook(HOOKED)).resolves.toBeUndefined();
      });
  });

  // ── Email poller ──

  const pollerPath = (suffix = "") => `/api/v1/customers/${HOOKED}/email/poller${suffix}`;
  const pollerBody = { imap: { ...IMAP_CLOSED, password: "mailbox-pass" }, description: "PIN mailbox" };
  const poller = () => ({
    poller_id: uuid(EXAMPLE_POLLER),
    customer_id: equal(HOOKED),
    email: like(`ops@${HOOKED}.example`),
    imap: { host: equal(IMAP_CLOSED.host), port: equal(IMAP_CLOSED.port), tls: equal(false), user: like(`ops@${HOOKED}.example`), password: equal("***masked***") },
    description: like("PIN mailbox"),
    enabled: boolean(true),
    created_at: timestamp(),
    updated_at: timestamp(),
  });
  // The seeded poller has polled once and failed (nothing listens on its port).
  const stats = () => ({
    last_polled_at: timestamp(),
    last_successful_poll_at: null,
    last_error_at: timestamp(),
    last_error: like("connection refused by 127.0.0.1:9"),
    total_emails_processed: integer(0),
    total_pins_extracted: integer(0),
  });
  const pollerIdPath = (action: string) =>
    fromState(`/api/v1/customers/${HOOKED}/email/poller/\${pollerId}/${action}`, `^/api/v1/customers/${HOOKED}/email/poller/${UUID_PATTERN}/${action}$`, pollerPath(`/${EXAMPLE_POLLER}/${action}`));

  it("configures the email poller, password masked", async () => {
    await pact
      .addInteraction()
      .given(STATE.operatorSession)
      .given(STATE.noPoller)
      .uponReceiving("a request to create the email poller")
      .withRequest("POST", pollerPath(), (b) => b.headers(bearer).jsonBody(pollerBody))
      .willRespondWith(201, (b) => b.jsonBody(ok({ ...poller(), enabled: equal(true) })))
      .executeTest(async (mock) => {
        const created = await sessionClient(mock.url).createEmailPoller(HOOKED, pollerBody);
        expect(created.imap.password).toBe("***masked***");
      });
  });

  it("gets 409 POLLER_ALREADY_EXISTS for a second poller", async () => {
    await pact
      .addInteraction()
      .given(STATE.operatorSession)
      .given(STATE.poller)
      .uponReceiving("a request to create a second email poller")
      .withRequest("POST", pollerPath(), (b) => b.headers(bearer).jsonBody(pollerBody))
      .willRespondWith(409, (b) => b.jsonBody(failure([{ code: "POLLER_ALREADY_EXISTS", message: like("Customer 'initech-co' already has an email poller; update it instead.") }])))
      .executeTest(async (mock) => {
        const error = await sessionClient(mock.url).createEmailPoller(HOOKED, pollerBody).catch((e: unknown) => e);
        expect(error).toMatchObject({ status: 409, code: "POLLER_ALREADY_EXISTS" });
      });
  });

  it("reads the email poller with its statistics", async () => {
    await pact
      .addInteraction()
      .given(STATE.operatorSession)
      .given(STATE.poller)
      .uponReceiving("a request to read the email poller")
      .withRequest("GET", pollerPath(), (b) => b.headers(bearer))
      .willRespondWith(200, (b) => b.jsonBody(ok({ ...poller(), ...stats() })))
      .executeTest(async (mock) => {
        const got = await sessionClient(mock.url).getEmailPoller(HOOKED);
        expect(got.total_pins_extracted).toBe(0);
        expect(got.last_error).toMatch(/refused/);
      });
  });

  it("updates the email poller", async () => {
    const body = { description: "PIN mailbox (primary)" };
    await pact
      .addInteraction()
      .given(STATE.operatorSession)
      .given(STATE.poller)
      .uponReceiving("a request to update the email poller")
      .withRequest("PUT", pollerPath(), (b) => b.headers(bearer).jsonBody(body))
      .willRespondWith(200, (b) => b.jsonBody(ok({ ...poller(), description: equal("PIN mailbox (primary)"), ...stats() })))
      .executeTest(async (mock) => {
        expect((await sessionClient(mock.url).updateEmailPoller(HOOKED, body)).description).toBe("PIN mailbox (primary)");
      });
  });

  it("gets 401 UNAUTHORIZED with the reason when the mailbox login fails", async () => {
    await pact
      .addInteraction()
      .given(STATE.operatorSession)
      .given(STATE.poller)
      .uponReceiving("a request to verify an unreachable mailbox")
      .withRequest("POST", pollerPath("/verify"), (b) => b.headers(bearer))
      .willRespondWith(401, (b) => b.jsonBody(failure([{ code: "UNAUTHORIZED", message: regex(/^Mailbox verification failed: .+$/, "Mailbox verification failed: connection refused by 127.0.0.1:9.") }])))
      .executeTest(async (mock) => {
        const error = await sessionClient(mock.url).verifyEmailPoller(HOOKED).catch((e: unknown) => e);
        expect(error).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
      });
  });

  it("disables and enables the email poller by its poller_id", async () => {
    for (const action of ["disable", "enable"] as const) {
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.poller)
        .uponReceiving(`a request to ${action} the email poller`)
        .withRequest("POST", pollerIdPath(action), (b) => b.headers(bearer))
        .willRespondWith(200, (b) => b.jsonBody(ok({ message: like(`Email poller ${action}d.`) })))
        .executeTest(async (mock) => {
          const c = sessionClient(mock.url);
          const answer = action === "disable" ? await c.disableEmailPoller(HOOKED, EXAMPLE_POLLER) : await c.enableEmailPoller(HOOKED, EXAMPLE_POLLER);
          expect(answer.message).toEqual(expect.any(String));
        });
    }
  });

  it("deletes the email poller", async () => {
    await pact
      .addInteraction()
      .given(STATE.operatorSession)
      .given(STATE.poller)
      .uponReceiving("a request to delete the email poller")
      .withRequest("DELETE", pollerPath(), (b) => b.headers(bearer))
      .willRespondWith(204)
      .executeTest(async (mock) => {
        await expect(sessionClient(mock.url).deleteEmailPoller(HOOKED)).resolves.toBeUndefined();
      });
  });
});

// ── Provider ──────────────────────────────────────────────────────────────────────────────────

describe(`provider ${PROVIDER} verifies the pact`, () => {
  let t: TestApp;
  let server: Server;
  let identity: IdentityService;
  let users: UserService;
  let wallets: WalletService;
  /** Credentials created by the provider states of the interaction being verified. */
  const live: { sessionToken?: string; ownerKey?: string; userToken?: string } = {};

  let receiver: Receiver;

  beforeAll(async () => {
    // Webhook targets are a real receiver on 127.0.0.1 (allowed only when private targets are).
    [t, receiver] = await Promise.all([startTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: "true" }), startReceiver(RECEIVER_PORT)]);
    server = t.express.listen(0, "127.0.0.1");
    await once(server, "listening");
    // Provider states seed data through the services the app itself runs.
    ({ identity, users, wallets } = t.services);
  });
  afterAll(async () => {
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
    await t?.dispose();
    await receiver?.close();
    if (!keepDir) rmSync(pactDir, { recursive: true, force: true });
  });

  const em = () => t.orm.em.fork();
  const isCode = (error: unknown, code: string) => error instanceof DomainError && error.code === code;

  async function ensureCustomer(customerId: string): Promise<void> {
    try {
      await identity.getActiveCustomer(em(), customerId);
    } catch (error) {
      if (!isCode(error, "CUSTOMER_NOT_FOUND")) throw error;
      await identity.createCustomer(em(), { customer_id: customerId, email: `ops@${customerId}.example`, entity_name: `${customerId} Inc` });
    }
  }

  let seeded = 0;
  /** Creates user `userId` (or a new one) of `customerId` unless it exists; answers its status. */
  async function ensureUser(customerId: string, userId?: string): Promise<string> {
    if (userId) {
      try {
        return (await users.get(em(), customerId, userId)).status;
      } catch (error) {
        if (!isCode(error, "USER_NOT_FOUND")) throw error;
      }
    }
    seeded += 1;
    const created = await users.create(em(), customerId, {
      ...(userId ? { user_id: userId } : {}),
      ...NEW_USER,
      first_name: "Seed",
      email: `seed-${seeded}@${customerId}.example`,
      phone_number: `202555${String(1000 + seeded)}`,
      individual: { ...NEW_USER.individual },
    });
    return created.status;
  }

  /** The wallets of {@link VERIFIED_USER} (none: empty, not the API's 404). */
  async function walletsOfUser(): Promise<{ wallet_id: string; name: string }[]> {
    return wallets.list(em(), ACME, VERIFIED_USER, { limit: 100, skip: 0 }).then(
      ({ items }) => items,
      (error: unknown) => (isCode(error, "WALLET_NOT_FOUND") ? [] : Promise.reject(error)),
    );
  }

  /** Makes {@link VERIFIED_USER} exist and be active, with wallet `name` (created unless it exists); answers its id. */
  async function ensureWallet(name: string): Promise<string> {
    await ensureCustomer(ACME);
    await ensureUser(ACME, VERIFIED_USER);
    await users.activate(em(), ACME, VERIFIED_USER);
    const found = (await walletsOfUser()).find((w) => w.name === name);
    if (found) return found.wallet_id;
    const created = await wallets.create(em(), ACME, VERIFIED_USER, {
      name,
      description: "Seeded by a provider state",
      networks: WALLET_NETWORKS,
      wallet_type: "virtual",
    });
    return created.wallet_id;
  }

  /** Customer {@link HOOKED} with an owner credential (its email is the poller's mailbox). */
  async function ensureHookedCustomer(): Promise<void> {
    await ensureCustomer(HOOKED);
    if ((await identity.listCredentials(em(), HOOKED)).length === 0) await identity.generateCredentials(em(), HOOKED);
  }

  let deliveryId: string | undefined;
  /**
   * A `withdrawal.pin` of {@link HOOKED} delivered to the receiver, made through the real flow: a
   * funded user's withdrawal writes it to the outbox and a delivery round sends it. Once per run.
   */
  async function ensureDelivery(): Promise<string> {
    await ensureHookedCustomer();
    await t.services.webhooks.put(em(), HOOKED, { url: HOOK_URL, headers: [{ key: "X-Initech-Source", value: "custody" }] }, "create");
    if (deliveryId) return deliveryId;
    const userId = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    await users.create(em(), HOOKED, { ...NEW_USER, user_id: userId, email: `pin@${HOOKED}.example`, phone_number: "2025550188", individual: { ...NEW_USER.individual } });
    await users.activate(em(), HOOKED, userId);
    const wallet = await wallets.create(em(), HOOKED, userId, { name: "PIN", networks: [{ name: "networks/bitcoin", currency: "btc" }], wallet_type: "virtual" });
    await wallets.sandboxDeposit(em(), HOOKED, { wallet_id: wallet.wallet_id, network: "networks/bitcoin", currency: "btc", amount: 0.5 });
    await t.services.withdrawals.initiate(em(), HOOKED, userId, { currency: "btc", amount: 0.01, address: BTC_DESTINATION });
    for (let i = 0; i < 100; i++) {
      await t.services.webhooks.deliverDue();
      const { items } = await t.services.webhooks.listDeliveries(em(), HOOKED, { limit: 1, skip: 0 }, "succeeded");
      if (items[0]) return (deliveryId = items[0].delivery_id);
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`state '${STATE.delivered}' cannot be set up: the notification was not delivered`);
  }

  const stateHandlers: Record<string, () => Promise<Record<string, string> | void>> = {
    [STATE.operatorSession]: async () => {
      live.sessionToken = (await identity.createSession(em(), { kind: "master" }, undefined)).token;
    },
    [STATE.noNewCustomer]: async () => {
      const exists = await identity.getActiveCustomer(em(), NEW_CUSTOMER).then(
        () => true,
        (error: unknown) => (isCode(error, "CUSTOMER_NOT_FOUND") ? false : Promise.reject(error)),
      );
      if (exists) throw new Error(`state '${STATE.noNewCustomer}' cannot be set up: it exists`);
    },
    [STATE.acme]: () => ensureCustomer(ACME),
    [STATE.acmeWithKey]: async () => {
      await ensureCustomer(ACME);
      live.ownerKey = (await identity.generateCredentials(em(), ACME)).customer_secret;
    },
    [STATE.verifiedUser]: async () => {
      await ensureUser(ACME, VERIFIED_USER);
      await users.activate(em(), ACME, VERIFIED_USER);
    },
    [STATE.pendingUser]: async () => {
      const status = await ensureUser(ACME, PENDING_USER);
      if (status !== "PENDING") throw new Error(`state '${STATE.pendingUser}' cannot be set up: the user is ${status}`);
    },
    [STATE.threeUsers]: async () => {
      while ((await users.list(em(), ACME, { limit: 1, skip: 0 }, {})).total < 3) await ensureUser(ACME);
    },
    [STATE.unknownUser]: async () => {
      const exists = await users.get(em(), ACME, UNKNOWN_USER).then(
        () => true,
        (error: unknown) => (isCode(error, "USER_NOT_FOUND") ? false : Promise.reject(error)),
      );
      if (exists) throw new Error(`state '${STATE.unknownUser}' cannot be set up: it exists`);
    },
    [STATE.userToken]: async () => {
      const { credential_id } = await identity.generateCredentials(em(), ACME);
      live.userToken = (await users.issueToken(em(), ACME, credential_id, VERIFIED_USER)).token;
    },
    [STATE.noNewWallet]: async () => {
      if ((await walletsOfUser()).some((w) => w.name === NEW_WALLET)) {
        throw new Error(`state '${STATE.noNewWallet}' cannot be set up: it exists`);
      }
    },
    [STATE.mainWallet]: async () => {
      const walletId = await ensureWallet(MAIN_WALLET);
      // Deposit once: the state may be set up for several interactions of one run.
      const btc = (await wallets.balance({ customerId: ACME }, walletId)).balance.find((b) => b.currency === "btc");
      if (btc?.balance === "0.00000000") {
        await wallets.sandboxDeposit(em(), ACME, { wallet_id: walletId, network: "networks/bitcoin", currency: "btc", amount: 0.5 });
      }
      return { walletId };
    },
    [STATE.spareWallet]: async () => ({ walletId: await ensureWallet(SPARE_WALLET) }),
    [STATE.hookedCustomer]: () => ensureHookedCustomer(),
    [STATE.webhook]: async () => {
      await ensureHookedCustomer();
      await t.services.webhooks.put(em(), HOOKED, { url: HOOK_URL, headers: [{ key: "X-Initech-Source", value: "custody" }] }, "create");
    },
    [STATE.delivered]: async () => ({ deliveryId: await ensureDelivery() }),
    [STATE.unhooked]: async () => {
      await ensureCustomer(UNHOOKED);
      await t.services.webhooks.delete(em(), UNHOOKED).catch((error: unknown) => (isCode(error, "WEBHOOK_NOT_FOUND") ? undefined : Promise.reject(error)));
    },
    [STATE.noPoller]: async () => {
      await ensureHookedCustomer();
      await t.services.pollers.delete(em(), HOOKED).catch((error: unknown) => (isCode(error, "POLLER_NOT_FOUND") ? undefined : Promise.reject(error)));
    },
    [STATE.poller]: async () => {
      await ensureHookedCustomer();
      const existing = await t.services.pollers.get(em(), HOOKED).catch((error: unknown) => (isCode(error, "POLLER_NOT_FOUND") ? undefined : Promise.reject(error)));
      const pollerId = existing?.poller_id ?? (await t.services.pollers.create(em(), HOOKED, { imap: { ...IMAP_CLOSED, password: "mailbox-pass" }, description: "PIN mailbox" })).poller_id;
      await t.services.pollers.poll(pollerId); // its statistics, deterministic: one failed poll
      return { pollerId };
    },
    [STATE.unknownWallet]: async () => {
      const exists = await wallets.balance({ customerId: ACME }, UNKNOWN_WALLET).then(
        () => true,
        (error: unknown) => (isCode(error, "WALLET_NOT_FOUND") ? false : Promise.reject(error)),
      );
      if (exists) throw new Error(`state '${STATE.unknownWallet}' cannot be set up: it exists`);
    },
  };

  /**
   * Pact's proxy only logs a state handler's error and answers 200, so the interaction would be
   * replayed against a state that was not set up: collect the errors and fail on them.
   */
  const failedStates: string[] = [];
  const guardedHandlers = Object.fromEntries(
    Object.entries(stateHandlers).map(([name, handler]) => [
      name,
      async () => {
        try {
          return await handler();
        } catch (error) {
          failedStates.push(`${name}: ${(error as Error).message}`);
          throw error;
        }
      },
    ]),
  );

  it("replays every interaction against the real app", { timeout: 120_000 }, async () => {
    expect(existsSync(pactFile), `${pactFile} was not written: the consumer tests failed`).toBe(true);
    const { port } = server.address() as AddressInfo;
    await new Verifier({
      provider: PROVIDER,
      providerBaseUrl: `http://127.0.0.1:${port}`,
      pactUrls: [pactFile],
      stateHandlers: guardedHandlers,
      // Example credentials of the pact → live ones of this run; a missing header stays missing.
      // The example bearer tells a user token from a session token.
      requestFilter: (req, _res, next) => {
        if (req.headers["x-master-api-key"] !== undefined) req.headers["x-master-api-key"] = TEST_MASTER_KEY;
        if (req.headers.authorization === `Bearer ${EXAMPLE_USER_TOKEN}`) {
          if (live.userToken) req.headers.authorization = `Bearer ${live.userToken}`;
        } else if (req.headers.authorization !== undefined && live.sessionToken) {
          req.headers.authorization = `Bearer ${live.sessionToken}`;
        }
        if (req.headers["x-api-key"] !== undefined && live.ownerKey) req.headers["x-api-key"] = live.ownerKey;
        next();
      },
      logLevel: "warn",
    }).verifyProvider();
    expect(failedStates, "provider states that could not be set up").toEqual([]);
  });
});

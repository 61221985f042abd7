/**
 * Shared setup of the platform pact (tests/contract/pact/pact.test.ts): the consumer and provider
 * names and where the pact file goes, the identifiers and example credentials the interactions
 * record, the provider states both halves name, and the response templates (Pact matchers) of the
 * resource groups (sessions-customers.ts, users.ts, wallets.ts, webhooks.ts, email-poller.ts,
 * transfers.ts, limits-addresses.ts, trading.ts).
 *
 * The pact file goes to a fresh temporary directory, removed by the provider half; set `PACT_DIR`
 * (for example `tests/contract/pact/pacts`, ignored by git) to keep it.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { MatchersV3, type PactV4 } from "@pact-foundation/pact";
import type { CreateUserRequest } from "../../../../generated/client/platform/types.gen.js";
import { freePort } from "../../../../src/db/embedded.js";

const {
  like,
  eachLike,
  regex,
  uuid,
  integer,
  number,
  boolean,
  equal,
  fromProviderState,
  iso8601DateTimeWithMillis,
} = MatchersV3;

export const CONSUMER = "platform-client";
export const PROVIDER = "custody-platform-api";
export const keepDir = process.env.PACT_DIR ? resolve(process.env.PACT_DIR) : undefined;
export const pactDir = keepDir ?? mkdtempSync(join(tmpdir(), "pact-"));
export const pactFile = join(pactDir, `${CONSUMER}-${PROVIDER}.json`);

/** Identifiers the interactions use; provider states create exactly these. */
export const ACME = "acme-corp";
export const NEW_CUSTOMER = "globex-corp";
export const VERIFIED_USER = "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f";
export const PENDING_USER = "0b7e4f2a-9c3d-4e5f-a617-2b3c4d5e6f70";
export const UNKNOWN_USER = "5d6e7f80-1a2b-4c3d-9e4f-000000000000";
export const UNKNOWN_WALLET = "9e8d7c6b-5a49-4838-a726-000000000000";
/** Example wallet id of the pact; on the provider side the wallet states supply the live one. */
export const EXAMPLE_WALLET = "2c9d7e1f-3a4b-4c5d-8e6f-7a8b9c0d1e2f";
/** Wallet names the provider states create, and the one Create Wallet uses. */
export const MAIN_WALLET = "Main";
export const SPARE_WALLET = "Spare";
export const NEW_WALLET = "Savings";
/** The wallet of {@link VERIFIED_USER} that trades (its own, so that trades never show in the other wallets' interactions). */
export const TRADING_WALLET = "Trading";

/** The customer whose webhook and poller the interactions manage, and one without either. */
export const HOOKED = "initech-co";
export const UNHOOKED = "umbrella-co";
/** Where the webhook points: a real receiver the provider side starts on this port (both halves run in one test file). */
export const RECEIVER_PORT = await freePort();
export const HOOK_URL = `http://127.0.0.1:${RECEIVER_PORT}/pins`;
/** An IMAP address nothing listens on: Verify Email Poller answers 401 there. */
export const IMAP_CLOSED = { host: "127.0.0.1", port: 9, tls: false };
/** The recipient of the transfers (a VERIFIED user of {@link ACME}) and the name of its wallet holding btc. */
export const RECIPIENT_USER = "3b4c5d6e-7f80-4a1b-9c2d-3e4f5a6b7c8d";
export const RECIPIENT_WALLET = "Inbox";
/** Example ids of the pact; on the provider side the transfer and allowlist states supply the live ones. */
export const EXAMPLE_TO_WALLET = "7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a";
export const EXAMPLE_TRANSFER = "b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e";
export const UNKNOWN_TRANSFER = "c4d5e6f7-a8b9-4c0d-8e1f-000000000000";
export const EXAMPLE_ADDRESS = "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f";
/** Allowlist destinations of {@link VERIFIED_USER} (valid bitcoin testnet addresses, BIP 173 test vectors). */
export const COLD_ADDRESS = { currency: "btc", address: "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", label: "Cold storage" };
export const OLD_ADDRESS = { currency: "btc", address: "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7", label: "Old exchange" };
/** Example ids of the trading interactions; on the provider side the trading states supply the live ones. */
export const EXAMPLE_QUOTE = "3e4f5a6b-7c8d-4e9f-8a0b-1c2d3e4f5a6b";
export const EXAMPLE_ORDER = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d";
export const UNKNOWN_QUOTE = "d5e6f7a8-b9c0-4d1e-8f2a-000000000000";
export const EXAMPLE_DELIVERY = "3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a9f";
export const EXAMPLE_POLLER = "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d";

/** Example credentials recorded in the pact; the provider side replaces them with live ones. */
export const EXAMPLE_MASTER_KEY = "mk_example_master_key_0123456789abcdefghij";
export const EXAMPLE_SESSION = "eyJhbGciOiJIUzI1NiJ9.eyJraW5kIjoic2Vzc2lvbiJ9.c2lnbmF0dXJl";
export const EXAMPLE_OWNER_KEY = "sk_EXAMPLEexampleEXAMPLEexampleEXAMPLEexample0";
export const EXAMPLE_USER_TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJraW5kIjoidXNlciJ9.dXNlcnNpZ25hdHVyZQ";

/** Provider states, shared by both halves. */
export const STATE = {
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
  acmeSession: `a session of customer ${ACME} is open`,
  acmeDefaultLimits: `customer ${ACME} has set no limits of its own`,
  recipientWallet: `user ${RECIPIENT_USER} is VERIFIED and has wallet '${RECIPIENT_WALLET}' holding btc`,
  transferred: `0.1 btc was transferred from wallet '${MAIN_WALLET}' to wallet '${RECIPIENT_WALLET}'`,
  unknownTransfer: `transfer ${UNKNOWN_TRANSFER} does not exist`,
  noColdAddress: `user ${VERIFIED_USER} has no allowlist address '${COLD_ADDRESS.label}'`,
  coldAddress: `user ${VERIFIED_USER} has allowlist address '${COLD_ADDRESS.label}'`,
  oldAddress: `user ${VERIFIED_USER} has allowlist address '${OLD_ADDRESS.label}'`,
  tradingWallet: `user ${VERIFIED_USER} has wallet '${TRADING_WALLET}' holding btc and at least 1000 usdt, BTCUSDT at the sandbox's default mid`,
  liveQuote: `user ${VERIFIED_USER} has a live quote to buy 0.01 btc on wallet '${TRADING_WALLET}'`,
  executedOrder: `user ${VERIFIED_USER} has an order that executed its quote`,
  unknownQuote: `quote ${UNKNOWN_QUOTE} does not exist`,
} as const;

// ── Response templates ────────────────────────────────────────────────────────────────────────

export const timestamp = () => iso8601DateTimeWithMillis("2026-01-15T10:30:00.000Z");
export const meta = () => ({ timestamp: timestamp(), version: "v1", trace_id: like("3f0c9a6e-2b1d-4c5e-8f7a-1b2c3d4e5f60") });
export const ok = (data: unknown) => ({ success: true, data, meta: meta() });
export const failure = (errors: unknown) => ({ success: false, errors, meta: meta() });
export const COUNTRY = (example: string) => regex(/^[A-Z]{2}$/, example);

/** The `individual` object of a user. */
export const individual = () => ({
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
export const user = (userId: string, lifecycle: { status: unknown; verification_status: unknown; is_active: unknown }) => ({
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

export const VERIFIED = { status: "VERIFIED", verification_status: "verified", is_active: true };
export const PENDING = { status: "PENDING", verification_status: "pending", is_active: false };
export const ANY_LIFECYCLE = {
  status: regex(/^(PENDING|VERIFIED|SUSPENDED)$/, "VERIFIED"),
  verification_status: regex(/^(verified|unverified|pending)$/, "verified"),
  is_active: boolean(true),
};

/** The Create User body the consumer sends. */
export const NEW_USER: CreateUserRequest = {
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

export const bearer = { authorization: regex(/^Bearer [A-Za-z0-9._~+/=-]+$/, `Bearer ${EXAMPLE_SESSION}`) };
export const ownerKey = { "x-api-key": regex(/^sk_[A-Za-z0-9_-]+$/, EXAMPLE_OWNER_KEY) };
export const userBearer = { authorization: regex(/^Bearer [A-Za-z0-9._~+/=-]+$/, `Bearer ${EXAMPLE_USER_TOKEN}`) };

// ── Wallet templates ──────────────────────────────────────────────────────────────────────────

export const NETWORK = (example: string) => regex(/^networks\/[a-z0-9-]+$/, example);
export const CODE = (example: string) => regex(/^[a-z0-9]+$/, example);
/** An 8-decimal amount string of a balance. */
export const EIGHT = (example: string) => regex(/^\d+\.\d{8}$/, example);
export const UUID_PATTERN = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

/**
 * `fromProviderState` with a regex instead of its type match: the consumer side matches `regex` and
 * uses `example`; the provider side injects `expression` (here `${walletId}`, which the wallet
 * states answer) through a ProviderState generator.
 */
export const fromState = (expression: string, pattern: string, example: string) => ({
  ...fromProviderState(expression, example),
  "pact:matcher:type": "regex",
  regex: pattern,
});
/** Path `/api/v1/wallets/{walletId}/<suffix>`, the wallet id coming from the provider state. */
export const walletPath = (suffix: string) =>
  fromState(`/api/v1/wallets/\${walletId}/${suffix}`, `^/api/v1/wallets/${UUID_PATTERN}/${suffix}$`, `/api/v1/wallets/${EXAMPLE_WALLET}/${suffix}`);
/** The wallet id of the provider state, in a body. */
export const stateWalletId = () => fromState("${walletId}", `^${UUID_PATTERN}$`, EXAMPLE_WALLET);

/** The networks every created wallet of the pact holds, in this order. */
export const WALLET_NETWORKS = [
  { name: "networks/bitcoin", currency: "btc" },
  { name: "networks/ethereum", currency: "usdt" },
];

/**
 * A `virtual`, active wallet of {@link VERIFIED_USER}; the addresses (at least two: one per network) are
 * shapes only. `equal` keeps the pinned values exact inside an `eachLike`, which otherwise matches
 * its items by type.
 */
export const wallet = (name: unknown, description: unknown, networks: unknown) => ({
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
export const btcDeposit = (amount: unknown, balanceAfter: unknown) => ({
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


/** What a consumer case uses of the pact: it adds its interactions (one or more) and runs each against Pact's mock server. */
export type ConsumerPact = Pick<PactV4, "addInteraction">;

/**
 * One consumer test of the platform pact; tests/contract/pact/pact.test.ts runs the cases of every
 * resource group as `it(title, () => run(pact))`, in table order, before the provider half.
 */
export interface ConsumerCase {
  title: string;
  run: (pact: ConsumerPact) => Promise<unknown>;
}

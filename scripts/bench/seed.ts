/**
 * Seeds the benchmark's data through the service's real API, as docs/walkthrough.md does:
 * operator session (master key), customer, owner credential, users (created, activated: VERIFIED),
 * a user token each, a wallet each (bitcoin/btc and ethereum/usdt) with a confirmed sandbox deposit
 * of {@link DEPOSIT_BTC} BTC, and a few credit products of the customer (master key).
 *
 * User 0 serves the read scenarios; the withdrawal lanes use users 0…n-1, one user per lane, so
 * that parallel withdrawals are not all serialised on one user's advisory lock and one wallet's
 * ledger rows (docs/decisions/withdrawals.md "Initiate": initiates of one user and currency are serialised).
 * The transfer lanes use pairs of further users of the same customer (a bitcoin/btc wallet each,
 * {@link DEPOSIT_BTC} BTC deposited), one pair per lane, so that parallel transfers share no
 * advisory lock and no ledger row (docs/decisions/limits-and-allowlist.md "Transfers").
 */
import { goldenProductBody } from "../../tests/support/credit-golden.js";
import { userBody } from "../../tests/support/user-body.js";

/** BTC deposited into each seeded wallet: enough for thousands of withdrawals of {@link WITHDRAWAL_BTC}. */
export const DEPOSIT_BTC = 1;
/** Amount of each benchmark withdrawal (the sandbox minimum for btc; the default caps allow 5 BTC a day per user). */
export const WITHDRAWAL_BTC = "0.0001";
/** Amount of each benchmark transfer, BTC: a pair's lane sends it back and forth, so the balances stay near {@link DEPOSIT_BTC}. */
export const TRANSFER_BTC = "0.0001";
/** A bitcoin testnet address the sandbox accepts (docs/walkthrough.md "From the master key to a confirmed withdrawal", step 10). */
export const WITHDRAWAL_ADDRESS = "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl";
/** The seeded customer. */
export const CUSTOMER_ID = "bench-corp";

/** One seeded user with its wallet and token. */
export interface SeededUser {
  userId: string;
  email: string;
  walletId: string;
  token: string;
}

/** Two seeded users of one customer, each with a btc wallet, between whom one transfer lane moves money. */
export interface TransferPair {
  a: SeededUser;
  b: SeededUser;
}

/** What the scenarios need. */
export interface Seed {
  customerId: string;
  /** The owner credential's secret (x-api-key). */
  ownerKey: string;
  users: SeededUser[];
  /** The transfer lanes' pairs (none unless asked for). */
  transferPairs: TransferPair[];
  /** Codes of the seeded credit products. */
  productCodes: string[];
}

/** A failed seeding call: the method, path, status and body. */
export class SeedError extends Error {}

/** Calls the API and returns `data` of the envelope (the bench's seeding and the hostile rows' setup). @throws SeedError on a non-2xx answer. */
export async function call<T>(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined && { "content-type": "application/json" }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new SeedError(`seeding: ${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
  return (JSON.parse(text) as { data: T }).data;
}

/** The golden product's settings (docs/decisions/credit.md "The golden vector"; tests/support/credit-golden.ts), with another code. */
const product = (customerId: string, code: string) => goldenProductBody(customerId, { creditProductCode: code });

/**
 * User number `i` of the customer (distinct email, phone number and id number), VERIFIED, with a
 * user token and one wallet `Main` holding {@link DEPOSIT_BTC} BTC on bitcoin, and 250 USDT on
 * ethereum when `usdt`; `v1` is the API's base, `owner` the owner key's header.
 */
async function seedUser(v1: string, owner: Record<string, string>, i: number, email: string, usdt: boolean): Promise<SeededUser> {
  const user = await call<{ user_id: string }>(
    v1,
    "POST",
    "/users",
    owner,
    userBody(
      { last_name: `Doe${String.fromCharCode(65 + (i % 26))}`, email, phone_number: `2025550${String(i).padStart(3, "0")}` },
      { id_number: `123-45-${String(6000 + i)}` },
    ),
  );
  await call(v1, "POST", `/users/${user.user_id}/activate`, owner);
  const token = await call<{ token: string }>(v1, "POST", `/users/${user.user_id}/token`, owner);
  const networks = [{ name: "networks/bitcoin", currency: "btc" }, ...(usdt ? [{ name: "networks/ethereum", currency: "usdt" }] : [])];
  const wallet = await call<{ wallet_id: string }>(v1, "POST", `/users/${user.user_id}/wallets`, owner, { name: "Main", networks });
  await call(v1, "POST", "/sandbox/deposits", owner, { wallet_id: wallet.wallet_id, network: "networks/bitcoin", currency: "btc", amount: DEPOSIT_BTC });
  if (usdt) await call(v1, "POST", "/sandbox/deposits", owner, { wallet_id: wallet.wallet_id, network: "networks/ethereum", currency: "usdt", amount: 250 });
  return { userId: user.user_id, email, walletId: wallet.wallet_id, token: token.token };
}

/**
 * Seeds `users` users (at least 1), `transferPairs` pairs of further users (default none) and
 * `products` credit products on the service at `base` (`http://127.0.0.1:<port>`), with the
 * master key `masterKey`.
 * @throws SeedError naming the call that failed.
 */
export async function seed(base: string, masterKey: string, options: { users: number; products: number; transferPairs?: number }): Promise<Seed> {
  const v1 = `${base}/api/v1`;
  const session = await call<{ token: string }>(v1, "POST", "/sessions", { "x-master-api-key": masterKey });
  const op = { authorization: `Bearer ${session.token}` };
  await call(v1, "POST", "/customers", op, { customer_id: CUSTOMER_ID, email: "ops@bench.example", entity_name: "Bench Corp" });
  const credential = await call<{ customer_secret: string }>(v1, "POST", `/customers/${CUSTOMER_ID}/credentials`, op);
  const owner = { "x-api-key": credential.customer_secret };

  const users: SeededUser[] = [];
  for (let i = 0; i < options.users; i++) users.push(await seedUser(v1, owner, i, `user${i}@bench.example`, true));
  const transferPairs: TransferPair[] = [];
  for (let lane = 0; lane < (options.transferPairs ?? 0); lane++) {
    const i = options.users + 2 * lane;
    const a = await seedUser(v1, owner, i, `pair${lane}a@bench.example`, false);
    const b = await seedUser(v1, owner, i + 1, `pair${lane}b@bench.example`, false);
    transferPairs.push({ a, b });
  }

  const productCodes: string[] = [];
  for (let i = 0; i < options.products; i++) {
    const code = String(i + 1).padStart(3, "0");
    await call(`${base}/v2`, "POST", "/credit-products", { "x-api-key": masterKey }, product(CUSTOMER_ID, code));
    productCodes.push(code);
  }
  return { customerId: CUSTOMER_ID, ownerKey: credential.customer_secret, users, transferPairs, productCodes };
}

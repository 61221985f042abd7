/**
 * The physical baselines of `npm run bench` (scripts/bench.ts): bare `node:http` with a raw
 * `pg.Pool` of 10 connections (the size of the service's ORM pool) on the benchmark's database,
 * answering the benchmark's requests on the service's paths with the service's bodies.
 * scripts/bench/baseline-server.ts runs it as a child process (same Node); scripts/bench/capture-sql.ts
 * runs it in-process to compare its statements with the service's.
 *
 * Keys: the keyed hash and the token key are derived from the service's `SECRETS_KEY` as SecretBox
 * does (src/modules/identity/secrets.ts: HKDF-SHA256, salt `platform`, info `keyed-hash/v1` and
 * `token-signing/v1`; `KeyObject`s), so the service's API keys and user tokens work here.
 *
 * Read routes: only what each operation physically needs (one HMAC of the key or one JWT check,
 * the fewest queries, as named prepared statements, JSON out):
 * - `GET /healthz` → `{"status":"ok"}`.
 * - `GET /api/v1/currencies` without credentials → the service's 401 body (framework cost alone:
 *   no query). With `x-api-key`: HMAC-SHA256 of the key, ONE query {@link OWNER_SQL} (credential
 *   active + customer active), then the currencies `data` the benchmark captured from the service.
 * - `GET /api/v1/wallets/:id/balance` with `x-api-key`: {@link OWNER_SQL}, then {@link BALANCE_SQL}
 *   (the customer's wallet joined to its ledger accounts, summed and printed with 8 decimals by
 *   PostgreSQL). With `Authorization: Bearer <user token>`: jose `jwtVerify` (HS256), ONE query
 *   {@link USER_TOKEN_SQL} (user live, active, VERIFIED, token not revoked; credential active;
 *   customer active), then {@link USER_BALANCE_SQL} (the same, limited to the token's user).
 * - `GET /v2/credit-products` with `x-api-key`: {@link OWNER_SQL}, then {@link PRODUCTS_SQL} (the
 *   page and the total in one query, `count(*) over ()`).
 *
 * Withdrawal and transfer routes: NOT a minimum but the very statements the service runs (main of
 * 2026-11-26: authentication as named prepared statements, external ledger accounts append-only,
 * the caps of the limits service, the withdrawals module's own bound statements, the rest MikroORM 7.2's), in the same order and
 * transactions, with bound parameters where MikroORM inlines literals (scripts/bench/baseline-sql.ts; check them
 * against the service with `npx tsx scripts/bench/capture-sql.ts`, which compares both):
 * - `POST /api/v1/users/:user/accounts/crypto/withdrawals` (user token): jwtVerify; `identity_user_token`
 *   (credential, customer and user in one prepared statement); the idempotency key's row; the
 *   user (active user); the customer's limits row (allowlist policy); BEGIN; INSERT of the key row
 *   (`on conflict do nothing`); advisory lock of kind + user + currency; the customer's limits row
 *   (caps); the caps' sums of the day and month; the user's wallets with their balances of the
 *   currency (one statement); INSERT withdrawal and its outbox_email (one statement); SELECT … FOR
 *   UPDATE of the available and held accounts by code; one statement writing the journal entry,
 *   its two postings and both cached balances; the customer's webhook; COMMIT.
 * - `GET /api/v1/sandbox/mail?to=` (owner key): `identity_credential_by_hash`; the service's outbox
 *   query (`lower("to")` equality, newest first, limit 100) → the same JSON list.
 * - `POST …/withdrawals/:id/confirm` (user token): jwtVerify; `identity_user_token`; the user (active
 *   user); BEGIN; the withdrawal FOR UPDATE with its wallet's vault and address (one statement); one
 *   statement locking the held account and reading the external and available ones; one statement
 *   writing the entry, its two postings and the held balance; UPDATE withdrawal and INSERT
 *   wallet_transaction (one statement); COMMIT.
 * - `POST /api/v1/transfers` (user token): scripts/bench/baseline-transfers.ts lists its statements.
 * What the service does beyond these routes: request validation against the OpenAPI document,
 * the comparison of every `x-api-key` with the master key's hash, the destination address decoding
 * (bech32, twice: initiate and the sandbox's send), the amount and precision checks beyond the
 * minimum, express and its middleware (trace ids, JSON body, NUL and depth checks, the request
 * observer and prom-client), the ORM's transactions and its statements beyond the withdrawals module's own.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createHash, createHmac, createSecretKey, hkdfSync, randomBytes, randomInt, randomUUID, timingSafeEqual } from "node:crypto";
import pg from "pg";
import { jwtVerify } from "jose";
import type { Decimal } from "decimal.js";
import { D, first, MISSING, ok, readJson, refuse, Refusal } from "./baseline-http.js";
import { accountsValues, assertCaps, entryValues, KEY_CALLER, SQL, type CapSet, type LimitsRow } from "./baseline-sql.js";
import { transferRoute } from "./baseline-transfers.js";
import { BENCH_TRANSFER_CAPS } from "./processes.js";

/** What a baseline needs: the benchmark's database, the service's secrets key, the service's currencies `data`. */
export interface BaselineOptions {
  databaseUrl: string;
  secretsKey: string;
  /** The `data` of the service's `GET /api/v1/currencies`, as JSON text. */
  currenciesJson: string;
}

/** A built baseline: its request listener and its pool (end it to stop). */
export interface Baseline {
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  pool: pg.Pool;
}

/** Credential active and customer active, by the keyed hash of the API key. */
export const OWNER_SQL = `select c.customer_id from credential c join customer k on k.customer_id = c.customer_id
  where c.secret_hash = $1 and c.is_active and k.is_active`;
/** User live, active and VERIFIED, token of the user's current token version; its credential and customer active. */
export const USER_TOKEN_SQL = `select 1 from app_user u
  join credential c on c.credential_id = $2 and c.customer_id = u.customer_id and c.is_active
  join customer k on k.customer_id = u.customer_id and k.is_active
  where u.user_id = $1 and u.customer_id = $3 and u.deleted_at is null and u.is_active and u.status = 'VERIFIED'
    and u.token_version = $4`;
/** The customer's wallet's balances per currency (available, held, their sum), 8 decimals. */
export const BALANCE_SQL = `select w.user_id, w.status, w.status_reason, a.currency,
    round(coalesce(sum(a.balance) filter (where a.bucket = 'available'), 0), 8)::text as available,
    round(coalesce(sum(a.balance) filter (where a.bucket = 'held'), 0), 8)::text as held,
    round(coalesce(sum(a.balance), 0), 8)::text as balance
  from wallet w left join ledger_account a on a.wallet_id = w.wallet_id
  where w.wallet_id = $1 and w.customer_id = $2
  group by w.user_id, w.status, w.status_reason, a.currency order by a.currency`;
/** {@link BALANCE_SQL} of a wallet of the user `$3` only (a user token). */
export const USER_BALANCE_SQL = BALANCE_SQL.replace("w.customer_id = $2", "w.customer_id = $2 and w.user_id = $3");
/** One page of the tenant's credit products and their total. */
export const PRODUCTS_SQL = `select code, customer_id, revolving, compound, cut_frequency, fixed_interest_amount, base_interest_rate,
    base_minimum_payment_rate, fixed_minimum_payment_amount, capital_interest_split, grace_period, variable_specs, morosidad_rate,
    base_interest_morosidad, interest_accrual_method, daily_rate_divisor, created_at, updated_at, count(*) over () as total
  from credit_product where customer_id = $1 order by code limit $2 offset $3`;

/** The btc entry of the sandbox catalogue the withdrawal routes need (src/providers/sandbox-catalogue.ts), its default caps, the code settings. */
const BTC: { code: string; minWithdrawal: string; networks: string[]; cap: CapSet } = {
  code: "btc",
  minWithdrawal: "0.0001",
  networks: ["networks/bitcoin"],
  cap: { perTransaction: "2", daily: "5", monthly: "20" },
};
const CODE_TTL_S = 600;
const MAX_ATTEMPTS = 5;

const HEALTH = '{"status":"ok"}';
const WITHDRAWALS = /^\/api\/v1\/users\/([^/]+)\/accounts\/crypto\/withdrawals(?:\/([^/]+)\/confirm)?$/;
const BALANCE = /^\/api\/v1\/wallets\/([^/]+)\/balance$/;

interface UserClaims {
  userId: string;
  customerId: string;
  credentialId: string;
  /** The token's version (0 when it carries none), as src/modules/identity/auth.ts reads it. */
  tokenVersion: number;
}

interface ProductRow {
  code: string;
  customer_id: string;
  revolving: boolean;
  compound: boolean;
  cut_frequency: string;
  fixed_interest_amount: string;
  base_interest_rate: string;
  base_minimum_payment_rate: string;
  fixed_minimum_payment_amount: string;
  capital_interest_split: string;
  grace_period: number;
  variable_specs: boolean;
  morosidad_rate: string;
  base_interest_morosidad: string;
  interest_accrual_method: string;
  daily_rate_divisor: number;
  created_at: Date;
  updated_at: Date;
  total: string;
}

interface UserRow {
  user_id: string;
  email: string;
  first_name: string;
  deleted: boolean;
  good_standing: boolean;
}

interface WithdrawalRow {
  id: string;
  customer_id: string;
  wallet_id: string;
  network: string;
  currency: string;
  amount: string;
  address: string;
  memo: string | null;
  status: string;
  code_hash: string | null;
  code_expires_at: Date;
  code_attempts: number;
  code_failures_total: number;
  code_resends: number;
  code_issued_at: Date;
  cancel_reason: string | null;
  cancelled_at: Date | null;
  idempotency_key: string;
  source_vault_wallet_id: string | null;
  source_address: string | null;
}

/** Builds the baseline on its own pool of 10 connections. */
export function createBaseline(options: BaselineOptions): Baseline {
  const ikm = Buffer.from(options.secretsKey, "utf8");
  const hashKey = createSecretKey(Buffer.from(hkdfSync("sha256", ikm, "platform", "keyed-hash/v1", 32)));
  const signKey = createSecretKey(Buffer.from(hkdfSync("sha256", ikm, "platform", "token-signing/v1", 32)));
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
  const keyedHash = (secret: string): string => createHmac("sha256", hashKey).update(secret, "utf8").digest("hex");

  /** The customer of an active owner key (one query). @throws Refusal 401. */
  async function ownerCustomer(req: IncomingMessage): Promise<string> {
    const key = first(req.headers["x-api-key"]);
    if (key === undefined) throw new Refusal(401, "UNAUTHORIZED", MISSING);
    const { rows } = await pool.query<{ customer_id: string }>({ name: "owner", text: OWNER_SQL, values: [keyedHash(key)] });
    if (!rows[0]) throw new Refusal(401, "UNAUTHORIZED", "Invalid API key.");
    return rows[0].customer_id;
  }

  /** The verified claims of a user token. @throws Refusal 401. */
  async function userClaims(req: IncomingMessage): Promise<UserClaims> {
    const match = /^bearer +([A-Za-z0-9._~+/=-]+)$/i.exec(first(req.headers.authorization) ?? "");
    if (!match?.[1]) throw new Refusal(401, "UNAUTHORIZED", MISSING);
    try {
      const { payload } = await jwtVerify(match[1], signKey, { algorithms: ["HS256"] });
      if (payload.kind !== "user" || typeof payload.iat !== "number") throw new Error("not a user token");
      const tokenVersion = payload.tokenVersion ?? 0;
      if (typeof tokenVersion !== "number" || !Number.isSafeInteger(tokenVersion)) throw new Error("not a user token");
      return { userId: String(payload.userId), customerId: String(payload.customerId), credentialId: String(payload.credentialId), tokenVersion };
    } catch {
      throw new Refusal(401, "UNAUTHORIZED", "Invalid token.");
    }
  }

  async function balance(req: IncomingMessage, res: ServerResponse, walletId: string, traceId: string): Promise<void> {
    let customerId: string;
    let userId: string | null = null;
    if (req.headers.authorization !== undefined) {
      const claims = await userClaims(req);
      const { rowCount } = await pool.query({ name: "user_token", text: USER_TOKEN_SQL, values: [claims.userId, claims.credentialId, claims.customerId, claims.tokenVersion] });
      if (!rowCount) throw new Refusal(401, "UNAUTHORIZED", "The token's user, credential or customer is not active.");
      customerId = claims.customerId;
      userId = claims.userId;
    } else {
      customerId = await ownerCustomer(req);
    }
    const { rows } = await pool.query<{ user_id: string; status: string; status_reason: string | null; currency: string | null; available: string; held: string; balance: string }>(
      userId === null
        ? { name: "balance", text: BALANCE_SQL, values: [walletId, customerId] }
        : { name: "user_balance", text: USER_BALANCE_SQL, values: [walletId, customerId, userId] },
    );
    if (!rows[0]) throw new Refusal(404, "WALLET_NOT_FOUND", "Wallet not found.");
    const items = rows.filter((r) => r.currency !== null).map((r) => ({ currency: r.currency, balance: r.balance, available: r.available, held: r.held }));
    ok(res, 200, JSON.stringify({ wallet_id: walletId, user_id: rows[0].user_id, status: rows[0].status, status_reason: rows[0].status_reason, balance: items }), traceId);
  }

  async function creditProducts(req: IncomingMessage, res: ServerResponse, query: URLSearchParams, traceId: string): Promise<void> {
    const customerId = await ownerCustomer(req);
    const limit = Number(query.get("limit") ?? 20);
    const offset = Number(query.get("offset") ?? 0);
    const { rows } = await pool.query<ProductRow>({ name: "products", text: PRODUCTS_SQL, values: [customerId, limit, offset] });
    const items = rows.map((r) => ({
      creditProductCode: r.code,
      customerId: r.customer_id,
      revolving: r.revolving,
      compound: r.compound,
      cutFrequency: r.cut_frequency,
      fixedInterestAmount: Number(r.fixed_interest_amount),
      baseInterestRate: Number(r.base_interest_rate),
      baseMinimumPaymentRate: Number(r.base_minimum_payment_rate),
      fixedMinimumPaymentAmount: Number(r.fixed_minimum_payment_amount),
      capitalInterestSplit: Number(r.capital_interest_split),
      gracePeriod: r.grace_period,
      variableSpecs: r.variable_specs,
      morosidadRate: Number(r.morosidad_rate),
      baseInterestMorosidad: Number(r.base_interest_morosidad),
      interestAccrualMethod: r.interest_accrual_method,
      dailyRateDivisor: r.daily_rate_divisor,
      createdAt: r.created_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
    }));
    ok(res, 200, JSON.stringify({ items, total: Number(rows[0]?.total ?? 0), limit, offset }), traceId, true);
  }

  // ---- withdrawals: the service's statements, faithfully ----

  /** The service's authentication of a user token (`identity_user_token`) and, on a user's path, its scope. @throws Refusal 401/403. */
  async function authenticateUser(req: IncomingMessage, pathUserId?: string): Promise<UserClaims> {
    const claims = await userClaims(req);
    const [row] = (
      await pool.query<{ customer_id: string; credential_active: boolean; customer_active: boolean | null; user_exists: boolean; user_deleted: boolean | null; user_active: boolean | null; user_status: string | null; token_revoked: boolean | null }>({
        ...SQL.authUserToken,
        values: [claims.credentialId, claims.userId, claims.customerId, claims.tokenVersion],
      })
    ).rows;
    if (!row || row.customer_id !== claims.customerId || !row.credential_active || row.customer_active !== true) throw new Refusal(401, "UNAUTHORIZED", "Invalid token.");
    if (!row.user_exists || row.user_deleted || !row.user_active || row.user_status !== "VERIFIED" || row.token_revoked) {
      throw new Refusal(401, "UNAUTHORIZED", "The token's user is inactive.");
    }
    if (pathUserId !== undefined && pathUserId.toLowerCase() !== claims.userId) throw new Refusal(403, "FORBIDDEN", "A user token can only act on its own user.");
    return claims;
  }

  /** The service's `activeUser` (one query). */
  async function activeUser(customerId: string, userId: string): Promise<UserRow> {
    const user = (await pool.query<UserRow>(SQL.user, [userId.toLowerCase(), customerId])).rows[0];
    if (!user) throw new Refusal(404, "USER_NOT_FOUND", "User not found.");
    if (!user.good_standing) throw new Refusal(404, "RESOURCE_NOT_FOUND", "User is not active.");
    return user;
  }

  /** BEGIN … COMMIT on one connection (ROLLBACK on any error). */
  async function transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    try {
      await client.query("begin");
      const result = await work(client);
      await client.query("commit");
      return result;
    } catch (error) {
      await client.query("rollback").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * LedgerService.post: the wallet accounts of the entry locked (in id order) and, in the same
   * statement, its external account and the wallet's other bucket read; the balances checked; the
   * entry, its two postings and the new cached balances written in one statement (the external
   * account of a debit is append-only: its balance is derived from its postings).
   */
  async function post(
    client: pg.PoolClient,
    kind: "hold" | "debit",
    walletId: string,
    network: string,
    currency: string,
    amount: Decimal,
    reference: string,
  ): Promise<{ entryId: string; balanceAfter: Decimal }> {
    const from = kind === "hold" ? `wallet:${walletId}:available:${currency}` : `wallet:${walletId}:held:${currency}`;
    const to = kind === "hold" ? `wallet:${walletId}:held:${currency}` : `external:${network}:${currency}`;
    const buckets = [`wallet:${walletId}:available:${currency}`, `wallet:${walletId}:held:${currency}`];
    const codes = [from, to].sort();
    const lock = codes.filter((code) => code.startsWith("wallet:"));
    const read = [...codes.filter((code) => !code.startsWith("wallet:")), ...buckets.filter((code) => !lock.includes(code))];
    const rows = (await client.query<{ id: string; code: string; bucket: string; balance: string | null }>(SQL.accountsOfPost(read.length), accountsValues(lock, read))).rows;
    const byCode = new Map(rows.map((row) => [row.code, row]));
    const next = new Map<string, Decimal>();
    for (const [code, delta] of [
      [from, amount.neg()],
      [to, amount],
    ] as const) {
      if (!code.startsWith("wallet:")) continue;
      const row = byCode.get(code);
      if (!row || row.balance === null) throw new Error(`ledger account ${code} missing`);
      const value = new D(row.balance).plus(delta);
      if (value.lt(0)) throw new Refusal(400, "INSUFFICIENT_BALANCE", `Insufficient ${row.bucket} ${currency} balance for this amount.`);
      next.set(code, value);
    }
    const idOf = (code: string): string => {
      const row = byCode.get(code);
      if (!row) throw new Error(`ledger account ${code} missing`);
      return String(row.id);
    };
    const entryId = String(
      (
        await client.query<{ id: string }>(
          SQL.postEntry,
          entryValues(
            [kind, walletId, network, currency, amount.toFixed(), reference],
            [
              [idOf(from), currency, amount.neg().toFixed()],
              [idOf(to), currency, amount.toFixed()],
            ],
            [...next].map(([code, value]) => [code, value.toFixed()] as const),
          ),
        )
      ).rows[0]?.id,
    );
    const balanceAfter = buckets.reduce((sum, code) => sum.plus(next.get(code) ?? new D(byCode.get(code)?.balance ?? 0)), new D(0));
    return { entryId, balanceAfter };
  }

  async function initiate(req: IncomingMessage, res: ServerResponse, pathUserId: string, traceId: string): Promise<void> {
    const body = await readJson(req);
    const claims = await authenticateUser(req, pathUserId);
    const customerId = claims.customerId;
    const key = first(req.headers["idempotency-key"]) ?? randomUUID();
    const amount = new D(String(body.amount));
    const address = String(body.address);
    const fingerprint = createHash("sha256")
      .update(JSON.stringify([pathUserId.toLowerCase(), String(body.currency).toLowerCase(), amount.toFixed(), address, body.memo ?? null, null]))
      .digest("hex");
    if ((await pool.query(SQL.keyByAddress, [customerId, "withdrawal", KEY_CALLER, key])).rows[0]) throw new Refusal(409, "IDEMPOTENCY_KEY_REUSED", "The benchmark never repeats a key.");
    const user = await activeUser(customerId, pathUserId);
    if (String(body.currency).toLowerCase() !== BTC.code) throw new Refusal(400, "INVALID_CURRENCY", "The benchmark withdraws btc.");
    if (amount.lt(BTC.minWithdrawal)) throw new Refusal(400, "MINIMUM_AMOUNT_NOT_MET", `The minimum btc withdrawal is ${BTC.minWithdrawal}.`);
    // the allowlist policy (AllowlistService.assertDestinationAllowed): the benchmark's customer requires none
    if ((await pool.query<LimitsRow>(SQL.customerLimits, [customerId])).rows[0]?.allowlist_required) throw new Refusal(400, "INVALID_ADDRESS", "Not allowlisted.");
    const id = randomUUID();
    const created = await transaction(async (client) => {
      if ((await client.query(SQL.insertKey, [customerId, "withdrawal", KEY_CALLER, key, fingerprint, id])).rows.length === 0) {
        await client.query(SQL.keyByAddress, [customerId, "withdrawal", KEY_CALLER, key]);
        throw new Refusal(409, "IDEMPOTENCY_KEY_REUSED", "Repeated key.");
      }
      // LimitsService.checkMovement: the lock, the customer's own caps (else the defaults), the sums
      await client.query(SQL.userLock, [`withdrawal:${user.user_id}:${BTC.code}`]);
      const own = (await client.query<LimitsRow>(SQL.customerLimits, [customerId])).rows[0];
      const cap = own ? own.withdrawal_caps[BTC.code] : BTC.cap;
      const now = new Date();
      const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
      const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
      if (cap) {
        const sums = (await client.query<{ today: string; month: string }>(SQL.caps, [dayStart, user.user_id, BTC.code, monthStart])).rows[0];
        assertCaps("withdrawal", cap, amount, sums);
      }
      const rows = (
        await client.query<{ wallet_id: string; networks: { name: string; currency: string }[]; bucket: string | null; balance: string | null }>(SQL.walletBalances, [
          user.user_id,
          customerId,
          BTC.code,
        ])
      ).rows;
      let chosen: { walletId: string; network: string } | undefined;
      for (const row of rows) {
        if (row.bucket !== "available" || row.balance === null) continue;
        const network = row.networks.find((n) => n.currency === BTC.code && BTC.networks.includes(n.name))?.name;
        if (network && new D(row.balance).gte(amount)) {
          chosen = { walletId: row.wallet_id, network };
          break;
        }
      }
      if (!chosen) throw new Refusal(400, "INSUFFICIENT_BALANCE", "No wallet of the user has enough available btc for this withdrawal.");
      await client.query(SQL.walletStates, [[chosen.walletId]]); // the movement guard (every wallet of the bench is ACTIVE)
      const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
      const issuedAt = new Date();
      const expiresAt = new Date(issuedAt.getTime() + CODE_TTL_S * 1000);
      const text = [
        `Hello ${user.first_name},`,
        "",
        `A withdrawal of ${amount.toFixed(8)} BTC to ${address} (${chosen.network}) is waiting for your confirmation.`,
        "",
        `Withdrawal: ${id}`,
        `Confirmation code: ${code}`,
        `The code expires at ${expiresAt.toISOString()} (in ${CODE_TTL_S / 60} minutes) and works once.`,
        "",
        "If you did not ask for this withdrawal, do not share the code and cancel the withdrawal.",
      ].join("\n");
      const queuedAt = new Date();
      await client.query(SQL.insertWithdrawal, [
        id, customerId, user.user_id, chosen.walletId, chosen.network, BTC.code, amount.toFixed(), address, body.memo ?? null, "PENDING",
        keyedHash(`withdrawal-code:${id}:${code}`), expiresAt, 0, 0, 0, issuedAt, null, key, null, null, null, issuedAt, issuedAt,
        randomUUID(), customerId, user.email, `Confirm your withdrawal ${id}`, text, "sandbox", 0, queuedAt, null, `withdrawal:${id}`, queuedAt, null,
      ]);
      await post(client, "hold", chosen.walletId, chosen.network, BTC.code, amount, `withdrawal:${id}`);
      // the benchmark's customer has no webhook: the insert writes nothing
      await client.query(SQL.webhook, [randomUUID(), customerId, `msg_${id}`, "withdrawal.pin", "sealed", `withdrawal:${id}`, queuedAt]);
      return { id, key };
    });
    ok(
      res,
      201,
      JSON.stringify({
        id: created.id,
        withdraw: { id: created.id, status: "PENDING", idempotency_key: created.key, is_duplicate: false },
        currency: BTC.code,
        amount: amount.toNumber(),
        address,
      }),
      traceId,
    );
  }

  async function sandboxMail(req: IncomingMessage, res: ServerResponse, query: URLSearchParams, traceId: string): Promise<void> {
    const key = first(req.headers["x-api-key"]);
    if (key === undefined) throw new Refusal(401, "UNAUTHORIZED", MISSING);
    const [credential] = (await pool.query<{ customer_id: string; credential_active: boolean; customer_active: boolean | null }>({ ...SQL.authCredentialByHash, values: [keyedHash(key)] }))
      .rows;
    if (!credential?.credential_active || credential.customer_active !== true) throw new Refusal(401, "UNAUTHORIZED", "Invalid API key.");
    const to = query.get("to") ?? "";
    const rows = (await pool.query<{ to: string; subject: string; text: string; sent_at: string }>({ ...SQL.sandboxMail, values: [credential.customer_id, to] })).rows;
    ok(res, 200, JSON.stringify(rows), traceId);
  }

  async function confirm(req: IncomingMessage, res: ServerResponse, pathUserId: string, withdrawalId: string, traceId: string): Promise<void> {
    const body = await readJson(req);
    const claims = await authenticateUser(req, pathUserId);
    const customerId = claims.customerId;
    await activeUser(customerId, pathUserId);
    await transaction(async (client) => {
      const w = (await client.query<WithdrawalRow>(SQL.withdrawalForUpdate, [withdrawalId.toLowerCase(), customerId, pathUserId.toLowerCase()])).rows[0];
      if (!w) throw new Refusal(404, "WITHDRAWAL_NOT_FOUND", "Withdrawal not found.");
      if (w.status !== "PENDING") throw new Refusal(400, w.status === "COMPLETED" ? "ALREADY_CONFIRMED" : "BAD_REQUEST", "Not pending.");
      await client.query(SQL.walletStates, [[w.wallet_id]]); // the movement guard (every wallet of the bench is ACTIVE)
      const actual = Buffer.from(keyedHash(`withdrawal-code:${w.id}:${String(body.code)}`), "hex");
      const expected = Buffer.from(w.code_hash ?? "", "hex");
      const matches = actual.length === expected.length && timingSafeEqual(actual, expected);
      if (w.code_attempts >= MAX_ATTEMPTS) throw new Refusal(403, "WITHDRAWAL_BLOCKED", "Too many wrong codes.");
      if (Date.now() >= w.code_expires_at.getTime()) throw new Refusal(400, "CONFIRMATION_CODE_EXPIRED", "The confirmation code has expired.");
      if (!matches) throw new Refusal(400, "CONFIRMATION_CODE_INVALID", "The confirmation code is not valid."); // the benchmark sends the right code: no attempt to count
      if (w.source_address === null) throw new Error("wallet address missing");
      const hash = randomBytes(32).toString("hex");
      const amount = new D(w.amount);
      const { entryId, balanceAfter } = await post(client, "debit", w.wallet_id, w.network, w.currency, amount, `withdrawal:${w.id}`);
      const now = new Date();
      await client.query(SQL.completeWithdrawal, [
        "COMPLETED", null, w.code_expires_at, w.code_attempts, w.code_failures_total, w.code_resends, w.code_issued_at, w.cancel_reason, hash, now, w.cancelled_at, new Date(), w.id,
        w.wallet_id, w.customer_id, w.network, w.source_address, "withdrawal", "done", w.currency, amount.toFixed(), "0", amount.toFixed(), "0",
        balanceAfter.toFixed(), hash, w.memo ?? "", `Withdrawal of ${amount.toFixed(8)} ${w.currency.toUpperCase()} to ${w.address} on ${w.network}`,
        w.id, "", w.idempotency_key, entryId, now,
      ]);
    });
    ok(res, 200, JSON.stringify({ id: withdrawalId.toLowerCase(), status: "COMPLETED" }), traceId);
  }

  const createTransfer = transferRoute({
    pool,
    authenticate: (req) => authenticateUser(req),
    transaction,
    defaultCaps: JSON.parse(BENCH_TRANSFER_CAPS) as Record<string, CapSet>,
  });

  async function route(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, traceId: string): Promise<void> {
    if (req.method === "GET") {
      if (path === "/api/v1/currencies") {
        await ownerCustomer(req);
        ok(res, 200, options.currenciesJson, traceId);
        return;
      }
      const wallet = BALANCE.exec(path);
      if (wallet?.[1]) return balance(req, res, wallet[1], traceId);
      if (path === "/v2/credit-products") return creditProducts(req, res, query, traceId);
      if (path === "/api/v1/sandbox/mail") return sandboxMail(req, res, query, traceId);
    }
    if (req.method === "POST") {
      const withdrawal = WITHDRAWALS.exec(path);
      if (withdrawal?.[1] && withdrawal[2]) return confirm(req, res, withdrawal[1], withdrawal[2], traceId);
      if (withdrawal?.[1]) return initiate(req, res, withdrawal[1], traceId);
      if (path === "/api/v1/transfers") return createTransfer(req, res, traceId);
    }
    throw new Refusal(404, "NOT_FOUND", "No route.");
  }

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? "/";
    if (url === "/healthz" && req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": HEALTH.length });
      res.end(HEALTH);
      return;
    }
    const traceId = randomUUID();
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    const credit = path.startsWith("/v2/");
    if (req.method === "GET" && path === "/api/v1/currencies" && req.headers["x-api-key"] === undefined && req.headers.authorization === undefined) {
      // the framework-only scenario: the 401 of a request without credentials, no query
      refuse(res, new Refusal(401, "UNAUTHORIZED", MISSING), traceId);
      return;
    }
    route(req, res, path, new URLSearchParams(q < 0 ? "" : url.slice(q + 1)), traceId).catch((error: unknown) => {
      if (res.headersSent) return;
      if (error instanceof Refusal) refuse(res, error, traceId, credit);
      else {
        process.stderr.write(`baseline: ${(error as Error).stack ?? String(error)}\n`);
        refuse(res, new Refusal(500, "INTERNAL_SERVER_ERROR", (error as Error).message), traceId, credit);
      }
    });
  };
  return { listener, pool };
}

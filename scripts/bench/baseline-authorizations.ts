/**
 * Authorize and Capture of the benchmark's authorization rows (scripts/bench/authorizations.ts), on
 * bare `node:http` + a raw `pg.Pool`: NOT a minimum but the very statements the service runs for one
 * pair (src/modules/credit/authorizations/service.ts through ../accounts/changes.ts; captured with
 * `npx tsx scripts/bench/capture-authorizations.ts`, which compares the two sequences), in the same
 * order and transaction, taking the same row lock, with bound parameters where MikroORM inlines literals.
 *
 * Authorize (13): the owner key's credential; BEGIN; INSERT of the Idempotency-Key row (scope
 * `credit`, `on conflict do nothing`); the wallet `FOR UPDATE`; its product; its statements still
 * open; the tenant's clock row; INSERT of the `Autorizacion Aprobada` event; INSERT of the
 * authorization; UPDATE of the wallet; COMMIT; then, not awaited, the delivery job's kick (INSERT
 * into `agenda_jobs` and NOTIFY), as the service's scheduler does after every commit that wrote events.
 * Capture (13): the credential; BEGIN; the wallet `FOR UPDATE`; its product; its open statements;
 * its open authorizations; the clock; INSERT of the `Autorizacion Capturada` event; UPDATE of the
 * wallet; UPDATE of the authorization; COMMIT; the kick.
 *
 * It answers the service's `CreditAuthorization`. What the service does beyond this: the OpenAPI
 * validation, express, the credit engine (src/domain/credit), the ORM's entities, identity map, unit
 * of work and change sets. The baseline serves what the benchmark sends: an approvable whole
 * capture on a wallet with nothing due (anything else answers 409 `BENCH_UNSUPPORTED`).
 */
import { createHash, createHmac, createSecretKey, hkdfSync, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type pg from "pg";
import { first, ok, readJson, Refusal, refuse } from "./baseline-http.js";

/** The statements, as the service's (scripts/bench/capture-authorizations.ts checks their shapes). */
export const AUTH_SQL = {
  credential: `select c.credential_id, c.customer_id, c.is_active as credential_active, cu.is_active as customer_active from credential c left join customer cu on cu.customer_id = c.customer_id where c.secret_hash = $1`,
  insertKey: `insert into idempotency_key (customer_id, scope, key, request_fingerprint, result_id, created_at) values ($1, 'credit', $2, $3, $4, now()) on conflict (customer_id, scope, key) do nothing returning key`,
  wallet: `select "c0".* from "credit_wallet" as "c0" where "c0"."wallet_id" = $1 and "c0"."customer_id" = $2 limit 1 for update`,
  product: `select "c0".* from "credit_product" as "c0" where "c0"."id" = $1 limit 1`,
  statements: `select "c0".* from "credit_statement" as "c0" where "c0"."wallet_id" = $1 and ("c0"."interest_applied_at" is null or ("c0"."status" = 'defaulted' and "c0"."cured_at" is null)) order by "c0"."cut_date" asc`,
  holds: `select "c0".* from "credit_authorization" as "c0" where "c0"."wallet_id" = $1 and "c0"."status" = 'approved' order by "c0"."created_at" asc, "c0"."authorization_id" asc`,
  clock: `select "now" from "credit_clock" where "customer_id" = $1`,
  /** The event of a change; `affects` inlined as the ORM does (false: the approval, true: the capture). */
  insertEvent: (affects: boolean): string =>
    `insert into "credit_event" ("id", "wallet_id", "customer_id", "sequence", "type", "amount", "direction", "affects_balance", "wallet_details_after", "created_at", "delivery_status", "attempt_count") values ($1, $2, $3, $4, $5, $6, 'debit', ${affects}, $7, $8, 'pending', 0)`,
  insertAuthorization: `insert into "credit_authorization" ("authorization_id", "wallet_id", "customer_id", "status", "decline_reason", "amount", "captured_amount", "released_amount", "merchant_name", "merchant_mcc", "merchant_country", "reference", "idempotency_key", "expires_at", "closed_at", "created_at") values ($1, $2, $3, 'approved', null, $4, '0', '0', $5, $6, $7, $8, $9, $10, null, $11)`,
  authorizeWallet: `update "credit_wallet" set "available_amount" = $1, "amount_held" = $2, "sequence" = $3, "as_of" = $4, "updated_at" = $5 where "wallet_id" = $6`,
  captureWallet: `update "credit_wallet" set "principal_outstanding" = $1, "amount_held" = $2, "sequence" = $3, "as_of" = $4, "updated_at" = $5 where "wallet_id" = $6`,
  captureAuthorization: `update "credit_authorization" set "status" = 'captured', "captured_amount" = $1, "closed_at" = $2 where "authorization_id" = $3`,
  kick: `INSERT INTO "agenda_jobs" ( name, priority, next_run_at, type, repeat_timezone, repeat_interval, data, repeat_at, disabled, fork, last_modified_by, start_date, end_date, skip_days ) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *`,
} as const;

/** The wallet row's columns the pair reads (bigint and numeric as pg returns them: strings). */
interface WalletRow {
  wallet_id: string;
  product_id: string;
  status: string;
  credit_limit: string;
  available_amount: string;
  amount_held: string;
  principal_outstanding: string;
  interest_outstanding: string;
  sequence: string;
  as_of: Date;
  interest_rate_nominal: string;
  interest_rate_moroso: string;
  fixed_interest_nominal: string;
  fixed_interest_moroso: string;
  minimum_payment_rate: string;
  fixed_minimum_payment: string;
}

const DAY_MS = 86_400_000;
/** The service's default `AUTHORIZATION_TTL_DAYS`. */
const TTL_DAYS = 7;
const unsupported = (what: string): Refusal => new Refusal(409, "BENCH_UNSUPPORTED", what);

/** `wallet_details_after` of an event (src/domain/credit/events.ts), from the row and its new balances. */
function details(w: WalletRow, principal: number, held: number): string {
  const interest = Number(w.interest_outstanding);
  const limit = Number(w.credit_limit);
  return JSON.stringify({
    principal_outstanding: principal,
    interest_accrued: interest,
    totalDebt: principal + interest,
    limit,
    amountOverdraft: Math.max(0, principal + interest + held - limit),
    amountHeld: held,
    interestSpecs: {
      interestRateNominal: Number(w.interest_rate_nominal),
      interestRateMoroso: Number(w.interest_rate_moroso),
      fixedInterestNominal: Number(w.fixed_interest_nominal),
      fixedInterestMoroso: Number(w.fixed_interest_moroso),
    },
    minimumPaymentSpecs: { minimumPaymentRate: Number(w.minimum_payment_rate), fixedMinimumPayment: Number(w.fixed_minimum_payment) },
  });
}

/** The service's `CreditAuthorization` of a row read back or written here. */
function view(a: Record<string, unknown>): string {
  const iso = (d: unknown): string | null => (d instanceof Date ? d.toISOString() : null);
  return JSON.stringify({
    authorizationId: a.authorization_id,
    walletId: a.wallet_id,
    status: a.status,
    declineReason: null,
    amount: Number(a.amount),
    capturedAmount: Number(a.captured_amount),
    releasedAmount: Number(a.released_amount),
    merchant: { name: a.merchant_name, ...(a.merchant_mcc ? { mcc: a.merchant_mcc } : {}), ...(a.merchant_country ? { country: a.merchant_country } : {}) },
    reference: a.reference ?? null,
    idempotencyKey: a.idempotency_key,
    isDuplicate: false,
    expiresAt: iso(a.expires_at),
    closedAt: iso(a.closed_at),
    createdAt: iso(a.created_at),
  });
}

/**
 * The listener: `POST /v2/wallet/credits/:wallet/authorizations` (201) and
 * `…/authorizations/:id/capture` (200) with the owner key; `secretsKey` the service's `SECRETS_KEY`
 * (the credential's keyed hash).
 */
export function authorizationBaselineListener(pool: pg.Pool, secretsKey: string): (req: IncomingMessage, res: ServerResponse) => void {
  const hashKey = createSecretKey(Buffer.from(hkdfSync("sha256", Buffer.from(secretsKey, "utf8"), "platform", "keyed-hash/v1", 32)));

  async function owner(req: IncomingMessage): Promise<string> {
    const key = first(req.headers["x-api-key"]);
    if (key === undefined) throw new Refusal(401, "UNAUTHORIZED", "Missing credentials.");
    const hash = createHmac("sha256", hashKey).update(key, "utf8").digest("hex");
    const row = (await pool.query<{ customer_id: string; credential_active: boolean; customer_active: boolean | null }>({ name: "a_cred", text: AUTH_SQL.credential, values: [hash] })).rows[0];
    if (!row?.credential_active || row.customer_active !== true) throw new Refusal(401, "UNAUTHORIZED", "Invalid API key.");
    return row.customer_id;
  }

  /** BEGIN; the wallet locked, its product, its open statements[, its holds], the clock; `work`; COMMIT; the kick. */
  async function change<T>(customerId: string, walletId: string, withHolds: boolean, before: ((c: pg.PoolClient) => Promise<void>) | null, work: (c: pg.PoolClient, w: WalletRow, now: Date, holds: Record<string, unknown>[]) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    try {
      await client.query("begin");
      if (before) await before(client);
      const w = (await client.query<WalletRow>({ name: "a_wallet", text: AUTH_SQL.wallet, values: [walletId, customerId] })).rows[0];
      if (!w) throw new Refusal(404, "NOT_FOUND", "Credit wallet not found.");
      await client.query({ name: "a_product", text: AUTH_SQL.product, values: [w.product_id] });
      const open = (await client.query({ name: "a_statements", text: AUTH_SQL.statements, values: [walletId] })).rows;
      const holds = withHolds ? (await client.query<Record<string, unknown>>({ name: "a_holds", text: AUTH_SQL.holds, values: [walletId] })).rows : [];
      const clock = (await client.query<{ now: Date }>({ name: "a_clock", text: AUTH_SQL.clock, values: [customerId] })).rows[0];
      const now = clock?.now ?? new Date();
      if (open.length > 0 || w.status !== "active" || Math.floor(now.getTime() / DAY_MS) !== Math.floor(w.as_of.getTime() / DAY_MS)) throw unsupported("a step is due");
      const result = await work(client, w, now, holds);
      await client.query("commit");
      const at = new Date();
      void pool
        .query({ name: "a_kick", text: AUTH_SQL.kick, values: ["credit-notification-delivery", 0, at, "normal", null, null, "{}", null, false, false, `pid-${process.pid}`, null, null, null] })
        .then(() => pool.query(`NOTIFY "agenda_jobs", '${JSON.stringify({ jobName: "credit-notification-delivery", nextRunAt: at.toISOString(), priority: 0, timestamp: new Date().toISOString(), source: `pid-${process.pid}` })}'`))
        .catch(() => {});
      return result;
    } catch (error) {
      await client.query("rollback").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async function authorize(req: IncomingMessage, walletId: string): Promise<string> {
    const body = await readJson(req);
    const customerId = await owner(req);
    const amount = Number(body.amount);
    const merchant = body.merchant as { name: string; mcc?: string; country?: string };
    const key = first(req.headers["idempotency-key"]) ?? randomUUID();
    const id = randomUUID();
    const hash = createHash("sha256").update(JSON.stringify(["authorize", walletId, amount, merchant.name, merchant.mcc ?? null, merchant.country ?? null, body.reference ?? null])).digest("hex");
    const claim = async (c: pg.PoolClient): Promise<void> => {
      if ((await c.query({ name: "a_key", text: AUTH_SQL.insertKey, values: [customerId, key, hash, id] })).rows.length === 0) throw unsupported("a repeated key");
    };
    return change(customerId, walletId, false, claim, async (c, w, now) => {
      const available = Number(w.available_amount) - amount;
      if (!Number.isSafeInteger(amount) || amount <= 0 || available < 0) throw unsupported("not approvable");
      const held = Number(w.amount_held) + amount;
      const sequence = Number(w.sequence) + 1;
      const end = new Date(now.getTime() + TTL_DAYS * DAY_MS);
      const expiresAt = end.getTime() % DAY_MS === 0 ? end : new Date((Math.floor(end.getTime() / DAY_MS) + 1) * DAY_MS);
      await c.query({ name: "a_event0", text: AUTH_SQL.insertEvent(false), values: [randomUUID(), walletId, customerId, sequence, "Autorizacion Aprobada", amount, details(w, Number(w.principal_outstanding), held), now] });
      const row = {
        authorization_id: id, wallet_id: walletId, status: "approved", amount, captured_amount: 0, released_amount: 0,
        merchant_name: merchant.name, merchant_mcc: merchant.mcc ?? null, merchant_country: merchant.country ?? null,
        reference: body.reference ?? null, idempotency_key: key, expires_at: expiresAt, closed_at: null, created_at: now,
      };
      await c.query({
        name: "a_auth",
        text: AUTH_SQL.insertAuthorization,
        values: [id, walletId, customerId, amount, row.merchant_name, row.merchant_mcc, row.merchant_country, row.reference, key, expiresAt, now],
      });
      await c.query({ name: "a_wauth", text: AUTH_SQL.authorizeWallet, values: [available, held, sequence, now, now, walletId] });
      return view(row);
    });
  }

  async function capture(req: IncomingMessage, walletId: string, authorizationId: string): Promise<string> {
    await readJson(req).catch(() => ({}));
    const customerId = await owner(req);
    return change(customerId, walletId, true, null, async (c, w, now, holds) => {
      const hold = holds.find((h) => h.authorization_id === authorizationId);
      if (!hold) throw unsupported("not an open authorization");
      const amount = Number(hold.amount);
      const principal = Number(w.principal_outstanding) + amount;
      const held = Number(w.amount_held) - amount;
      const sequence = Number(w.sequence) + 1;
      await c.query({ name: "a_event1", text: AUTH_SQL.insertEvent(true), values: [randomUUID(), walletId, customerId, sequence, "Autorizacion Capturada", amount, details(w, principal, held), now] });
      await c.query({ name: "a_wcap", text: AUTH_SQL.captureWallet, values: [principal, held, sequence, now, now, walletId] });
      await c.query({ name: "a_cap", text: AUTH_SQL.captureAuthorization, values: [amount, now, authorizationId] });
      return view({ ...hold, status: "captured", captured_amount: amount, closed_at: now });
    });
  }

  return (req, res) => {
    const traceId = randomUUID();
    const m = /^\/v2\/wallet\/credits\/([0-9a-f-]{36})\/authorizations(?:\/([0-9a-f-]{36})\/capture)?$/.exec(req.url ?? "");
    const answer = async (): Promise<void> => {
      if (req.method !== "POST" || !m?.[1]) throw new Refusal(404, "NOT_FOUND", "Not found.");
      if (m[2]) ok(res, 200, await capture(req, m[1], m[2]), traceId, true);
      else ok(res, 201, await authorize(req, m[1]), traceId, true);
    };
    answer().catch((error: unknown) => refuse(res, error instanceof Refusal ? error : new Refusal(500, "INTERNAL", String(error)), traceId, true));
  };
}

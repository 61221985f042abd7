/**
 * Authorize and Capture of the benchmark's authorization rows (scripts/bench/authorizations.ts), on
 * bare `node:http` + a raw `pg.Pool`: NOT a minimum but the very statements the service runs for one
 * pair (src/modules/credit/authorizations/service.ts through ../accounts/changes.ts and ../accounts/repository/;
 * captured with `npx tsx scripts/bench/capture-authorizations.ts`, which compares the two
 * sequences), in the same order and transaction, taking the same row lock, prepared and with bound
 * parameters as the service sends them (the service's own statement texts, imported).
 *
 * Authorize (7): the owner key's credential; BEGIN; INSERT of the Idempotency-Key row (scope
 * `credit`, `on conflict do nothing`); the wallet locked and loaded with its product, the tenant's
 * clock, its open statements and holds (`LOCK_WALLET`); the step written (src/modules/credit/accounts/repository/write.ts
 * `writeStatement`: the wallet, the `Autorizacion Aprobada` event, the authorization); COMMIT; then, not awaited, the delivery
 * job's kick (INSERT into `agenda_jobs` and NOTIFY), as the service's scheduler does after every
 * commit that wrote events.
 * Capture (6): the credential; BEGIN; `LOCK_WALLET`; the step written (the wallet, the `Autorizacion
 * Capturada` event, the authorization closed); COMMIT; the kick.
 *
 * It answers the service's `CreditAuthorization`. What the service does beyond this: the OpenAPI
 * validation, express, the credit engine (src/domain/credit) and the mapping of its rows. The
 * baseline serves what the benchmark sends: an approvable whole capture on a wallet with nothing
 * due (anything else answers 409 `BENCH_UNSUPPORTED`).
 */
import { createHash, createHmac, createSecretKey, hkdfSync, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type pg from "pg";
import { INSERT_KEY } from "../../src/modules/idempotency/repository.js";
import { LOCK_WALLET } from "../../src/modules/credit/accounts/repository/lock.js";
import { writeStatement, type WriteShape } from "../../src/modules/credit/accounts/repository/write.js";
import { first, ok, readJson, Refusal, refuse } from "./baseline-http.js";

/** The statements, as the service's (scripts/bench/capture-authorizations.ts checks their shapes). */
export const AUTH_SQL = {
  credential: `select c.credential_id, c.customer_id, c.is_active as credential_active, cu.is_active as customer_active from credential c left join customer cu on cu.customer_id = c.customer_id where c.secret_hash = $1`,
  kick: `INSERT INTO "agenda_jobs" ( name, priority, next_run_at, type, repeat_timezone, repeat_interval, data, repeat_at, disabled, fork, last_modified_by, start_date, end_date, skip_days ) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *`,
} as const;

/** A row as `row_to_json` gives it (bigint and numeric as JSON numbers, instants as ISO 8601 text). */
export type JsonRow = Record<string, unknown>;

/** A row of `LOCK_WALLET`. */
interface LockRow {
  wallet: JsonRow & { row_version: string; status: string; as_of: string };
  seen_version: string | null;
  clock: string | null;
  statements: JsonRow[];
  holds: JsonRow[];
}

const DAY_MS = 86_400_000;
/** The service's default `AUTHORIZATION_TTL_DAYS`. */
const TTL_DAYS = 7;
export const unsupported = (what: string): Refusal => new Refusal(409, "BENCH_UNSUPPORTED", what);

/** `wallet_details_after` of an event (src/domain/credit/events.ts), from the row and its new balances. */
export function details(w: JsonRow, principal: number, held: number): Record<string, unknown> {
  const interest = Number(w.interest_outstanding);
  const limit = Number(w.credit_limit);
  return {
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
  };
}

/**
 * The service's `CreditAuthorization` of a row read back or written here (src/modules/credit/authorizations/service.ts
 * `creditAuthorizationView`, same keys in the same order): a wallet's authorization (no card) or a card's
 * (`card_id`, `processor_reference`, a decline's `decline_reason` and `decline_detail`).
 */
export function view(a: JsonRow, isDuplicate = false): string {
  const iso = (d: unknown): string | null => (d === null || d === undefined ? null : new Date(d as string | Date).toISOString());
  return JSON.stringify({
    authorizationId: a.authorization_id,
    walletId: a.wallet_id,
    cardId: a.card_id ?? null,
    status: a.status,
    declineReason: a.decline_reason ?? null,
    declineDetail: a.decline_detail ?? null,
    amount: Number(a.amount),
    capturedAmount: Number(a.captured_amount),
    releasedAmount: Number(a.released_amount),
    refundedAmount: Number(a.refunded_amount ?? 0),
    merchant: { name: a.merchant_name, ...(a.merchant_mcc ? { mcc: a.merchant_mcc } : {}), ...(a.merchant_country ? { country: a.merchant_country } : {}) },
    reference: a.reference ?? null,
    processorReference: a.processor_reference ?? null,
    idempotencyKey: a.idempotency_key,
    isDuplicate,
    expiresAt: iso(a.expires_at),
    closedAt: iso(a.closed_at),
    createdAt: iso(a.created_at),
  });
}

const NONE: WriteShape = { events: false, statementsUpdated: false, statementsNew: false, holdsClosed: false, authorization: false, charge: false, payment: false, refund: false };
/** The service's write of an approval (the wallet, its event, the authorization) and of a capture (the wallet, its event, the hold closed). */
export const APPROVAL = writeStatement({ ...NONE, events: true, authorization: true });
const CAPTURE = writeStatement({ ...NONE, events: true, holdsClosed: true });

/** The write's parameters: the wallet's columns (its row with `changed`), the event, and the authorization inserted or closed. */
export function writeValues(w: JsonRow, changed: JsonRow, event: JsonRow, authorization: JsonRow): unknown[] {
  return [w.wallet_id, JSON.stringify({ ...w, ...changed }), JSON.stringify([event]), JSON.stringify([authorization])];
}

/**
 * The owner key's tenant of each request, checked as the service does (one statement,
 * {@link AUTH_SQL} `credential`, on the keyed hash of `x-api-key`); `secretsKey` the service's
 * `SECRETS_KEY`. @throws Refusal 401 without a key or with a key that is not an active owner's.
 */
export function ownerOfRequests(pool: pg.Pool, secretsKey: string): (req: IncomingMessage) => Promise<string> {
  const hashKey = createSecretKey(Buffer.from(hkdfSync("sha256", Buffer.from(secretsKey, "utf8"), "platform", "keyed-hash/v1", 32)));
  return async (req) => {
    const key = first(req.headers["x-api-key"]);
    if (key === undefined) throw new Refusal(401, "UNAUTHORIZED", "Missing credentials.");
    const hash = createHmac("sha256", hashKey).update(key, "utf8").digest("hex");
    const row = (await pool.query<{ customer_id: string; credential_active: boolean; customer_active: boolean | null }>({ name: "a_cred", text: AUTH_SQL.credential, values: [hash] })).rows[0];
    if (!row?.credential_active || row.customer_active !== true) throw new Refusal(401, "UNAUTHORIZED", "Invalid API key.");
    return row.customer_id;
  };
}

/**
 * The delivery job's kick, not awaited: INSERT into `agenda_jobs` and NOTIFY, as the service's
 * scheduler starts `credit-notification-delivery` after a commit that wrote events.
 */
export function kickDelivery(pool: pg.Pool): void {
  const at = new Date();
  void pool
    .query({ name: "a_kick", text: AUTH_SQL.kick, values: ["credit-notification-delivery", 0, at, "normal", null, null, "{}", null, false, false, `pid-${process.pid}`, null, null, null] })
    .then(() => pool.query(`NOTIFY "agenda_jobs", '${JSON.stringify({ jobName: "credit-notification-delivery", nextRunAt: at.toISOString(), priority: 0, timestamp: new Date().toISOString(), source: `pid-${process.pid}` })}'`))
    .catch(() => {});
}

/**
 * One change of wallet `walletId` of tenant `customerId`, as src/modules/credit/accounts/changes.ts
 * runs it: BEGIN; `before`; the wallet locked and loaded (`LOCK_WALLET`; again under the lock when
 * a change committed while it waited, as the service); `work`; COMMIT (ROLLBACK on an error). The
 * kick after the commit is the caller's. @throws Refusal 404 (no such wallet), 409
 * `BENCH_UNSUPPORTED` when a cycle step is due (the baseline runs none).
 */
export async function lockedWalletChange<T>(
  pool: pg.Pool,
  customerId: string,
  walletId: string,
  before: ((c: pg.PoolClient) => Promise<void>) | null,
  work: (c: pg.PoolClient, w: JsonRow, now: Date, holds: JsonRow[]) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("begin");
    if (before) await before(client);
    const lock = async (): Promise<LockRow | undefined> => (await client.query<LockRow>({ name: LOCK_WALLET.name, text: LOCK_WALLET.text, values: [walletId, customerId] })).rows[0];
    let read = await lock();
    if (read && read.seen_version !== read.wallet.row_version) read = await lock();
    if (!read) throw new Refusal(404, "NOT_FOUND", "Credit wallet not found.");
    const w = read.wallet;
    const now = read.clock === null ? new Date() : new Date(read.clock);
    if (read.statements.length > 0 || w.status !== "active" || Math.floor(now.getTime() / DAY_MS) !== Math.floor(new Date(w.as_of).getTime() / DAY_MS)) throw unsupported("a step is due");
    const result = await work(client, w, now, read.holds);
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
 * The listener: `POST /v2/wallet/credits/:wallet/authorizations` (201) and
 * `…/authorizations/:id/capture` (200) with the owner key; `secretsKey` the service's `SECRETS_KEY`
 * (the credential's keyed hash).
 */
export function authorizationBaselineListener(pool: pg.Pool, secretsKey: string): (req: IncomingMessage, res: ServerResponse) => void {
  const owner = ownerOfRequests(pool, secretsKey);

  /** {@link lockedWalletChange}, then the kick. */
  async function change<T>(customerId: string, walletId: string, before: ((c: pg.PoolClient) => Promise<void>) | null, work: (c: pg.PoolClient, w: JsonRow, now: Date, holds: JsonRow[]) => Promise<T>): Promise<T> {
    const result = await lockedWalletChange(pool, customerId, walletId, before, work);
    kickDelivery(pool);
    return result;
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
      if ((await c.query({ name: INSERT_KEY.name, text: INSERT_KEY.text, values: [customerId, "credit", "tenant", key, hash, id] })).rows.length === 0) throw unsupported("a repeated key");
    };
    return change(customerId, walletId, claim, async (c, w, now) => {
      const available = Number(w.available_amount) - amount;
      if (!Number.isSafeInteger(amount) || amount <= 0 || available < 0) throw unsupported("not approvable");
      const held = Number(w.amount_held) + amount;
      const sequence = Number(w.sequence) + 1;
      const end = new Date(now.getTime() + TTL_DAYS * DAY_MS);
      const expiresAt = end.getTime() % DAY_MS === 0 ? end : new Date((Math.floor(end.getTime() / DAY_MS) + 1) * DAY_MS);
      const event = {
        id: randomUUID(), wallet_id: walletId, customer_id: customerId, sequence, type: "Autorizacion Aprobada", amount, direction: "debit",
        affects_balance: false, wallet_details_after: details(w, Number(w.principal_outstanding), held), created_at: now,
      };
      const row = {
        authorization_id: id, wallet_id: walletId, customer_id: customerId, status: "approved", decline_reason: null, amount, captured_amount: 0, released_amount: 0,
        merchant_name: merchant.name, merchant_mcc: merchant.mcc ?? null, merchant_country: merchant.country ?? null,
        reference: body.reference ?? null, idempotency_key: key, expires_at: expiresAt, closed_at: null, created_at: now,
      };
      const changed = { available_amount: available, amount_held: held, sequence, as_of: now, updated_at: now };
      await c.query({ name: APPROVAL.name, text: APPROVAL.text, values: writeValues(w, changed, event, row) });
      return view(row);
    });
  }

  async function capture(req: IncomingMessage, walletId: string, authorizationId: string): Promise<string> {
    await readJson(req).catch(() => ({}));
    const customerId = await owner(req);
    return change(customerId, walletId, null, async (c, w, now, holds) => {
      const hold = holds.find((h) => h.authorization_id === authorizationId);
      if (!hold) throw unsupported("not an open authorization");
      const amount = Number(hold.amount);
      const principal = Number(w.principal_outstanding) + amount;
      const held = Number(w.amount_held) - amount;
      const sequence = Number(w.sequence) + 1;
      const event = {
        id: randomUUID(), wallet_id: walletId, customer_id: customerId, sequence, type: "Autorizacion Capturada", amount, direction: "debit",
        affects_balance: true, wallet_details_after: details(w, principal, held), created_at: now,
      };
      const closed = { ...hold, status: "captured", captured_amount: amount, released_amount: 0, closed_at: now };
      const changed = { principal_outstanding: principal, amount_held: held, sequence, as_of: now, updated_at: now };
      await c.query({ name: CAPTURE.name, text: CAPTURE.text, values: writeValues(w, changed, event, closed) });
      return view(closed);
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

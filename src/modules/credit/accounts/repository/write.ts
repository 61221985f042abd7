/**
 * The one statement that writes an engine step of a credit wallet change ({@link persistStep};
 * docs/performance.md "Authorizations and credit changes"): the wallet row updated, with the step's
 * other rows written in data-modifying CTEs of the same statement — the events (`credit_event`, the
 * notification outbox), the open statements updated and the new ones inserted, the holds closed,
 * and the operation's own row (an authorization, a charge, a payment or a refund). Each part's rows are one
 * JSON array parameter read with `json_populate_recordset` (columns by name; instants as ISO 8601
 * text, cents as JSON numbers, rates as decimal text).
 *
 * The statement holds only the parts a step has ({@link WriteShape}), so PostgreSQL plans no empty
 * part; each shape is one prepared statement of its own name (a few in practice: an authorization's
 * approval, its capture, a charge, a payment, a catch-up step), built once and cached; the common
 * shapes are built at module load and exported ({@link WRITE_WALLET}, {@link WRITE_APPROVAL},
 * {@link WRITE_CAPTURE}, {@link WRITE_CHARGE}, {@link WRITE_PAYMENT}, {@link WRITE_REFUND}). The statement writes, besides
 * the wallet's tables (`credit_wallet`, `credit_statement`, `credit_event`, `credit_charge`,
 * `credit_payment`), `credit_authorization` and `credit_refund` (../../authorizations/) in the same
 * round trip; a refund's part is two CTEs (its row, and its amount added to the authorization's
 * `refunded_amount`).
 */
import { randomUUID } from "node:crypto";
import type { PreparedStatement } from "../../../../db/sql.js";
import type { StepResult } from "../../../../domain/credit/index.js";
import type { CreditAuthorization, CreditRefund } from "../../authorizations/entities.js";
import type { CreditCharge, CreditPayment } from "../entities.js";
import { statementColumns, walletColumns } from "../mapping.js";
import type { Tx } from "../../../../db/sql.js";
import { countEvents } from "../events-written.js";
import type { LockedWallet } from "./lock.js";
import { columnsOf } from "./rows.js";

/** The parts of a write beside the wallet row, in the order of their parameters (after `$1` wallet id, `$2` wallet columns). */
export const WRITE_PARTS = ["events", "statementsUpdated", "statementsNew", "holdsClosed", "authorization", "charge", "payment", "refund"] as const;
/** A part of a write. */
export type WritePart = (typeof WRITE_PARTS)[number];
/** Which parts a write has. */
export type WriteShape = Readonly<Record<WritePart, boolean>>;

/** The columns of `credit_wallet` a change sets (../mapping.ts `walletColumns`). */
export const WALLET_COLUMNS: readonly string[] = [
  "status", "status_before_default", "credit_limit", "available_amount", "principal_outstanding", "interest_outstanding", "amount_held",
  "cycle_start", "sum_of_daily_balance", "last_close_at", "next_cut_at", "interest_rate_nominal", "interest_rate_moroso",
  "fixed_interest_nominal", "fixed_interest_moroso", "minimum_payment_rate", "fixed_minimum_payment", "specs_overridden",
  "pending_specs", "sequence", "as_of", "updated_at",
];

/** The columns of `credit_statement` an engine statement sets (../mapping.ts `statementColumns`). */
const STATEMENT_COLUMNS = [
  "cut_date", "cycle_start", "days_in_cycle", "sum_of_daily_balance", "principal_at_cut", "interest_outstanding_at_cut",
  "interest_accrual_method", "compound", "interest_basis", "interest_rate_nominal", "daily_rate_divisor", "fixed_interest_nominal",
  "minimum_payment_rate", "fixed_minimum_payment", "interest_generated", "minimum_payment", "payment_due_date", "paid_in_cycle",
  "status", "interest_applied", "interest_applied_at", "penal_interest", "interest_rate_moroso", "fixed_interest_moroso", "cured_at",
];

const EVENT_COLUMNS = "id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, card_id, unapplied_amount, created_at";
const AUTHORIZATION_COLUMNS =
  "authorization_id, wallet_id, card_id, customer_id, status, decline_reason, decline_detail, amount, captured_amount, released_amount, merchant_name, merchant_mcc, merchant_country, reference, processor_reference, idempotency_key, expires_at, closed_at, created_at";
const CHARGE_COLUMNS = "id, wallet_id, amount, description, idempotency_key, created_at";
const PAYMENT_COLUMNS = "id, wallet_id, amount, applied_to_interest, applied_to_principal, applied_to_overdraft, idempotency_key, created_at";
const REFUND_COLUMNS = "refund_id, wallet_id, customer_id, authorization_id, amount, applied_amount, unapplied_amount, idempotency_key, created_at";

const assignments = (columns: readonly string[]): string => columns.map((c) => `${c} = x.${c}`).join(", ");
/**
 * `column = any(<the keys of the rows in p>)`: lets PostgreSQL find the rows to update by their
 * primary key. Joined with `json_populate_recordset` alone (estimated at 100 rows, whatever the
 * array holds) the planner prefers a hash join over a sequential scan of the table once it has a
 * few thousand rows: a capture then read every authorization ever made.
 */
const byKeys = (column: string, key: string, p: string): string => `${column} = any(array(select (j->>'${key}')::uuid from json_array_elements(${p}::json) j))`;
const insert = (table: string, columns: string, p: string): string => `insert into ${table} (${columns}) select ${columns} from json_populate_recordset(null::${table}, ${p}::json)`;

/** The CTE of each part (or its CTEs, in order), its rows in parameter `p`; `$1` is the wallet id. */
const PART_SQL: Readonly<Record<WritePart, (p: string) => string | readonly string[]>> = {
  events: (p) => insert("credit_event", EVENT_COLUMNS, p),
  statementsUpdated: (p) => `update credit_statement s set ${assignments(STATEMENT_COLUMNS)} from json_populate_recordset(null::credit_statement, ${p}::json) x where ${byKeys("s.id", "id", p)} and s.id = x.id`,
  // `ordinal` is relative: added to the wallet's count of statements before this write
  statementsNew: (p) =>
    `insert into credit_statement (id, wallet_id, ordinal, ${STATEMENT_COLUMNS.join(", ")})
     select x.id, $1, (select count(*) from credit_statement c where c.wallet_id = $1) + x.ordinal, ${STATEMENT_COLUMNS.map((c) => `x.${c}`).join(", ")}
       from json_populate_recordset(null::credit_statement, ${p}::json) x`,
  holdsClosed: (p) =>
    `update credit_authorization a set status = x.status, captured_amount = x.captured_amount, released_amount = x.released_amount, closed_at = x.closed_at
       from json_populate_recordset(null::credit_authorization, ${p}::json) x where ${byKeys("a.authorization_id", "authorization_id", p)} and a.authorization_id = x.authorization_id`,
  authorization: (p) => insert("credit_authorization", AUTHORIZATION_COLUMNS, p),
  charge: (p) => insert("credit_charge", CHARGE_COLUMNS, p),
  payment: (p) => insert("credit_payment", PAYMENT_COLUMNS, p),
  // the refund's row, and its amount added to the authorization's refunded_amount (the table's check keeps it within captured_amount)
  refund: (p) => [
    insert("credit_refund", REFUND_COLUMNS, p),
    `update credit_authorization a set refunded_amount = a.refunded_amount + x.amount
       from json_populate_recordset(null::credit_refund, ${p}::json) x where ${byKeys("a.authorization_id", "authorization_id", p)} and a.authorization_id = x.authorization_id`,
  ],
};

const cache = new Map<string, PreparedStatement>();

/** The text of the write of the parts `present` (in {@link WRITE_PARTS} order). */
function writeText(present: readonly WritePart[]): string {
  const ctes = present.flatMap((part, i) => [PART_SQL[part](`$${i + 3}`)].flat().map((sql, j) => `part${i}${j === 0 ? "" : `_${j}`} as (${sql})`));
  const update = `update credit_wallet w set ${assignments(WALLET_COLUMNS)} from json_populate_record(null::credit_wallet, $2::json) x where w.wallet_id = $1`;
  return ctes.length > 0 ? `with ${ctes.join(", ")} ${update}` : update;
}

/**
 * The write statement of `shape`: `$1` the wallet id, `$2` the wallet's columns (one JSON object),
 * then one JSON array per part present, in {@link WRITE_PARTS} order. Built once per shape (a
 * shape's text and name are a function of the shape alone: at most 2^8 statements, a few in
 * practice). The bench's authorization baseline (scripts/bench/baseline-authorizations.ts) runs
 * these same texts.
 */
export function writeStatement(shape: WriteShape): PreparedStatement {
  const present = WRITE_PARTS.filter((part) => shape[part]);
  const key = present.join(",");
  let statement = cache.get(key);
  if (!statement) {
    statement = { name: `credit_write_${present.map((part) => WRITE_PARTS.indexOf(part)).join("") || "wallet"}`, text: writeText(present) };
    cache.set(key, statement);
  }
  return statement;
}

/** The write of the parts `present` and no other. */
function writeOf(...present: WritePart[]): PreparedStatement {
  const shape = {} as Record<WritePart, boolean>;
  for (const part of WRITE_PARTS) shape[part] = present.includes(part);
  return writeStatement(shape);
}

/** The write of the wallet row alone (a block, an unblock, a catch-up with no event). */
export const WRITE_WALLET = writeOf();
/** The write of the wallet row and events (a limit change, a catch-up step, an override). */
export const WRITE_EVENTS = writeOf("events");
/** The write of an authorization's approval: the wallet, its event, the authorization row. */
export const WRITE_APPROVAL = writeOf("events", "authorization");
/** The write of a capture or a void: the wallet, its events, the hold closed. */
export const WRITE_CAPTURE = writeOf("events", "holdsClosed");
/** The write of a charge: the wallet and the charge row (a charge has no event). */
export const WRITE_CHARGE = writeOf("charge");
/** The write of a payment: the wallet, its events, the payment row. */
export const WRITE_PAYMENT = writeOf("events", "payment");
/** The write of a refund: the wallet, its event, the refund row and the authorization's refunded amount. */
export const WRITE_REFUND = writeOf("events", "refund");

/** The shape of a write from its parts' rows: a part is present when it has rows. */
export function shapeOf(rows: Readonly<Record<WritePart, readonly unknown[]>>): WriteShape {
  const shape = {} as Record<WritePart, boolean>;
  for (const part of WRITE_PARTS) shape[part] = rows[part].length > 0;
  return shape;
}

/** The operation's own row, written with its step: an authorization, a charge, a payment or a refund (entity shapes). */
export interface OperationRows {
  authorization?: CreditAuthorization;
  charge?: CreditCharge;
  payment?: CreditPayment;
  refund?: CreditRefund;
}

/**
 * Persists what the engine returned for a locked wallet, in the caller's transaction, in one
 * statement ({@link writeStatement}): the wallet row (`walletColumns`), every touched statement (loaded
 * ones updated by id, new ones inserted with their ordinal; unique (wallet, cut_date)), every hold
 * the engine closed onto its authorization row (status, captured and released amounts,
 * `closed_at`), every event as a `credit_event` row (new UUID, the engine's `sequence` and
 * `walletDetails_after`, `created_at` = the event's instant, `customer_id`), and `rows`. The loaded
 * wallet, statements and holds are updated in place, as read back.
 * @param updatedAt the operation's instant (the tenant's clock).
 * @param requestedAt when a pending override stored by this change was requested.
 * @throws Error when the engine closed a hold that was not loaded (a broken invariant); the driver's error.
 */
export async function persistStep(tx: Tx, locked: LockedWallet, result: StepResult, updatedAt: Date, requestedAt?: Date, rows: OperationRows = {}): Promise<void> {
  const { row, open, product } = locked;
  const walletValues = walletColumns(row, result.state, product, updatedAt, requestedAt);
  const updated: object[] = [];
  const created: object[] = [];
  for (const st of result.statements) {
    const loaded = open[st.index];
    const values = statementColumns(st);
    if (st.index < open.length && loaded) {
      Object.assign(loaded, values);
      updated.push({ id: loaded.id, ...values });
    } else {
      created.push({ id: randomUUID(), ordinal: st.index - open.length, ...values });
    }
  }
  const closed = result.closedHolds.map((c) => {
    const auth = locked.holds.find((a) => a.authorizationId === c.authorizationId);
    if (!auth) throw new Error(`credit wallet ${row.walletId}: the engine closed hold ${c.authorizationId}, which was not loaded`);
    return Object.assign(auth, { status: c.kind, capturedAmount: c.capturedAmount, releasedAmount: c.releasedAmount, closedAt: c.at });
  });
  const events = result.events.map((e) => ({
    id: randomUUID(),
    walletId: row.walletId,
    customerId: row.customerId,
    sequence: e.sequence,
    type: e.type,
    amount: e.amount,
    direction: e.direction,
    affectsBalance: e.affectsBalance,
    walletDetailsAfter: e.walletDetails_after,
    cardId: e.cardId ?? null,
    unappliedAmount: e.unappliedAmount ?? null,
    createdAt: e.at,
  }));
  const parts: Record<WritePart, readonly object[]> = {
    events,
    statementsUpdated: updated,
    statementsNew: created,
    holdsClosed: closed,
    authorization: rows.authorization ? [rows.authorization] : [],
    charge: rows.charge ? [rows.charge] : [],
    payment: rows.payment ? [rows.payment] : [],
    refund: rows.refund ? [rows.refund] : [],
  };
  const values: unknown[] = [row.walletId, JSON.stringify(columnsOf(walletValues))];
  for (const part of WRITE_PARTS) if (parts[part].length > 0) values.push(JSON.stringify(parts[part].map(columnsOf)));
  await tx.rows(writeStatement(shapeOf(parts)), values);
  Object.assign(row, walletValues);
  countEvents(tx, events.length);
}

/**
 * The one statement that writes an engine step of a credit wallet change (./store.ts `persistStep`;
 * docs/performance.md "Authorizations and credit changes"): the wallet row updated, with the step's
 * other rows written in data-modifying CTEs of the same statement — the events (`credit_event`, the
 * notification outbox), the open statements updated and the new ones inserted, the holds closed,
 * and the operation's own row (an authorization, a charge or a payment). Each part's rows are one
 * JSON array parameter read with `json_populate_recordset` (columns by name; instants as ISO 8601
 * text, cents as JSON numbers, rates as decimal text).
 *
 * The statement holds only the parts a step has ({@link WriteShape}), so PostgreSQL plans no empty
 * part; each shape is one prepared statement of its own name (a few in practice: an authorization's
 * approval, its capture, a charge, a payment, a catch-up step).
 */
import type { PreparedStatement } from "../../../db/sql.js";

/** The parts of a write beside the wallet row, in the order of their parameters (after `$1` wallet id, `$2` wallet columns). */
export const WRITE_PARTS = ["events", "statementsUpdated", "statementsNew", "holdsClosed", "authorization", "charge", "payment"] as const;
/** A part of a write. */
export type WritePart = (typeof WRITE_PARTS)[number];
/** Which parts a write has. */
export type WriteShape = Readonly<Record<WritePart, boolean>>;

/** The columns of `credit_wallet` a change sets (./mapping.ts `walletColumns`). */
const WALLET_COLUMNS = [
  "status", "status_before_default", "credit_limit", "available_amount", "principal_outstanding", "interest_outstanding", "amount_held",
  "cycle_start", "sum_of_daily_balance", "last_close_at", "next_cut_at", "interest_rate_nominal", "interest_rate_moroso",
  "fixed_interest_nominal", "fixed_interest_moroso", "minimum_payment_rate", "fixed_minimum_payment", "specs_overridden",
  "pending_specs", "sequence", "as_of", "updated_at",
];

/** The columns of `credit_statement` an engine statement sets (./mapping.ts `statementColumns`). */
const STATEMENT_COLUMNS = [
  "cut_date", "cycle_start", "days_in_cycle", "sum_of_daily_balance", "principal_at_cut", "interest_outstanding_at_cut",
  "interest_accrual_method", "compound", "interest_basis", "interest_rate_nominal", "daily_rate_divisor", "fixed_interest_nominal",
  "minimum_payment_rate", "fixed_minimum_payment", "interest_generated", "minimum_payment", "payment_due_date", "paid_in_cycle",
  "status", "interest_applied", "interest_applied_at", "penal_interest", "interest_rate_moroso", "fixed_interest_moroso", "cured_at",
];

const EVENT_COLUMNS = "id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at";
const AUTHORIZATION_COLUMNS =
  "authorization_id, wallet_id, customer_id, status, decline_reason, amount, captured_amount, released_amount, merchant_name, merchant_mcc, merchant_country, reference, idempotency_key, expires_at, closed_at, created_at";
const CHARGE_COLUMNS = "id, wallet_id, amount, description, idempotency_key, created_at";
const PAYMENT_COLUMNS = "id, wallet_id, amount, applied_to_interest, applied_to_principal, applied_to_overdraft, idempotency_key, created_at";

const assignments = (columns: readonly string[]): string => columns.map((c) => `${c} = x.${c}`).join(", ");
/**
 * `column = any(<the keys of the rows in p>)`: lets PostgreSQL find the rows to update by their
 * primary key. Joined with `json_populate_recordset` alone (estimated at 100 rows, whatever the
 * array holds) the planner prefers a hash join over a sequential scan of the table once it has a
 * few thousand rows: a capture then read every authorization ever made.
 */
const byKeys = (column: string, key: string, p: string): string => `${column} = any(array(select (j->>'${key}')::uuid from json_array_elements(${p}::json) j))`;
const insert = (table: string, columns: string, p: string): string => `insert into ${table} (${columns}) select ${columns} from json_populate_recordset(null::${table}, ${p}::json)`;

/** The CTE of each part, its rows in parameter `p`; `$1` is the wallet id. */
const PART_SQL: Readonly<Record<WritePart, (p: string) => string>> = {
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
};

const cache = new Map<string, PreparedStatement>();

/**
 * The write statement of `shape`: `$1` the wallet id, `$2` the wallet's columns (one JSON object),
 * then one JSON array per part present, in {@link WRITE_PARTS} order. Built once per shape. The
 * bench's authorization baseline (scripts/bench/baseline-authorizations.ts) runs these same texts.
 */
export function writeStatement(shape: WriteShape): PreparedStatement {
  const present = WRITE_PARTS.filter((part) => shape[part]);
  const key = present.join(",");
  let statement = cache.get(key);
  if (!statement) {
    const ctes = present.map((part, i) => `part${i} as (${PART_SQL[part](`$${i + 3}`)})`);
    const update = `update credit_wallet w set ${assignments(WALLET_COLUMNS)} from json_populate_record(null::credit_wallet, $2::json) x where w.wallet_id = $1`;
    statement = {
      name: `credit_write_${present.map((part) => WRITE_PARTS.indexOf(part)).join("") || "wallet"}`,
      text: ctes.length > 0 ? `with ${ctes.join(", ")} ${update}` : update,
    };
    cache.set(key, statement);
  }
  return statement;
}

/** The shape of a write from its parts' rows: a part is present when it has rows. */
export function shapeOf(rows: Readonly<Record<WritePart, readonly unknown[]>>): WriteShape {
  const shape = {} as Record<WritePart, boolean>;
  for (const part of WRITE_PARTS) shape[part] = rows[part].length > 0;
  return shape;
}

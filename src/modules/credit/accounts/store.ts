/**
 * The wallet repository of the credit core (docs/decisions/credit.md "Wallets"): locks one wallet row for the
 * transaction of a change and loads it with its product, the tenant's clock, its open statements and
 * holds into the engine's `WalletState` (./mapping.ts) in one prepared statement, persists what the
 * engine returns (wallet, statements, holds closed, events, the operation's own row) in one more,
 * and sets a wallet aside (docs/security.md "Money stays exact"). Plain SQL on the change's
 * transaction (./sql.ts; docs/performance.md "Authorizations and credit changes"). Money in integer
 * cents; instants UTC.
 */
import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { PreparedStatement } from "../../../db/sql.js";
import type { CreditProductRules, StepResult, WalletState } from "../../../domain/credit/index.js";
import type { CreditAuthorization } from "../authorizations/entities.js";
import type { CreditCharge, CreditPayment, CreditStatement, CreditWallet } from "./entities.js";
import { stateOf, statementColumns, walletColumns } from "./mapping.js";
import { authorizationOfJson, columnsOf, productRulesOfJson, statementOfJson, walletOfJson, type JsonRow } from "./rows.js";
import { countEvents, type CreditTx } from "./sql.js";
import { shapeOf, WRITE_PARTS, writeStatement, type WritePart } from "./write.js";

/** A wallet row locked for the transaction (`select … for update` on its own row only), with its product and open statements. */
export interface LockedWallet {
  row: CreditWallet;
  product: CreditProductRules;
  productCode: string;
  /** Open statements (grace not ended, or defaulted and not cured), oldest cut first; engine index = position. */
  open: CreditStatement[];
  /** Open authorizations (`approved`: the engine's holds), oldest first; loaded only when the wallet holds an amount. */
  holds: CreditAuthorization[];
  state: WalletState;
  /** The tenant's credit core instant read with the wallet (its sandbox clock), or null: real time. */
  clock: Date | null;
}

/** UUID shape of a wallet id: anything else cannot name a wallet (and would not cast to `uuid`). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `walletId` has the shape of a wallet id (a UUID). */
export function isWalletId(walletId: string): boolean {
  return UUID.test(walletId);
}

/**
 * Locks wallet `$1` of tenant `$2` (its own row only, `for update`) and reads, as JSON: the row,
 * its product (unlocked: products are shared rows), the tenant's `credit_clock` instant, its open
 * statements (oldest cut first) and, when it holds an amount, its open authorizations (oldest
 * first). No row when the tenant has no such wallet.
 *
 * `seen_version` is the `xmin` of the wallet row in the statement's snapshot, `row_version` the
 * locked row's: the snapshot is taken when the statement starts, before it waits for the lock, so
 * when a change committed in between (every change updates the wallet row) they differ, and the
 * other reads may be stale: {@link lockWallet} then reads again, under the lock. The bench's
 * authorization baseline (scripts/bench/baseline-authorizations.ts) runs this same text.
 */
export const LOCK_WALLET: PreparedStatement = {
  name: "credit_wallet_lock",
  text: `with locked as (
           select w.*, w.xmin::text as row_version from credit_wallet w where w.wallet_id = $1 and w.customer_id = $2 for update of w
         )
         select row_to_json(l) as wallet,
                (select s.xmin::text from credit_wallet s where s.wallet_id = $1) as seen_version,
                row_to_json(p) as product,
                (select to_json(c."now") from credit_clock c where c.customer_id = $2) as clock,
                coalesce((select json_agg(st order by st.cut_date) from credit_statement st
                           where st.wallet_id = $1 and (st.interest_applied_at is null or (st.status = 'defaulted' and st.cured_at is null))), '[]'::json) as statements,
                case when l.amount_held > 0
                     then coalesce((select json_agg(a order by a.created_at, a.authorization_id) from credit_authorization a
                                     where a.wallet_id = $1 and a.status = 'approved'), '[]'::json)
                     else '[]'::json end as holds
           from locked l join credit_product p on p.id = l.product_id`,
};

/** A row of {@link LOCK_WALLET}. */
interface LockRow {
  wallet: JsonRow & { row_version: string };
  seen_version: string | null;
  product: JsonRow;
  clock: string | null;
  statements: JsonRow[];
  holds: JsonRow[];
}

/**
 * Locks wallet `walletId` of tenant `customerId` (its own row only, `for update`) and loads its
 * product, the tenant's clock, its open statements and, when it holds an amount, its open
 * authorizations into an engine state ({@link LOCK_WALLET}: one statement; a second, under the lock,
 * when a change committed while it waited for the lock). Call inside the transaction of the change.
 * @returns null when the tenant has no such wallet (another tenant's wallet included).
 */
export async function lockWallet(tx: CreditTx, customerId: string, walletId: string): Promise<LockedWallet | null> {
  if (!isWalletId(walletId)) return null;
  const id = walletId.toLowerCase();
  let [read] = await tx.rows<LockRow>(LOCK_WALLET, [id, customerId]);
  if (!read) return null;
  if (read.seen_version !== read.wallet.row_version) [read] = await tx.rows<LockRow>(LOCK_WALLET, [id, customerId]);
  if (!read) return null;
  const row = walletOfJson(read.wallet);
  const open = read.statements.map(statementOfJson);
  const holds = read.holds.map(authorizationOfJson);
  const product = productRulesOfJson(read.product);
  return { row, product, productCode: read.product.code as string, open, holds, state: stateOf(row, open, holds), clock: read.clock === null ? null : new Date(read.clock) };
}

/** The operation's own row, written with its step: an authorization, a charge or a payment (entity shapes). */
export interface OperationRows {
  authorization?: CreditAuthorization;
  charge?: CreditCharge;
  payment?: CreditPayment;
}

/**
 * Persists what the engine returned for a locked wallet, in the caller's transaction, in one
 * statement (./write.ts `writeStatement`): the wallet row (`walletColumns`), every touched statement (loaded
 * ones updated by id, new ones inserted with their ordinal; unique (wallet, cut_date)), every hold
 * the engine closed onto its authorization row (status, captured and released amounts,
 * `closed_at`), every event as a `credit_event` row (new UUID, the engine's `sequence` and
 * `walletDetails_after`, `created_at` = the event's instant, `customer_id`), and `rows`. The loaded
 * wallet, statements and holds are updated in place, as read back.
 * @param updatedAt the operation's instant (the tenant's clock).
 * @param requestedAt when a pending override stored by this change was requested.
 * @throws Error when the engine closed a hold that was not loaded (a broken invariant); the driver's error.
 */
export async function persistStep(tx: CreditTx, locked: LockedWallet, result: StepResult, updatedAt: Date, requestedAt?: Date, rows: OperationRows = {}): Promise<void> {
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
  };
  const values: unknown[] = [row.walletId, JSON.stringify(columnsOf(walletValues))];
  for (const part of WRITE_PARTS) if (parts[part].length > 0) values.push(JSON.stringify(parts[part].map(columnsOf)));
  await tx.rows(writeStatement(shapeOf(parts)), values);
  Object.assign(row, walletValues);
  countEvents(tx, events.length);
}

/** Whether authorization `$1` is wallet `$2`'s (any status). */
const AUTHORIZATION_OF_WALLET: PreparedStatement = {
  name: "credit_authorization_of_wallet",
  text: `select 1 as found from credit_authorization where authorization_id = $1 and wallet_id = $2`,
};

/** Whether authorization `authorizationId` (lower-case UUID) is wallet `walletId`'s, whatever its status, in transaction `tx`. */
export async function isAuthorizationOf(tx: CreditTx, authorizationId: string, walletId: string): Promise<boolean> {
  return (await tx.rows(AUTHORIZATION_OF_WALLET, [authorizationId, walletId])).length > 0;
}

/**
 * Sets wallet `walletId` of tenant `customerId` aside at `at` (the tenant's instant, UTC) with
 * `reason`, unless it already is, in the caller's transaction (docs/security.md "Money stays exact").
 * @returns whether this call set it aside (`marked`) and the reason stored on the row (`stored`:
 *   the earlier one when it already was; `reason` when the row is gone).
 */
export async function setWalletAside(tx: EntityManager, customerId: string, walletId: string, at: Date, reason: string): Promise<{ marked: boolean; stored: string }> {
  const rows = await tx.execute<{ wallet_id: string }[]>(
    `update credit_wallet set set_aside_at = ?, set_aside_reason = ?, updated_at = now()
     where wallet_id = ? and customer_id = ? and set_aside_at is null returning wallet_id`,
    [at, reason, walletId, customerId],
  );
  const [row] = await tx.execute<{ set_aside_reason: string | null }[]>(`select set_aside_reason from credit_wallet where wallet_id = ?`, [walletId]);
  return { marked: rows.length > 0, stored: row?.set_aside_reason ?? reason };
}

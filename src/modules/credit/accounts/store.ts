/**
 * The wallet repository of the credit core (docs/decisions/credit.md "Wallets"): locks one wallet row for the
 * transaction of a change and loads it with its product and open statements into the engine's
 * `WalletState` (./mapping.ts), persists what the engine returns (wallet, statements, events), and
 * sets a wallet aside (docs/security.md "Money stays exact"). Money in integer cents; instants UTC.
 */
import { randomUUID } from "node:crypto";
import { LockMode } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { CreditProductRules, StepResult, WalletState } from "../../../domain/credit/index.js";
import { CreditAuthorization } from "../authorizations/entities.js";
import { CreditProduct } from "../products/entities.js";
import { CreditEvent, CreditStatement, CreditWallet } from "./entities.js";
import { productRules, stateOf, statementColumns, walletColumns } from "./mapping.js";

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
}

/** UUID shape of a wallet id: anything else cannot name a wallet (and would not cast to `uuid`). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `walletId` has the shape of a wallet id (a UUID). */
export function isWalletId(walletId: string): boolean {
  return UUID.test(walletId);
}

/**
 * Locks wallet `walletId` of tenant `customerId` (its own row only, `for update`) and loads its
 * product (unlocked: products are shared rows), open statements and, when it holds an amount, its
 * open authorizations into an engine state.
 * Call inside the transaction of the change.
 * @returns null when the tenant has no such wallet (another tenant's wallet included).
 */
export async function lockWallet(tx: EntityManager, customerId: string, walletId: string): Promise<LockedWallet | null> {
  if (!isWalletId(walletId)) return null;
  const row = await tx.findOne(CreditWallet, { walletId: walletId.toLowerCase(), customerId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (!row) return null;
  const productRow = await tx.findOneOrFail(CreditProduct, { id: row.productId });
  const open = await tx.find(
    CreditStatement,
    { walletId: row.walletId, $or: [{ interestAppliedAt: null }, { status: "defaulted", curedAt: null }] },
    { orderBy: { cutDate: "asc" }, refresh: true },
  );
  const holds = row.amountHeld > 0
    ? await tx.find(CreditAuthorization, { walletId: row.walletId, status: "approved" }, { orderBy: { createdAt: "asc", authorizationId: "asc" }, refresh: true })
    : [];
  const product = productRules(productRow);
  return { row, product, productCode: productRow.code, open, holds, state: stateOf(row, open, holds) };
}

/** Events written through {@link persistStep} per transaction, so the caller can start their delivery after commit. */
const eventsWritten = new WeakMap<EntityManager, number>();

/** How many `credit_event` rows {@link persistStep} has written in transaction `tx` so far. */
export function eventsWrittenIn(tx: EntityManager): number {
  return eventsWritten.get(tx) ?? 0;
}

/**
 * Persists what the engine returned for a locked wallet, in the caller's transaction: the wallet
 * row (`walletColumns`), every touched statement (loaded ones updated by id, new ones inserted with
 * their ordinal; unique (wallet, cut_date)), and every event as a `credit_event` row (new UUID,
 * the engine's `sequence` and `walletDetails_after`, `created_at` = the event's instant,
 * `customer_id`), and every hold the engine closed onto its authorization row (status, captured and
 * released amounts, `closed_at`). Flushes.
 * @param updatedAt the operation's instant (the tenant's clock).
 * @param requestedAt when a pending override stored by this change was requested.
 */
export async function persistStep(tx: EntityManager, locked: LockedWallet, result: StepResult, updatedAt: Date, requestedAt?: Date): Promise<void> {
  const { row, open, product } = locked;
  if (result.events.length > 0) eventsWritten.set(tx, eventsWrittenIn(tx) + result.events.length);
  tx.assign(row, walletColumns(row, result.state, product, updatedAt, requestedAt));
  let ordinalBase: number | null = null;
  for (const st of result.statements) {
    const loaded = open[st.index];
    if (st.index < open.length && loaded) {
      tx.assign(loaded, statementColumns(st));
      continue;
    }
    if (ordinalBase === null) ordinalBase = await nextOrdinal(tx, row.walletId);
    tx.create(CreditStatement, {
      id: randomUUID(),
      walletId: row.walletId,
      ordinal: ordinalBase + (st.index - open.length),
      ...statementColumns(st),
    });
  }
  for (const closed of result.closedHolds) {
    const auth = locked.holds.find((a) => a.authorizationId === closed.authorizationId);
    if (!auth) throw new Error(`credit wallet ${row.walletId}: the engine closed hold ${closed.authorizationId}, which was not loaded`);
    tx.assign(auth, { status: closed.kind, capturedAmount: closed.capturedAmount, releasedAmount: closed.releasedAmount, closedAt: closed.at });
  }
  for (const e of result.events) {
    tx.create(CreditEvent, {
      id: randomUUID(),
      walletId: row.walletId,
      customerId: row.customerId,
      sequence: e.sequence,
      type: e.type,
      amount: e.amount,
      direction: e.direction,
      affectsBalance: e.affectsBalance,
      walletDetailsAfter: e.walletDetails_after as unknown as Record<string, unknown>,
      createdAt: e.at,
    });
  }
  await tx.flush();
}

/** The ordinal the wallet's next new statement gets: the number of its statements so far. */
async function nextOrdinal(tx: EntityManager, walletId: string): Promise<number> {
  return tx.count(CreditStatement, { walletId });
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

/**
 * The statements of the cards on credit wallets on their table `credit_card` (./service.ts;
 * docs/decisions/cards.md). Issue runs under the wallet's lock (../accounts/repository/lock.ts), so
 * counting the open cards and inserting one cannot race another issue on the same wallet; an
 * update locks the card's own row. Reads of one card or a page are the ORM's.
 *
 * Authorize Card reads, under the wallet's lock, the card with what its decision needs
 * ({@link CARD_DECISION}); that statement also reads `credit_authorization`
 * (../authorizations/): the first authorization of the processor's reference and the card's
 * spend in its windows, in the same round trip.
 */
import type { PreparedStatement, Sql } from "../../../db/sql.js";
import type { CardSpend, CardState, SpendControls } from "../../../domain/cards.js";
import type { CreditAuthorization } from "../authorizations/entities.js";
import { authorizationOfJson, type JsonRow } from "../accounts/repository/rows.js";

/** Number of open cards (`ACTIVE` or `PAUSED`) of wallet `$1`. */
export const COUNT_OPEN_CARDS: PreparedStatement = {
  name: "credit_card_count_open",
  text: `select count(*)::int as open from credit_card where wallet_id = $1 and state in ('ACTIVE', 'PAUSED')`,
};

/**
 * Inserts a card; nothing when the tenant already has a card with that number's fingerprint
 * (the caller draws another number). Returns the card id when inserted.
 */
export const INSERT_CARD: PreparedStatement = {
  name: "credit_card_insert",
  text: `insert into credit_card (card_id, wallet_id, customer_id, state, cardholder_name, last4, exp_month, exp_year, pan_sealed, pan_fingerprint, spend_controls, memo, created_at, updated_at, closed_at)
         values ($1, $2, $3, 'ACTIVE', $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $12, null)
         on conflict (customer_id, pan_fingerprint) do nothing
         returning card_id`,
};

/** Locks card `$1` of tenant `$2` (its own row, `for update`) and reads its state, controls and memo. */
export const LOCK_CARD: PreparedStatement = {
  name: "credit_card_lock",
  text: `select state, spend_controls, memo from credit_card where card_id = $1 and customer_id = $2 for update`,
};

/** Writes the state, controls and memo of card `$1` at `$5` (`closed_at` set when it becomes `CLOSED`). */
export const UPDATE_CARD: PreparedStatement = {
  name: "credit_card_update",
  text: `update credit_card set state = $2::varchar, spend_controls = $3::jsonb, memo = $4, updated_at = $5::timestamptz,
                closed_at = case when $2::varchar = 'CLOSED' then $5::timestamptz else closed_at end
          where card_id = $1`,
};

/** Closes every open card of wallet `$1` at `$2` (the wallet's dissolution). */
export const CLOSE_WALLET_CARDS: PreparedStatement = {
  name: "credit_card_close_wallet",
  text: `update credit_card set state = 'CLOSED', updated_at = $2, closed_at = $2 where wallet_id = $1 and state in ('ACTIVE', 'PAUSED')`,
};

/** The open cards of wallet `walletId` (lower-case UUID), in transaction `tx`. */
export async function countOpenCards(tx: Sql, walletId: string): Promise<number> {
  const [row] = await tx.rows<{ open: number }>(COUNT_OPEN_CARDS, [walletId]);
  return row?.open ?? 0;
}

/** A card to insert (its number already sealed and fingerprinted). */
export interface NewCardRow {
  cardId: string;
  walletId: string;
  customerId: string;
  cardholderName: string;
  last4: string;
  expMonth: number;
  expYear: number;
  panSealed: string;
  panFingerprint: string;
  spendControls: SpendControls | null;
  memo: string | null;
  createdAt: Date;
}

/** Inserts card `row`; false when the tenant already has a card with that number (nothing written). */
export async function insertCard(tx: Sql, row: NewCardRow): Promise<boolean> {
  const inserted = await tx.rows(INSERT_CARD, [
    row.cardId, row.walletId, row.customerId, row.cardholderName, row.last4, row.expMonth, row.expYear,
    row.panSealed, row.panFingerprint, row.spendControls === null ? null : JSON.stringify(row.spendControls), row.memo, row.createdAt,
  ]);
  return inserted.length > 0;
}

/** What an update may change of a card: its state, controls (cents) and memo. */
export interface CardSettings {
  state: CardState;
  spendControls: SpendControls | null;
  memo: string | null;
}

/** Locks card `cardId` (lower-case UUID) of tenant `customerId`; its settings, or null when the tenant has no such card. */
export async function lockCard(tx: Sql, cardId: string, customerId: string): Promise<CardSettings | null> {
  const [row] = await tx.rows<{ state: CardState; spend_controls: SpendControls | null; memo: string | null }>(LOCK_CARD, [cardId, customerId]);
  return row ? { state: row.state, spendControls: row.spend_controls, memo: row.memo } : null;
}

/** Writes a card's state, controls and memo at `at`. */
export async function updateCard(tx: Sql, cardId: string, change: CardSettings, at: Date): Promise<void> {
  await tx.run(UPDATE_CARD, [cardId, change.state, change.spendControls === null ? null : JSON.stringify(change.spendControls), change.memo, at]);
}

/** Closes the open cards of wallet `walletId` (lower-case UUID) at `at`, in the transaction of its dissolution; the number closed. */
export async function closeWalletCards(tx: Sql, walletId: string, at: Date): Promise<number> {
  return tx.run(CLOSE_WALLET_CARDS, [walletId, at]);
}

/** The wallet of card `$1` of tenant `$2` (a card never changes wallet); no row when the tenant has no such card. */
export const CARD_WALLET: PreparedStatement = {
  name: "credit_card_wallet",
  text: `select wallet_id from credit_card where card_id = $1 and customer_id = $2`,
};

/**
 * Card `$1` of tenant `$2` as an authorization's decision reads it, run under its wallet's lock:
 * state, expiry and controls; the tenant's authorization of processor reference `$3` if one exists
 * (`prior`, the row as JSON); and when the card has a daily or monthly control, its spend since the
 * day's start `$4` and the month's start `$5` (approved amounts less what was released: a void, an
 * expiry or a partial capture's rest; declines count nothing), read by the index of the card's
 * authorizations by creation.
 */
export const CARD_DECISION: PreparedStatement = {
  name: "credit_card_decision",
  text: `select c.state, c.exp_month, c.exp_year, c.spend_controls,
                (select row_to_json(a) from credit_authorization a where a.customer_id = $2 and a.processor_reference = $3) as prior,
                case when c.spend_controls ?| array['daily', 'monthly'] then
                  (select json_build_object('daily', coalesce(sum(a.amount - a.released_amount) filter (where a.created_at >= $4), 0),
                                            'monthly', coalesce(sum(a.amount - a.released_amount), 0))
                     from credit_authorization a
                    where a.card_id = $1 and a.created_at >= $5 and a.status <> 'declined')
                end as spent
           from credit_card c where c.card_id = $1 and c.customer_id = $2`,
};

/** The wallet (lower-case UUID) of card `cardId` (lower-case UUID) of tenant `customerId`, or null. */
export async function cardWallet(sql: Sql, cardId: string, customerId: string): Promise<string | null> {
  const [row] = await sql.rows<{ wallet_id: string }>(CARD_WALLET, [cardId, customerId]);
  return row?.wallet_id ?? null;
}

/** A card as an authorization's decision reads it ({@link CARD_DECISION}). */
export interface CardDecisionRead {
  state: CardState;
  expMonth: number;
  expYear: number;
  spendControls: SpendControls | null;
  /** The tenant's authorization of the processor reference, if one exists. */
  prior: CreditAuthorization | null;
  /** The card's spend in the windows, cents; zero when it has no daily or monthly control. */
  spend: CardSpend;
}

/**
 * Card `cardId` of tenant `customerId` for the decision on authorization `processorReference` at
 * the windows `dayStart` / `monthStart` (src/domain/cards.ts `spendWindows`), in the transaction
 * that holds its wallet's lock. @returns null when the tenant has no such card.
 */
export async function cardDecisionRead(tx: Sql, cardId: string, customerId: string, processorReference: string, windows: { dayStart: Date; monthStart: Date }): Promise<CardDecisionRead | null> {
  const [row] = await tx.rows<{ state: CardState; exp_month: number; exp_year: number; spend_controls: SpendControls | null; prior: JsonRow | null; spent: { daily: number | string; monthly: number | string } | null }>(
    CARD_DECISION,
    [cardId, customerId, processorReference, windows.dayStart, windows.monthStart],
  );
  if (!row) return null;
  return {
    state: row.state,
    expMonth: row.exp_month,
    expYear: row.exp_year,
    spendControls: row.spend_controls,
    prior: row.prior === null ? null : authorizationOfJson(row.prior),
    spend: { daily: Number(row.spent?.daily ?? 0), monthly: Number(row.spent?.monthly ?? 0) },
  };
}

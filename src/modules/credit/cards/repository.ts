/**
 * The statements of the cards on credit wallets on their table `credit_card` (./service.ts;
 * docs/decisions/cards.md). Issue runs under the wallet's lock (../accounts/repository/lock.ts), so
 * counting the open cards and inserting one cannot race another issue on the same wallet; an
 * update locks the card's own row. Reads of one card or a page are the ORM's.
 */
import type { PreparedStatement, Sql } from "../../../db/sql.js";
import type { CardState, SpendControls } from "../../../domain/cards.js";

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

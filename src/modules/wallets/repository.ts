/**
 * The wallets module's statements (docs/architecture.md "Reaching the database") on its tables
 * `wallet`, `wallet_address` and `wallet_transaction`: a wallet's balances in one statement (the
 * hot read, docs/performance.md "What keeps the request path cheap"), and the columns other
 * modules' combined statements write a wallet transaction with.
 */
import type { Db, PreparedStatement, Sql } from "../../db/sql.js";
import type { BalanceCacheRow } from "../ledger/service.js";
import type { WalletState, WalletStateView, WalletStatus } from "../../domain/wallet-states.js";

/** A row of {@link walletBalanceRows}: the wallet, and one of its balance-cache accounts (null columns when it has none). */
export interface WalletBalanceRow extends BalanceCacheRow {
  wallet_id: string;
  user_id: string;
  status: WalletStatus;
  status_reason: string | null;
}

/**
 * A wallet of a customer (`$1` wallet id, `$2` customer id) with its balance-cache accounts
 * (`ledger_account` rows of buckets `available` and `held`) and what it owes (the ledger's
 * `wallet_deficit` rows, as bucket `deficit`: docs/decisions/live-chains.md "Reorgs"), in currency
 * order.
 */
export const WALLET_BALANCE: PreparedStatement = {
  name: "wallet_balance",
  text: `select w.wallet_id, w.user_id, w.status, w.status_reason, a.currency, a.bucket, a.balance
           from wallet w left join (
             select l.wallet_id, l.currency, l.bucket, l.balance::text as balance from ledger_account l where l.wallet_id = $1::uuid and l.bucket in ('available', 'held')
             union all
             select d.wallet_id, d.currency, 'deficit', d.amount::text from wallet_deficit d where d.wallet_id = $1::uuid
           ) a on a.wallet_id = w.wallet_id
          where w.wallet_id = $1::uuid and w.customer_id = $2
          order by a.currency, a.bucket`,
};

/**
 * Wallet `walletId` (a UUID, lower-case) of `customerId` with its balance-cache rows, in currency
 * then bucket order; no row when the customer has no such wallet. @throws the driver's error.
 */
export function walletBalanceRows(statements: Db, walletId: string, customerId: string): Promise<WalletBalanceRow[]> {
  return statements.rows<WalletBalanceRow>(WALLET_BALANCE, [walletId, customerId]);
}

/** The columns of a `wallet_transaction` row, in the order of its values (the id is generated). */
export const TRANSACTION_COLUMNS = [
  "wallet_id", "customer_id", "network", "address", "action", "status", "currency", "amount", "fees", "net_proceeds", "price",
  "balance_after", "hash", "memo", "description", "order_id", "trade_id", "idempotency_id", "journal_entry_id", "created_at",
] as const;

/**
 * SQL: inserts `rows` wallet transactions, each of the {@link TRANSACTION_COLUMNS} in order, from
 * placeholder `$from` on: a fragment of another module's combined statement, composed when that
 * statement is defined.
 */
export function insertTransactionsSql(from: number, rows = 1): string {
  const values = Array.from({ length: rows }, (_, r) => `(${TRANSACTION_COLUMNS.map((_, i) => `$${from + r * TRANSACTION_COLUMNS.length + i}`).join(", ")})`);
  return `insert into wallet_transaction (${TRANSACTION_COLUMNS.map((c) => `"${c}"`).join(", ")}) values ${values.join(", ")}`;
}

/**
 * A new wallet: `$1` id, `$2` customer, `$3` user, `$4` vault wallet, `$5` name, `$6` its
 * `nameKey`, `$7` description, `$8` type, `$9` networks (JSON text), `$10` status, `$11` the
 * instant. A name key the user has already fails on `wallet_user_name_key_unique`.
 */
export const INSERT_WALLET: PreparedStatement = {
  name: "wallet_insert",
  text: `insert into wallet (wallet_id, customer_id, user_id, vault_wallet_id, name, name_key, description, wallet_type, networks, status, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $11)`,
};

/** A deposit address of a wallet: `$1` id, `$2` wallet, `$3` network, `$4` currency, `$5` address, `$6` the instant. */
export const INSERT_WALLET_ADDRESS: PreparedStatement = {
  name: "wallet_insert_address",
  text: `insert into wallet_address (address_id, wallet_id, network, currency, address, created_at) values ($1, $2, $3, $4, $5, $6)`,
};

/** The wallet (and its customer) holding currency `$3` at address `$2` on network `$1`; no row when none does. */
export const ADDRESS_HOLDER: PreparedStatement = {
  name: "wallet_address_holder",
  text: `select w.wallet_id, w.customer_id from wallet_address a join wallet w on w.wallet_id = a.wallet_id
          where a.network = $1 and a.address = $2 and a.currency = $3 limit 1`,
};

/** One wallet transaction ({@link TRANSACTION_COLUMNS}, `$1…$20`). @returns its generated id. */
export const INSERT_TRANSACTION: PreparedStatement = { name: "wallet_insert_transaction", text: `${insertTransactionsSql(1)} returning id` };

/** A wallet to insert (the `wallet` row's fields; `networks` its `networks[]`). */
export interface WalletWrite {
  walletId: string;
  customerId: string;
  userId: string;
  vaultWalletId: string;
  name: string;
  nameKey: string;
  description: string | null;
  walletType: "virtual" | "real";
  networks: readonly { name: string; currency: string }[];
  status: WalletStatus;
  createdAt: Date;
}

/** Inserts wallet `w` in `tx`. @throws the driver's unique violation (23505, `wallet_user_name_key_unique`) for a name key the user has. */
export async function insertWallet(tx: Sql, w: WalletWrite): Promise<void> {
  await tx.run(INSERT_WALLET, [w.walletId, w.customerId, w.userId, w.vaultWalletId, w.name, w.nameKey, w.description, w.walletType, JSON.stringify(w.networks), w.status, w.createdAt]);
}

/** Inserts a deposit address of wallet `walletId`, in `tx`. */
export async function insertWalletAddress(tx: Sql, a: { addressId: string; walletId: string; network: string; currency: string; address: string; createdAt: Date }): Promise<void> {
  await tx.run(INSERT_WALLET_ADDRESS, [a.addressId, a.walletId, a.network, a.currency, a.address, a.createdAt]);
}

/** The wallet holding `currency` at `address` on `network`, or null. */
export async function addressHolder(sql: Sql, network: string, address: string, currency: string): Promise<{ walletId: string; customerId: string } | null> {
  const [row] = await sql.rows<{ wallet_id: string; customer_id: string }>(ADDRESS_HOLDER, [network, address, currency]);
  return row ? { walletId: row.wallet_id, customerId: row.customer_id } : null;
}

/** A wallet transaction to insert: the `wallet_transaction` row's fields but its id (amounts decimal text, `createdAt` UTC). */
export interface TransactionWrite {
  walletId: string;
  customerId: string;
  network: string;
  address: string;
  action: string;
  status: string;
  currency: string;
  amount: string;
  fees: string;
  netProceeds: string;
  price: string;
  balanceAfter: string;
  hash: string;
  memo: string;
  description: string;
  orderId: string;
  tradeId: string;
  idempotencyId: string | null;
  journalEntryId: number | null;
  createdAt: Date;
}

/** Inserts wallet transaction `t` in `tx`. @returns its id. */
export async function insertTransaction(tx: Sql, t: TransactionWrite): Promise<number> {
  const [row] = await tx.rows<{ id: string }>(INSERT_TRANSACTION, [
    t.walletId, t.customerId, t.network, t.address, t.action, t.status, t.currency, t.amount, t.fees, t.netProceeds, t.price,
    t.balanceAfter, t.hash, t.memo, t.description, t.orderId, t.tradeId, t.idempotencyId, t.journalEntryId, t.createdAt,
  ]);
  return Number(row?.id);
}

/** A wallet's owner and stored state, as a state call reads it (`$1` the wallet, locked `FOR UPDATE`). */
export interface WalletStateRow extends WalletState {
  walletId: string;
  customerId: string;
  userId: string;
}

/**
 * Wallet `$1` with its owner and state, its row locked (`FOR UPDATE`) until the transaction ends: a
 * state call waits for the movements that hold the row's share lock ({@link SHARE_WALLET_STATES})
 * and they wait for it.
 */
export const LOCK_WALLET_STATE: PreparedStatement = {
  name: "wallet_lock_state",
  text: `select wallet_id, customer_id, user_id, status, status_reason, suspended_status, suspended_reason from wallet where wallet_id = $1::uuid for update`,
};

/**
 * Wallet `$1`'s new state: `$2` status, `$3` its reason, `$4`/`$5` the state to reinstate, `$6` the
 * instant. An `INACTIVE` wallet gives up its name key, so the user may name a new wallet the same.
 */
export const UPDATE_WALLET_STATE: PreparedStatement = {
  name: "wallet_update_state",
  text: `update wallet set status = $2::varchar, status_reason = $3, suspended_status = $4, suspended_reason = $5,
                name_key = case when $2::varchar = 'INACTIVE' then null else name_key end, updated_at = $6
          where wallet_id = $1::uuid`,
};

/**
 * The states of wallets `$1` (an array of UUIDs), each row share-locked (`FOR SHARE`, in id order)
 * until the transaction ends: a movement's guard. Shares do not wait for each other; a state call's
 * `FOR UPDATE` waits for them, and they for it.
 */
export const SHARE_WALLET_STATES: PreparedStatement = {
  name: "wallet_share_states",
  text: `select wallet_id, status, status_reason from wallet where wallet_id = any($1::uuid[]) order by wallet_id for share`,
};

/** Wallet `walletId` (a UUID) with its owner and state, locked for `tx`; null when there is none. */
export async function lockWalletState(tx: Sql, walletId: string): Promise<WalletStateRow | null> {
  const [row] = await tx.rows<{ wallet_id: string; customer_id: string; user_id: string; status: WalletStatus; status_reason: string | null; suspended_status: WalletStatus | null; suspended_reason: string | null }>(LOCK_WALLET_STATE, [walletId]);
  if (!row) return null;
  return {
    walletId: row.wallet_id,
    customerId: row.customer_id,
    userId: row.user_id,
    status: row.status,
    statusReason: row.status_reason,
    suspendedStatus: row.suspended_status,
    suspendedReason: row.suspended_reason,
  };
}

/** Writes wallet `walletId`'s new state `state` at `now`, in `tx`. */
export async function updateWalletState(tx: Sql, walletId: string, state: WalletState, now: Date): Promise<void> {
  await tx.run(UPDATE_WALLET_STATE, [walletId, state.status, state.statusReason, state.suspendedStatus, state.suspendedReason, now]);
}

/** The states of wallets `walletIds` (UUIDs), share-locked for `tx`, by wallet id. */
export async function shareWalletStates(tx: Sql, walletIds: readonly string[]): Promise<Map<string, WalletStateView>> {
  const rows = await tx.rows<{ wallet_id: string; status: WalletStatus; status_reason: string | null }>(SHARE_WALLET_STATES, [walletIds]);
  return new Map(rows.map((r) => [r.wallet_id, { walletId: r.wallet_id, status: r.status, statusReason: r.status_reason }]));
}

/**
 * The wallets holding addresses `$2` (an array, as stored) on network `$1`, one row per address
 * (its oldest entry): the live networks' follower finds deposits with it (src/modules/chains/).
 */
export const ADDRESS_HOLDERS: PreparedStatement = {
  name: "wallet_address_holders",
  text: `select distinct on (a.address) a.address, w.wallet_id, w.customer_id from wallet_address a join wallet w on w.wallet_id = a.wallet_id
          where a.network = $1 and a.address = any($2::text[]) order by a.address, a.created_at, a.address_id`,
};

/** The wallets holding `addresses` (as stored) on `network`, by address as stored. */
export async function addressHolders(sql: Sql, network: string, addresses: readonly string[]): Promise<Map<string, { walletId: string; customerId: string }>> {
  if (addresses.length === 0) return new Map();
  const rows = await sql.rows<{ address: string; wallet_id: string; customer_id: string }>(ADDRESS_HOLDERS, [network, [...new Set(addresses)]]);
  return new Map(rows.map((r) => [r.address, { walletId: r.wallet_id, customerId: r.customer_id }]));
}

/** Deposit transactions `$1` (ids) take status `$2` (`pending`, `orphaned`): a live deposit's life before its credit (a `reversed` one mined again turns `pending`). */
export const SET_DEPOSIT_STATUS: PreparedStatement = {
  name: "wallet_set_deposit_status",
  text: `update wallet_transaction set status = $2 where id = any($1::bigint[]) and action = 'deposit' and status <> 'done'`,
};

/** Sets deposit transactions `ids` to `status` (never one already `done`). */
export async function setDepositStatus(sql: Sql, ids: readonly number[], status: "pending" | "orphaned"): Promise<void> {
  if (ids.length === 0) return;
  await sql.run(SET_DEPOSIT_STATUS, [ids, status]);
}

/**
 * Credited deposit transaction `$1` is taken back by a reorg (docs/decisions/live-chains.md
 * "Reorgs"): status `reversed`; its customer, address (as stored) and hash. No row unless it was `done`.
 */
export const REVERSE_DEPOSIT_TRANSACTION: PreparedStatement = {
  name: "wallet_reverse_deposit_transaction",
  text: `update wallet_transaction set status = 'reversed' where id = $1 and action = 'deposit' and status = 'done' returning customer_id, address, hash`,
};

/** Turns credited deposit transaction `id` `reversed`. @returns its customer, address and hash, or null when it was not `done`. */
export async function reverseDepositTransaction(sql: Sql, id: number): Promise<{ customerId: string; address: string; hash: string } | null> {
  const [row] = await sql.rows<{ customer_id: string; address: string; hash: string }>(REVERSE_DEPOSIT_TRANSACTION, [id]);
  return row ? { customerId: row.customer_id, address: row.address, hash: row.hash } : null;
}

/** Pending deposit transaction `$1` is credited: status `done`, `$2` the balance after, `$3` its journal entry. No row unless it was pending. */
export const COMPLETE_DEPOSIT: PreparedStatement = {
  name: "wallet_complete_deposit",
  text: `update wallet_transaction set status = 'done', balance_after = $2, journal_entry_id = $3 where id = $1 and action = 'deposit' and status = 'pending'`,
};

/** Marks pending deposit transaction `id` credited. @returns whether it was pending. */
export async function completeDeposit(sql: Sql, id: number, balanceAfter: string, journalEntryId: number): Promise<boolean> {
  return (await sql.run(COMPLETE_DEPOSIT, [id, balanceAfter, journalEntryId])) === 1;
}

/**
 * The confirmations of wallet transactions `$1` (ids) that are live deposits: the follower's head
 * − the deposit's block + 1 (0 when orphaned or reversed). Reads the chains module's `chain_deposit` and
 * `chain_cursor` (docs/decisions/live-chains.md "Deposits"); a transaction of no live deposit has no row.
 */
export const TRANSACTION_CONFIRMATIONS: PreparedStatement = {
  name: "wallet_transaction_confirmations",
  text: `select d.wallet_transaction_id::text as id,
                case when d.status in ('orphaned', 'reversed') then 0 else greatest(c.head - d.block_height + 1, 0) end::text as confirmations
           from chain_deposit d left join chain_cursor c on c.network = d.network
          where d.wallet_transaction_id = any($1::bigint[])`,
};

/** The confirmations of those of wallet transactions `ids` that are live deposits, by id. */
export async function transactionConfirmations(sql: Sql, ids: readonly number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  const rows = await sql.rows<{ id: string; confirmations: string | null }>(TRANSACTION_CONFIRMATIONS, [ids]);
  return new Map(rows.map((r) => [Number(r.id), Number(r.confirmations ?? 0)]));
}

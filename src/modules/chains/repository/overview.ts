/**
 * The statements of the live networks' operators' view and reconciliation (docs/architecture.md
 * "Reaching the database"; docs/decisions/live-chains.md "The operators' view", "Reconciliation"):
 * the follower's progress and the open sends per network, the gas wallet's stored balance
 * (`chain_gas_balance`, ./overview-entities.ts), and the deposit addresses of a network (read from
 * the wallets' `wallet_address`). Heights are block numbers; amounts decimal text.
 */
import type { Db, PreparedStatement, Sql } from "../../../db/sql.js";

/**
 * Per network of `$1` (in that order): the follower's highest processed block and last failure
 * (null, null before its first run), and its sends still open (`queued` or `broadcast`).
 */
export const OVERVIEW_ROWS: PreparedStatement = {
  name: "chains_overview_rows",
  text: `select n.network, c.scanned::text, c.last_error,
                (select count(*) from chain_send s where s.network = n.network and s.state in ('queued', 'broadcast'))::text as pending_sends
           from unnest($1::text[]) with ordinality as n(network, position)
           left join chain_cursor c on c.network = n.network
          order by n.position`,
};

/** Network `$1`'s gas wallet `$2` (lower case) held `$3` (8 decimals) of the native coin at block `$4`: the row is written or replaced. */
export const SAVE_GAS_BALANCE: PreparedStatement = {
  name: "chains_save_gas_balance",
  text: `insert into chain_gas_balance (network, address, balance, height, asked_at) values ($1, $2, $3, $4, now())
         on conflict (network) do update set address = excluded.address, balance = excluded.balance, height = excluded.height, asked_at = excluded.asked_at`,
};

/** Per network with a cursor, a stored gas balance or an open send: its sends still open (`queued` or `broadcast`); 0 when none. */
export const PENDING_SENDS: PreparedStatement = {
  name: "chains_pending_sends",
  text: `select network, sum(open)::text as count from (
           select network, 0 as open from chain_cursor
           union all select network, 0 from chain_gas_balance
           union all select network, count(*) from chain_send where state in ('queued', 'broadcast') group by network
         ) t group by network order by network`,
};

/** Per network, the gas wallet's native coin balance as last stored. */
export const GAS_BALANCES: PreparedStatement = {
  name: "chains_gas_balances",
  text: `select network, balance::text from chain_gas_balance order by network`,
};

/** The deposit addresses of network `$1` (every wallet's, lower case, each once), in order. */
export const DEPOSIT_ADDRESSES: PreparedStatement = {
  name: "chains_deposit_addresses",
  text: `select distinct lower(address) as address from wallet_address where network = $1 order by 1`,
};

/** One network's stored figures for the operators' view. */
export interface OverviewRow {
  network: string;
  /** The highest block processed; null before the follower's first run. */
  scanned: number | null;
  /** The follower's last node failure, or null. */
  lastError: string | null;
  /** Sends `queued` or `broadcast`. */
  pendingSends: number;
}

/** The stored figures of `networks`, in that order (one row each). */
export async function overviewRows(sql: Sql, networks: readonly string[]): Promise<OverviewRow[]> {
  const rows = await sql.rows<{ network: string; scanned: string | null; last_error: string | null; pending_sends: string }>(OVERVIEW_ROWS, [networks]);
  return rows.map((r) => ({ network: r.network, scanned: r.scanned === null ? null : Number(r.scanned), lastError: r.last_error, pendingSends: Number(r.pending_sends) }));
}

/** Stores `network`'s gas wallet balance (`balance`, 8-decimal text of the native coin) at block `height`. */
export async function saveGasBalance(sql: Sql, network: string, address: string, balance: string, height: number): Promise<void> {
  await sql.run(SAVE_GAS_BALANCE, [network, address.toLowerCase(), balance, height]);
}

/** Per network, the sends still open (metrics). */
export async function pendingSendCounts(db: Db): Promise<{ network: string; count: number }[]> {
  const rows = await db.rows<{ network: string; count: string }>(PENDING_SENDS);
  return rows.map((r) => ({ network: r.network, count: Number(r.count) }));
}

/** Per network, the gas wallet's stored balance in the native coin (metrics; a float is close enough for a gauge). */
export async function gasBalances(db: Db): Promise<{ network: string; balance: number }[]> {
  const rows = await db.rows<{ network: string; balance: string }>(GAS_BALANCES);
  return rows.map((r) => ({ network: r.network, balance: Number(r.balance) }));
}

/** The deposit addresses of `network`, lower case. */
export async function depositAddresses(sql: Sql, network: string): Promise<string[]> {
  return (await sql.rows<{ address: string }>(DEPOSIT_ADDRESSES, [network])).map((r) => r.address);
}

/**
 * The statements of sweeps (docs/decisions/live-chains.md "Sweeps") on the chains module's tables:
 * which credited deposits wait to be swept (`chain_deposit.swept_by` null), the sweep and its
 * top-up queued as `chain_send` rows (./sends.ts reads and moves them like any send), and the
 * deposits claimed by a sweep or given back when it failed. Amounts of deposits are 8-decimal text
 * in the currency's units; amounts of sends integer text in the chain's units (wei, a token's
 * smallest unit); addresses lower case.
 */
import type { PreparedStatement, Sql } from "../../../db/sql.js";

/**
 * Per deposit address and currency of network `$1`: the credited deposits not yet swept (total
 * `amount`, their ids), for addresses with no open sweep, in the currencies `$3` (text[]) and with
 * a total at least the currency's minimum (`$4` numeric[], in the order of `$3`); the oldest
 * first, at most `$2` groups.
 */
export const DUE_SWEEPS: PreparedStatement = {
  name: "chains_due_sweeps",
  text: `select d.address, d.currency, sum(d.amount)::text as amount, array_agg(d.id::text order by d.id) as ids
           from chain_deposit d
           join unnest($3::text[], $4::numeric[]) as m(currency, minimum) on m.currency = d.currency
          where d.network = $1 and d.status = 'done' and d.swept_by is null
            and not exists (select 1 from chain_send s
                             where s.network = d.network and s.state in ('queued', 'broadcast') and s.kind = 'sweep' and s.from_address = d.address)
          group by d.address, d.currency, m.minimum
         having sum(d.amount) >= m.minimum
          order by min(d.id)
          limit $2`,
};

/** What of the native coin `$3` at address `$2` on network `$1` belongs to deposits still there: pending or credited, not swept (8-decimal text). */
export const UNSWEPT_NATIVE: PreparedStatement = {
  name: "chains_unswept_native",
  text: `select coalesce(sum(amount), 0)::text as amount from chain_deposit
          where network = $1 and address = $2 and currency = $3 and status in ('pending', 'done') and swept_by is null`,
};

/**
 * Queues a top-up on network `$1`: the gas wallet `$2` sends `$4` wei of the native coin `$5` to
 * deposit address `$3`, at `$6`; its id.
 */
export const INSERT_TOPUP: PreparedStatement = {
  name: "chains_insert_topup",
  text: `insert into chain_send (network, kind, from_address, to_address, currency, contract, amount_units, state, tx_hashes, created_at, updated_at)
         values ($1, 'topup', $2, $3, $5, null, $4::numeric, 'queued', '{}', $6, $6)
         returning id::int`,
};

/**
 * Queues a sweep on network `$1`: deposit address `$2` (key at path `$3`) sends `$6` units of
 * `$4` (contract `$5`, null: native) to the hot wallet `$7`, once send `$8` (its top-up, or null)
 * is confirmed, at `$9`; its id.
 */
export const INSERT_SWEEP: PreparedStatement = {
  name: "chains_insert_sweep",
  text: `insert into chain_send (network, kind, from_address, key_path, to_address, currency, contract, amount_units, depends_on, state, tx_hashes, created_at, updated_at)
         values ($1, 'sweep', $2, $3, $7, $4, $5, $6::numeric, $8::bigint, 'queued', '{}', $9, $9)
         returning id::int`,
};

/** Deposits `$2` (bigint[]) claimed by sweep `$1`, those still credited and unswept. */
export const CLAIM_DEPOSITS: PreparedStatement = {
  name: "chains_claim_deposits",
  text: `update chain_deposit set swept_by = $1 where id = any($2::bigint[]) and status = 'done' and swept_by is null`,
};

/** The deposits of sweep `$1` given back (it failed): swept again by a later sweep. */
export const RELEASE_DEPOSITS: PreparedStatement = {
  name: "chains_release_deposits",
  text: `update chain_deposit set swept_by = null where swept_by = $1`,
};

/** A deposit address's credited, unswept deposits in one currency. */
export interface DueSweep {
  /** The deposit address, lower case. */
  address: string;
  currency: string;
  /** Their total, 8-decimal text in the currency's units. */
  amount: string;
  /** The `chain_deposit` ids. */
  ids: string[];
}

/**
 * Up to `limit` groups of credited deposits waiting to be swept on `network` ({@link DUE_SWEEPS}),
 * in the currencies of `minimums` (currency → smallest total swept, decimal text; "0" for any).
 */
export async function dueSweeps(sql: Sql, network: string, minimums: ReadonlyMap<string, string>, limit: number): Promise<DueSweep[]> {
  return sql.rows<DueSweep>(DUE_SWEEPS, [network, limit, [...minimums.keys()], [...minimums.values()]]);
}

/** The native coin `currency` that deposits still at `address` on `network` hold (pending or credited, unswept), 8-decimal text. */
export async function unsweptNative(sql: Sql, network: string, address: string, currency: string): Promise<string> {
  const [row] = await sql.rows<{ amount: string }>(UNSWEPT_NATIVE, [network, address, currency]);
  return row?.amount ?? "0";
}

/** A sweep to queue: from a deposit address (its key's path) to the hot wallet, `amountUnits` in the chain's units, after its top-up. */
export interface NewSweep {
  network: string;
  address: string;
  keyPath: string;
  hot: string;
  currency: string;
  contract: string | null;
  amountUnits: bigint;
  /** The gas wallet and the wei it sends the address for the fees first; null when the address already holds them. */
  topup: { gas: string; wei: bigint; currency: string } | null;
  depositIds: readonly string[];
  at: Date;
}

/**
 * Queues `sweep` (and its top-up) in `tx` and claims its deposits.
 * @returns the sweep's id, or null when a deposit was no longer credited and unswept (the caller
 *   rolls back: nothing is queued).
 */
export async function insertSweep(tx: Sql, sweep: NewSweep): Promise<number | null> {
  let topupId: number | null = null;
  if (sweep.topup !== null) {
    const [row] = await tx.rows<{ id: number }>(INSERT_TOPUP, [sweep.network, sweep.topup.gas, sweep.address, sweep.topup.wei.toString(), sweep.topup.currency, sweep.at]);
    topupId = row!.id;
  }
  const [row] = await tx.rows<{ id: number }>(INSERT_SWEEP, [
    sweep.network, sweep.address, sweep.keyPath, sweep.currency, sweep.contract, sweep.amountUnits.toString(), sweep.hot, topupId, sweep.at,
  ]);
  const claimed = await tx.run(CLAIM_DEPOSITS, [row!.id, sweep.depositIds]);
  return claimed === sweep.depositIds.length ? row!.id : null;
}

/** Gives sweep `sweepId`'s deposits back in `tx` (the sweep failed): a later sweep takes them. */
export async function releaseDeposits(tx: Sql, sweepId: number): Promise<void> {
  await tx.run(RELEASE_DEPOSITS, [sweepId]);
}

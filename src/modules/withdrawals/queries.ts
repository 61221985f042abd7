/**
 * The withdrawals module's own SQL (beyond the ORM's entity reads and writes): the caps' sums, the
 * lock that serialises a user's initiates of one currency, and the source of a confirmed withdrawal.
 * Each runs in the caller's transaction `tx`.
 */
import type { EntityManager } from "@mikro-orm/postgresql";

/**
 * Serialises initiates of one user and currency until `tx` ends (transaction-scoped advisory lock),
 * so that the caps' sums read next cannot be passed by a concurrent initiate.
 */
export async function lockUserCurrency(tx: EntityManager, userId: string, currency: string): Promise<void> {
  await tx.execute(`select pg_advisory_xact_lock(hashtext(?))`, [`withdrawal:${userId}:${currency}`]);
}

/**
 * Amounts of the user's PENDING and COMPLETED withdrawals of `currency` since `dayStart` and since
 * `monthStart` (UTC instants), as decimal text (0 when none).
 */
export async function capSums(tx: EntityManager, userId: string, currency: string, dayStart: Date, monthStart: Date): Promise<{ today: string; month: string }> {
  const [sums] = await tx.execute<{ today: string; month: string }[]>(
    `select coalesce(sum(amount) filter (where created_at >= ?), 0)::text as today, coalesce(sum(amount), 0)::text as month
       from withdrawal where user_id = ? and currency = ? and status in ('PENDING', 'COMPLETED') and created_at >= ?`,
    [dayStart, userId, currency, monthStart],
  );
  return { today: sums?.today ?? "0", month: sums?.month ?? "0" };
}

/**
 * Where a withdrawal leaves from, in one statement: wallet `walletId`'s vault at the provider and
 * its address on `network` for `currency` (no entities loaded).
 * @throws Error when the wallet or its address is missing (they are never deleted: a broken invariant, 500).
 */
export async function withdrawalSource(tx: EntityManager, walletId: string, network: string, currency: string): Promise<{ vaultWalletId: string; address: string }> {
  const [row] = await tx.execute<{ vault_wallet_id: string; address: string }[]>(
    `select w.vault_wallet_id, a.address from wallet w join wallet_address a on a.wallet_id = w.wallet_id and a.network = ? and a.currency = ? where w.wallet_id = ?`,
    [network, currency, walletId],
  );
  if (!row) throw new Error(`wallet ${walletId} or its ${currency} address on ${network} is missing`);
  return { vaultWalletId: row.vault_wallet_id, address: row.address };
}

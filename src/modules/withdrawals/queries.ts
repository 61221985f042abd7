/**
 * The withdrawals module's own SQL (beyond the ORM's entity reads and writes): the caps' use (read
 * by the limits service under its lock on the user and currency) and the source of a confirmed
 * withdrawal. Each runs in the caller's transaction.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Usage, UsageReader, Windows } from "../../domain/limits.js";

/**
 * The withdrawal caps' use (docs/decisions/limits-and-allowlist.md "Limits"), the
 * {@link UsageReader} of kind `withdrawal` that src/modules/limits/service.ts reads under its lock
 * `withdrawal:<userId>:<currency>`: amounts of the user's PENDING and COMPLETED withdrawals of
 * `currency` created since `windows.dayStart` (`today`) and since `windows.monthStart` (`month`),
 * UTC instants, as exact decimal text ("0" when none). Cancelled withdrawals are released. One
 * statement on index `withdrawal_user_currency_created_index`, in `em` (the caller's transaction).
 */
export const withdrawalUsage: UsageReader<EntityManager> = async (em: EntityManager, userId: string, currency: string, windows: Windows): Promise<Usage> => {
  const [sums] = await em.execute<{ today: string; month: string }[]>(
    `select coalesce(sum(amount) filter (where created_at >= ?), 0)::text as today, coalesce(sum(amount), 0)::text as month
       from withdrawal where user_id = ? and currency = ? and status in ('PENDING', 'COMPLETED') and created_at >= ?`,
    [windows.dayStart, userId.toLowerCase(), currency.toLowerCase(), windows.monthStart],
  );
  return { today: sums?.today ?? "0", month: sums?.month ?? "0" };
};

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

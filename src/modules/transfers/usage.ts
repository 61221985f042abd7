/**
 * What a user sent by internal transfer, for the transfer caps (docs/decisions/limits-and-allowlist.md
 * "Transfers" and "Limits"): the limits module reads it through this {@link UsageReader}.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Usage, UsageReader, Windows } from "../../domain/limits.js";

/**
 * Sums of the amounts of the transfers user `userId` sent (`from_user_id`) in `currency` since
 * `windows.dayStart` (`today`) and since `windows.monthStart` (`month`), UTC instants, as exact
 * decimal strings ("0" when none). One statement, in the transaction or EntityManager `em`; every
 * stored transfer is COMPLETED (a transfer is never pending), so all count.
 */
export const transferUsage: UsageReader<EntityManager> = async (em: EntityManager, userId: string, currency: string, windows: Windows): Promise<Usage> => {
  const [sums] = await em.execute<{ today: string; month: string }[]>(
    `select coalesce(sum(amount) filter (where created_at >= ?), 0)::text as today, coalesce(sum(amount), 0)::text as month
       from transfer where from_user_id = ? and currency = ? and created_at >= ?`,
    [windows.dayStart, userId.toLowerCase(), currency.toLowerCase(), windows.monthStart],
  );
  return { today: sums?.today ?? "0", month: sums?.month ?? "0" };
};

/**
 * SQL of the credit notification targets (./service.ts): the one-statement registration of a
 * tenant's target (NotificationsEnlist).
 */
import type { EntityManager } from "@mikro-orm/postgresql";

/**
 * Registers `url` as tenant `customerId`'s target with the sealed signing secret `secretSealed`,
 * enabled, replacing any previous one: one statement (`insert … on conflict do update`), so
 * concurrent calls leave one target (the last one wins) and keep the first registration's
 * `created_at`. `now` is the instant written (UTC).
 * @returns the row's `created_at` and `updated_at`, or undefined when the driver returned no row.
 */
export async function upsertTarget(
  em: EntityManager,
  customerId: string,
  url: string,
  secretSealed: string,
  now: Date,
): Promise<{ created_at: Date; updated_at: Date } | undefined> {
  const [row] = await em.execute<{ created_at: Date; updated_at: Date }[]>(
    `insert into credit_notification_target (customer_id, url, secret_sealed, disabled_at, disabled_reason, created_at, updated_at)
       values (?, ?, ?, null, null, ?, ?)
     on conflict (customer_id) do update set url = excluded.url, secret_sealed = excluded.secret_sealed,
       disabled_at = null, disabled_reason = null, updated_at = excluded.updated_at
     returning created_at, updated_at`,
    [customerId, url, secretSealed, now, now],
  );
  return row;
}

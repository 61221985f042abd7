/**
 * The email poller's statements on its own table (`email_poller`): the statistics a poll records
 * (src/modules/poller/service.ts `poll`). Counters are incremented in SQL, so concurrent writers
 * never lose a count.
 */
import type { EntityManager } from "@mikro-orm/postgresql";

/** Counts one message a poll of `pollerId` read (as it goes, so a poll cut short still counts what it read). */
export async function countProcessedMessage(em: EntityManager, pollerId: string): Promise<void> {
  await em.execute(`update email_poller set total_emails_processed = total_emails_processed + 1 where poller_id = ?`, [pollerId]);
}

/** Records a poll that ended well: its start, its end (now) and the PINs it applied. */
export async function recordPollSuccess(em: EntityManager, pollerId: string, startedAt: Date, pinsApplied: number): Promise<void> {
  await em.execute(
    `update email_poller set last_polled_at = ?, last_successful_poll_at = ?, total_pins_extracted = total_pins_extracted + ? where poller_id = ?`,
    [startedAt, new Date(), pinsApplied, pollerId],
  );
}

/** Records a poll that failed: its start, the failure's instant (now) and message, and the PINs it applied before. */
export async function recordPollFailure(em: EntityManager, pollerId: string, startedAt: Date, message: string, pinsApplied: number): Promise<void> {
  await em.execute(
    `update email_poller set last_polled_at = ?, last_error_at = ?, last_error = ?, total_pins_extracted = total_pins_extracted + ? where poller_id = ?`,
    [startedAt, new Date(), message, pinsApplied, pollerId],
  );
}

/**
 * The email poller's statements on its own table `email_poller` (src/modules/poller/entities.ts;
 * docs/architecture.md "Reaching the database"): the statistics a poll records
 * (src/modules/poller/service.ts `poll`). Counters are incremented in SQL, so concurrent writers
 * never lose a count. Each runs on its own (autocommit) on the {@link Sql} it is given. The poller's
 * configuration (create, read, update, delete, enable) is plain CRUD in MikroORM's unit of work.
 */
import type { PreparedStatement, Sql } from "../../db/sql.js";

/** Adds one to the messages poller `$1` has read. */
export const COUNT_PROCESSED_MESSAGE: PreparedStatement = {
  name: "poller_count_processed_message",
  text: `update email_poller set total_emails_processed = total_emails_processed + 1 where poller_id = $1`,
};

/** A poll that ended well: `$1` poller, `$2` its start, `$3` its end, `$4` the PINs it applied (added to the total). */
export const RECORD_POLL_SUCCESS: PreparedStatement = {
  name: "poller_record_success",
  text: `update email_poller set last_polled_at = $2, last_successful_poll_at = $3, total_pins_extracted = total_pins_extracted + $4::integer
          where poller_id = $1`,
};

/**
 * A poll that failed: `$1` poller, `$2` its start, `$3` the failure's instant, `$4` its message,
 * `$5` the PINs it applied before (added to the total).
 */
export const RECORD_POLL_FAILURE: PreparedStatement = {
  name: "poller_record_failure",
  text: `update email_poller set last_polled_at = $2, last_error_at = $3, last_error = $4, total_pins_extracted = total_pins_extracted + $5::integer
          where poller_id = $1`,
};

/** Counts one message a poll of `pollerId` read (as it goes, so a poll cut short still counts what it read). @throws the driver's error. */
export async function countProcessedMessage(sql: Sql, pollerId: string): Promise<void> {
  await sql.run(COUNT_PROCESSED_MESSAGE, [pollerId]);
}

/** Records a poll that ended well: its start, its end (now) and the PINs it applied. @throws the driver's error. */
export async function recordPollSuccess(sql: Sql, pollerId: string, startedAt: Date, pinsApplied: number): Promise<void> {
  await sql.run(RECORD_POLL_SUCCESS, [pollerId, startedAt, new Date(), pinsApplied]);
}

/**
 * Records a poll that failed: its start, the failure's instant (now) and message, and the PINs it
 * applied before. @throws the driver's error.
 */
export async function recordPollFailure(sql: Sql, pollerId: string, startedAt: Date, message: string, pinsApplied: number): Promise<void> {
  await sql.run(RECORD_POLL_FAILURE, [pollerId, startedAt, new Date(), message, pinsApplied]);
}

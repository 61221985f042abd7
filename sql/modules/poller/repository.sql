-- The named statements src/modules/poller/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- COUNT_PROCESSED_MESSAGE: poller_count_processed_message
update email_poller set total_emails_processed = total_emails_processed + 1 where poller_id = $1;

-- RECORD_POLL_FAILURE: poller_record_failure
update email_poller set last_polled_at = $2, last_error_at = $3, last_error = $4, total_pins_extracted = total_pins_extracted + $5::integer
          where poller_id = $1;

-- RECORD_POLL_SUCCESS: poller_record_success
update email_poller set last_polled_at = $2, last_successful_poll_at = $3, total_pins_extracted = total_pins_extracted + $4::integer
          where poller_id = $1;

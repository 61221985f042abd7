-- The named statements src/modules/outbox/repository/record.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- INSERT_ATTEMPT: outbox_attempt_insert
insert into delivery_attempt (id, channel, message_id, attempted_at, http_status, duration_ms, error)
         values ($1, $2, $3, $4, $5, $6, $7);

-- The named statements src/modules/mail/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- INSERT_EMAIL: mail_insert
insert into outbox_email ("id", "customer_id", "to", "subject", "text", "status", "attempts", "next_attempt_at", "last_error", "reference", "created_at", "sent_at")
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12);

-- SANDBOX_MAIL_TO: mail_sandbox_to
select "to", subject, text, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as sent_at from outbox_email
          where customer_id = $1 and status = 'sandbox' and lower("to") = lower($2) order by created_at desc, id asc limit 100;

-- SANDBOX_MAIL: mail_sandbox
select "to", subject, text, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as sent_at from outbox_email
          where customer_id = $1 and status = 'sandbox' order by created_at desc, id asc limit 100;

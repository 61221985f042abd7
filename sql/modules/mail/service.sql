-- The named statements src/modules/mail/service.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- SANDBOX_MAIL_TO: sandbox_mail_to
select "to", subject, text, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as sent_at from outbox_email
          where customer_id = $1 and status = 'sandbox' and lower("to") = lower($2) order by created_at desc, id asc limit 100;

-- SANDBOX_MAIL: sandbox_mail
select "to", subject, text, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as sent_at from outbox_email
          where customer_id = $1 and status = 'sandbox' order by created_at desc, id asc limit 100;

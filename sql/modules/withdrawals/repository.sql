-- The named statements src/modules/withdrawals/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- CLAIM_DUE_PAYOUT: withdrawal_claim_due_payout
select w.id, w.customer_id, w.user_id, w.wallet_id, w.network, w.currency, w.amount, w.address, w.memo, w.status, w.code_hash, w.code_expires_at, w.code_attempts, w.code_failures_total, w.code_resends, w.code_issued_at, w.cancel_reason, w.idempotency_key, w.tx_hash, w.completed_at, w.cancelled_at, w.created_at, w.updated_at, w.withdrawal_type, w.bank_account_id, w.payout_rail, w.payout_reference, w.payout_state, w.payout_due_at, v.vault_wallet_id as source_vault_wallet_id, a.address as source_address
           from withdrawal w
           left join wallet v on v.wallet_id = w.wallet_id
           left join wallet_address a on a.wallet_id = w.wallet_id and a.network = w.network and a.currency = w.currency
          where w.payout_due_at <= $1 and w.withdrawal_type = 'fiat'
          order by w.payout_due_at asc limit 1 for update of w skip locked;

-- COMPLETE_WITHDRAWAL: withdrawal_complete
with withdrawal as (update withdrawal set "status" = $1, "code_hash" = $2, "code_expires_at" = $3, "code_attempts" = $4, "code_failures_total" = $5, "code_resends" = $6, "code_issued_at" = $7, "cancel_reason" = $8, "tx_hash" = $9, "completed_at" = $10, "cancelled_at" = $11, "updated_at" = $12 where id = $13),
          tx as (insert into wallet_transaction ("wallet_id", "customer_id", "network", "address", "action", "status", "currency", "amount", "fees", "net_proceeds", "price", "balance_after", "hash", "memo", "description", "order_id", "trade_id", "idempotency_id", "journal_entry_id", "created_at") values ($14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33))
          select 1 as done;

-- DEFER_PAYOUT: withdrawal_defer_payout
update withdrawal set payout_due_at = $2 where id = $1 and payout_due_at is not null;

-- INSERT_FIAT_WITHDRAWAL: withdrawal_insert_fiat
with withdrawal as (insert into withdrawal ("id", "customer_id", "user_id", "wallet_id", "network", "currency", "amount", "address", "memo", "status", "code_hash", "code_expires_at", "code_attempts", "code_failures_total", "code_resends", "code_issued_at", "cancel_reason", "idempotency_key", "tx_hash", "completed_at", "cancelled_at", "created_at", "updated_at", "withdrawal_type", "bank_account_id") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25)),
          email as (insert into outbox_email ("id", "customer_id", "to", "subject", "text", "status", "attempts", "next_attempt_at", "last_error", "reference", "created_at", "sent_at") values ($26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37))
          select 1 as done;

-- INSERT_WITHDRAWAL: withdrawal_insert
with withdrawal as (insert into withdrawal ("id", "customer_id", "user_id", "wallet_id", "network", "currency", "amount", "address", "memo", "status", "code_hash", "code_expires_at", "code_attempts", "code_failures_total", "code_resends", "code_issued_at", "cancel_reason", "idempotency_key", "tx_hash", "completed_at", "cancelled_at", "created_at", "updated_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)),
          email as (insert into outbox_email ("id", "customer_id", "to", "subject", "text", "status", "attempts", "next_attempt_at", "last_error", "reference", "created_at", "sent_at") values ($24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35))
          select 1 as done;

-- LOCK_OWN_WITHDRAWAL: withdrawal_lock_own
select w.id, w.customer_id, w.user_id, w.wallet_id, w.network, w.currency, w.amount, w.address, w.memo, w.status, w.code_hash, w.code_expires_at, w.code_attempts, w.code_failures_total, w.code_resends, w.code_issued_at, w.cancel_reason, w.idempotency_key, w.tx_hash, w.completed_at, w.cancelled_at, w.created_at, w.updated_at, w.withdrawal_type, w.bank_account_id, w.payout_rail, w.payout_reference, w.payout_state, w.payout_due_at, v.vault_wallet_id as source_vault_wallet_id, a.address as source_address
           from withdrawal w
           left join wallet v on v.wallet_id = w.wallet_id
           left join wallet_address a on a.wallet_id = w.wallet_id and a.network = w.network and a.currency = w.currency
          where w.id = $1 and w.customer_id = $2 and w.user_id = $3 for update of w;

-- LOCK_WITHDRAWAL: withdrawal_lock
select w.id, w.customer_id, w.user_id, w.wallet_id, w.network, w.currency, w.amount, w.address, w.memo, w.status, w.code_hash, w.code_expires_at, w.code_attempts, w.code_failures_total, w.code_resends, w.code_issued_at, w.cancel_reason, w.idempotency_key, w.tx_hash, w.completed_at, w.cancelled_at, w.created_at, w.updated_at, w.withdrawal_type, w.bank_account_id, w.payout_rail, w.payout_reference, w.payout_state, w.payout_due_at, v.vault_wallet_id as source_vault_wallet_id, a.address as source_address
           from withdrawal w
           left join wallet v on v.wallet_id = w.wallet_id
           left join wallet_address a on a.wallet_id = w.wallet_id and a.network = w.network and a.currency = w.currency
          where w.id = $1 and w.customer_id = $2 for update of w;

-- UPDATE_FIAT_WITHDRAWAL: withdrawal_update_fiat
update withdrawal set "status" = $1, "code_hash" = $2, "code_expires_at" = $3, "code_attempts" = $4, "code_failures_total" = $5, "code_resends" = $6, "code_issued_at" = $7, "cancel_reason" = $8, "tx_hash" = $9, "completed_at" = $10, "cancelled_at" = $11, "updated_at" = $12, "payout_rail" = $13, "payout_reference" = $14, "payout_state" = $15, "payout_due_at" = $16 where id = $17;

-- UPDATE_WITHDRAWAL_EMAIL: withdrawal_update_email
with withdrawal as (update withdrawal set "status" = $1, "code_hash" = $2, "code_expires_at" = $3, "code_attempts" = $4, "code_failures_total" = $5, "code_resends" = $6, "code_issued_at" = $7, "cancel_reason" = $8, "tx_hash" = $9, "completed_at" = $10, "cancelled_at" = $11, "updated_at" = $12 where id = $13), email as (insert into outbox_email ("id", "customer_id", "to", "subject", "text", "status", "attempts", "next_attempt_at", "last_error", "reference", "created_at", "sent_at") values ($14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25)) select 1 as done;

-- UPDATE_WITHDRAWAL: withdrawal_update
update withdrawal set "status" = $1, "code_hash" = $2, "code_expires_at" = $3, "code_attempts" = $4, "code_failures_total" = $5, "code_resends" = $6, "code_issued_at" = $7, "cancel_reason" = $8, "tx_hash" = $9, "completed_at" = $10, "cancelled_at" = $11, "updated_at" = $12 where id = $13;

-- USER_WALLET_BALANCES: withdrawal_user_wallet_balances
select w.wallet_id, w.networks, a.bucket, a.balance
           from wallet w left join ledger_account a on a.wallet_id = w.wallet_id and a.currency = $3
          where w.user_id = $1 and w.customer_id = $2 and w.status = 'ACTIVE'
          order by w.created_at asc, w.wallet_id asc;

-- WITHDRAWAL_CAPS_USE: withdrawal_caps_use
select coalesce(sum(amount) filter (where created_at >= $1), 0)::text as today, coalesce(sum(amount), 0)::text as month
           from withdrawal where user_id = $2 and currency = $3 and status in ('PENDING', 'COMPLETED') and created_at >= $4;

-- WITHDRAWAL_USER: withdrawal_user
select u.user_id, u.email, u.first_name, u.deleted_at is not null as deleted, coalesce(u.deleted_at is null and u.status = 'VERIFIED' and u.is_active, false) as good_standing
           from app_user u where u.user_id = $1 and u.customer_id = $2;

-- WITHDRAWALS_BY_STATUS: withdrawal_count_by_status
select status, count(*)::int as count from withdrawal group by status;

-- WRITE_FIAT_WITHDRAWAL: withdrawal_write_fiat
with withdrawal as (update withdrawal set "status" = $1, "code_hash" = $2, "code_expires_at" = $3, "code_attempts" = $4, "code_failures_total" = $5, "code_resends" = $6, "code_issued_at" = $7, "cancel_reason" = $8, "tx_hash" = $9, "completed_at" = $10, "cancelled_at" = $11, "updated_at" = $12, "payout_rail" = $13, "payout_reference" = $14, "payout_state" = $15, "payout_due_at" = $16 where id = $17),
          tx as (insert into wallet_transaction ("wallet_id", "customer_id", "network", "address", "action", "status", "currency", "amount", "fees", "net_proceeds", "price", "balance_after", "hash", "memo", "description", "order_id", "trade_id", "idempotency_id", "journal_entry_id", "created_at") values ($18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37))
          select 1 as done;

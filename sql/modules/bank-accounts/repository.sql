-- The named statements src/modules/bank-accounts/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- COUNT_BANK_ACCOUNTS: bank_accounts_count
select count(*)::int as total from bank_account where user_id = $1 and customer_id = $2 and deleted_at is null;

-- DELETE_BANK_ACCOUNT: bank_accounts_soft_delete
update bank_account set deleted_at = $4 where id = $1 and user_id = $2 and customer_id = $3 and deleted_at is null;

-- INSERT_BANK_ACCOUNT: bank_accounts_insert
insert into bank_account (id, customer_id, user_id, currency, holder_name, label, account_mask, numbers_sealed, fingerprint, created_at)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
           on conflict (user_id, fingerprint) where deleted_at is null do nothing returning id;

-- SELECT_BANK_ACCOUNT_PAGE: bank_accounts_select_page
select id, customer_id, user_id, currency, holder_name, label, account_mask, numbers_sealed, fingerprint, created_at, deleted_at from bank_account where user_id = $1 and customer_id = $2 and deleted_at is null
           order by created_at desc, id desc limit $3 offset $4;

-- SELECT_USABLE_BANK_ACCOUNT: bank_accounts_select_usable
select exists (select 1 from bank_account where user_id = $1 and customer_id = $3 and deleted_at is null) as has_any,
                b.id, b.customer_id, b.user_id, b.currency, b.holder_name, b.label, b.account_mask, b.numbers_sealed, b.fingerprint, b.created_at, b.deleted_at
           from (select 1) as one
           left join bank_account b on b.id = $2::uuid and b.user_id = $1 and b.customer_id = $3;

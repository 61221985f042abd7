-- The named statements src/modules/ledger/queries.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- LOCK_ACCOUNTS
select id, code, bucket, balance from ledger_account where code = any($1::text[]) order by id for update;

-- LOCK_AND_READ_ACCOUNTS
with locked as (select id, code, bucket, balance from ledger_account where code = any($1::text[]) order by id for update)
  select id, code, bucket, balance from locked
  union all
  select id, code, bucket, balance from ledger_account where code = any($2::text[]);

-- WRITE_ENTRY
with entry as (
    insert into journal_entry (kind, wallet_id, network, currency, amount, reference, created_at) values ($1, $2, $3, $4, $5, $6, now()) returning id
  ), postings as (
    insert into ledger_posting (entry_id, account_id, currency, amount)
    select entry.id, v.account_id, v.currency, v.amount from entry cross join unnest($7::bigint[], $8::text[], $9::numeric[]) as v (account_id, currency, amount)
  ), balances as (
    update ledger_account a set balance = v.balance, updated_at = now()
      from unnest($10::text[], $11::numeric[]) as v (code, balance)
     where a.code = v.code and a.code = any($10::text[])
  )
  select id from entry;

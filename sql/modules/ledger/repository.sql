-- The named statements src/modules/ledger/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- ACCOUNT_ID: ledger_account_id
select id from ledger_account where code = $1;

-- ADD_DEFICIT: ledger_add_deficit
insert into wallet_deficit (wallet_id, currency, network, amount, created_at, updated_at) values ($1::uuid, $2, $3, $4, now(), now())
         on conflict (wallet_id, currency, network) do update set amount = wallet_deficit.amount + excluded.amount, updated_at = now();

-- CACHE_MISMATCHES: ledger_cache_mismatches
select a.code, coalesce(a.balance::text, 'none') as cached, coalesce(s.total, 0)::text as from_postings
       from ledger_account a left join (select account_id, sum(amount) as total from ledger_posting group by account_id) s on s.account_id = a.id
      where a.balance is distinct from case when a.bucket in ('available', 'held') then coalesce(s.total, 0) else null end;

-- DELETE_DEFICIT: ledger_delete_deficit
delete from wallet_deficit where wallet_id = $1::uuid and currency = $2 and network = $3;

-- EXTERNAL_BALANCES: ledger_external_balances
select a.code, a.network, a.currency, coalesce(sum(p.amount), 0)::text as balance
       from ledger_account a left join ledger_posting p on p.account_id = a.id
      where a.bucket = 'external' and ($1::text is null or a.network = $1) and ($2::text is null or a.currency = $2)
      group by a.id order by a.code;

-- INSERT_ACCOUNT: ledger_insert_account
insert into ledger_account (code, bucket, wallet_id, network, currency, balance, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, now(), now()) on conflict (code) do nothing returning id;

-- LOCK_ACCOUNTS
select id, code, bucket, balance from ledger_account where code = any($1::text[]) order by id for update;

-- LOCK_AND_READ_ACCOUNTS
with locked as (select id, code, bucket, balance from ledger_account where code = any($1::text[]) order by id for update)
  select id, code, bucket, balance from locked
  union all
  select id, code, bucket, balance from ledger_account where code = any($2::text[]);

-- LOCK_AND_READ: ledger_lock_read_accounts
with locked as (select id, code, bucket, balance from ledger_account where code = any($1::text[]) order by id for update)
  select id, code, bucket, balance from locked
  union all
  select id, code, bucket, balance from ledger_account where code = any($2::text[]);

-- LOCK_DEFICITS: ledger_lock_deficits
select network, amount::text from wallet_deficit where wallet_id = $1::uuid and currency = $2 order by network for update;

-- LOCK_WALLET_ACCOUNTS: ledger_lock_wallet_accounts
select id from ledger_account a where a.bucket in ('available', 'held') order by id for update;

-- LOCK: ledger_lock_accounts
select id, code, bucket, balance from ledger_account where code = any($1::text[]) order by id for update;

-- NEGATIVE_ACCOUNTS: ledger_negative_accounts
select a.code, least(a.balance, coalesce(s.total, 0))::text as balance
       from ledger_account a left join (select account_id, sum(amount) as total from ledger_posting group by account_id) s on s.account_id = a.id
      where a.bucket in ('available', 'held') and (a.balance < 0 or coalesce(s.total, 0) < 0);

-- REBUILD_CACHE: ledger_rebuild_cache
update ledger_account a set balance = case when a.bucket in ('available', 'held') then coalesce(s.total, 0) else null end, updated_at = now()
       from ledger_account a2 left join (select account_id, sum(amount) as total from ledger_posting group by account_id) s on s.account_id = a2.id
      where a.id = a2.id and a.balance is distinct from case when a.bucket in ('available', 'held') then coalesce(s.total, 0) else null end;

-- SET_DEFICIT: ledger_set_deficit
update wallet_deficit set amount = $4, updated_at = now() where wallet_id = $1::uuid and currency = $2 and network = $3;

-- UNBALANCED_CURRENCIES: ledger_unbalanced_currencies
select currency, sum(amount)::text as sum from ledger_posting group by currency having sum(amount) <> 0;

-- UNBALANCED_ENTRIES: ledger_unbalanced_entries
select entry_id, currency, sum(amount)::text as sum from ledger_posting group by entry_id, currency having sum(amount) <> 0;

-- WALLET_ACCOUNTS: ledger_wallet_accounts
select currency, bucket, balance from ledger_account where wallet_id = $1 order by currency;

-- WALLET_DEFICITS: ledger_wallet_deficits
select currency, sum(amount)::text as amount from wallet_deficit where wallet_id = $1::uuid group by currency order by currency;

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

-- WRITE: ledger_write_entry
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

-- The named statements src/modules/currencies/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- CURRENCY_SWITCHES: currency_switches
select code, can_deposit, can_withdraw, is_custody_enabled, is_trading_enabled from currency_switch;

-- UPSERT_CURRENCY_SWITCH: currency_switch_upsert
insert into currency_switch as s (code, can_deposit, can_withdraw, is_custody_enabled, is_trading_enabled, updated_at)
         values ($1, $2, $3, $4, $5, $6)
         on conflict (code) do update set
           can_deposit = coalesce(excluded.can_deposit, s.can_deposit),
           can_withdraw = coalesce(excluded.can_withdraw, s.can_withdraw),
           is_custody_enabled = coalesce(excluded.is_custody_enabled, s.is_custody_enabled),
           is_trading_enabled = coalesce(excluded.is_trading_enabled, s.is_trading_enabled),
           updated_at = excluded.updated_at
         returning code, can_deposit, can_withdraw, is_custody_enabled, is_trading_enabled;

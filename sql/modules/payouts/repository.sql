-- The named statements src/modules/payouts/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- DAY_SEPA_PAYOUTS: payouts_day_sepa
select w.id as withdrawal_id, w.amount::text as amount, w.payout_reference, w.memo, w.completed_at,
                b.id as bank_account_id, b.holder_name, b.numbers_sealed
           from withdrawal w join bank_account b on b.id = w.bank_account_id
          where w.customer_id = $1 and w.withdrawal_type = 'fiat' and w.currency = 'eur' and w.payout_reference is not null
            and w.completed_at >= $2 and w.completed_at < $3
          order by w.completed_at, w.id;

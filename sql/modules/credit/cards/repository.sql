-- The named statements src/modules/credit/cards/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- CARD_DECISION: credit_card_decision
select c.state, c.exp_month, c.exp_year, c.spend_controls,
                (select row_to_json(a) from credit_authorization a where a.customer_id = $2 and a.processor_reference = $3) as prior,
                case when c.spend_controls ?| array['daily', 'monthly'] then
                  (select json_build_object('daily', coalesce(sum(a.amount - a.released_amount) filter (where a.created_at >= $4), 0),
                                            'monthly', coalesce(sum(a.amount - a.released_amount), 0))
                     from credit_authorization a
                    where a.card_id = $1 and a.created_at >= $5 and a.status <> 'declined')
                end as spent
           from credit_card c where c.card_id = $1 and c.customer_id = $2;

-- CARD_WALLET: credit_card_wallet
select wallet_id from credit_card where card_id = $1 and customer_id = $2;

-- CLOSE_WALLET_CARDS: credit_card_close_wallet
update credit_card set state = 'CLOSED', updated_at = $2, closed_at = $2 where wallet_id = $1 and state in ('ACTIVE', 'PAUSED');

-- COUNT_OPEN_CARDS: credit_card_count_open
select count(*)::int as open from credit_card where wallet_id = $1 and state in ('ACTIVE', 'PAUSED');

-- INSERT_CARD: credit_card_insert
insert into credit_card (card_id, wallet_id, customer_id, state, cardholder_name, last4, exp_month, exp_year, pan_sealed, pan_fingerprint, spend_controls, memo, created_at, updated_at, closed_at)
         values ($1, $2, $3, 'ACTIVE', $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $12, null)
         on conflict (customer_id, pan_fingerprint) do nothing
         returning card_id;

-- LOCK_CARD: credit_card_lock
select state, spend_controls, memo from credit_card where card_id = $1 and customer_id = $2 for update;

-- UPDATE_CARD: credit_card_update
update credit_card set state = $2::varchar, spend_controls = $3::jsonb, memo = $4, updated_at = $5::timestamptz,
                closed_at = case when $2::varchar = 'CLOSED' then $5::timestamptz else closed_at end
          where card_id = $1;

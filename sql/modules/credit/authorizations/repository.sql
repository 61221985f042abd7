-- The named statements src/modules/credit/authorizations/repository.ts exports (written by scripts/sql-snapshots.ts; do not edit).

-- AUTHORIZATION_OF_WALLET: credit_authorization_of_wallet
select 1 as found from credit_authorization where authorization_id = $1 and wallet_id = $2;

-- AUTHORIZATION_REFUNDABLE: credit_authorization_refundable
select status, captured_amount, refunded_amount, card_id from credit_authorization where authorization_id = $1 and wallet_id = $2;

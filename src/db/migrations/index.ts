/**
 * Every committed migration, in order. A new migration is added here (see `npm run migration:create`);
 * explicit listing keeps discovery independent of how the code is packaged.
 */
import type { MigrationObject } from "@mikro-orm/core";
import { Migration20261121000000_identity } from "./Migration20261121000000_identity.js";
import { Migration20261121213153_wallets_ledger } from "./Migration20261121213153_wallets_ledger.js";
import { Migration20261121214936_withdrawals_mail } from "./Migration20261121214936_withdrawals_mail.js";
import { Migration20261122142020_webhooks_poller_jobs } from "./Migration20261122142020_webhooks_poller_jobs.js";
import { Migration20261122181405_withdrawal_code_limits } from "./Migration20261122181405_withdrawal_code_limits.js";
import { Migration20261122190000_rate_limits } from "./Migration20261122190000_rate_limits.js";
import { Migration20261123173644_credit_products_notifications } from "./Migration20261123173644_credit_products_notifications.js";
import { Migration20261123175338_credit_wallets } from "./Migration20261123175338_credit_wallets.js";
import { Migration20261123175731_credit_notification_delivery } from "./Migration20261123175731_credit_notification_delivery.js";
import { Migration20261123181033_credit_notification_due_index } from "./Migration20261123181033_credit_notification_due_index.js";
import { Migration20261123194005_ledger_external_derived } from "./Migration20261123194005_ledger_external_derived.js";
import { Migration20261123223000_sandbox_mail_indexes } from "./Migration20261123223000_sandbox_mail_indexes.js";
import { Migration20261126020000_credit_set_aside } from "./Migration20261126020000_credit_set_aside.js";
import { Migration20261126030000_names_tokens } from "./Migration20261126030000_names_tokens.js";
import { Migration20261126040000_outbox } from "./Migration20261126040000_outbox.js";
import { Migration20261126050000_idempotency_keys } from "./Migration20261126050000_idempotency_keys.js";
import { Migration20261126070000_transfers } from "./Migration20261126070000_transfers.js";
import { Migration20261126080000_limits_allowlist } from "./Migration20261126080000_limits_allowlist.js";
import { Migration20261126090000_credit_authorizations } from "./Migration20261126090000_credit_authorizations.js";
import { Migration20261126100000_ledger_trading_accounts } from "./Migration20261126100000_ledger_trading_accounts.js";
import { Migration20261126110000_trading } from "./Migration20261126110000_trading.js";
import { Migration20261128000000_idempotency_caller } from "./Migration20261128000000_idempotency_caller.js";
import { Migration20261129010000_wallet_states } from "./Migration20261129010000_wallet_states.js";
import { Migration20261129020000_inbound_webhooks } from "./Migration20261129020000_inbound_webhooks.js";
import { Migration20261129030000_bank_accounts } from "./Migration20261129030000_bank_accounts.js";
import { Migration20261129040000_fiat_withdrawals } from "./Migration20261129040000_fiat_withdrawals.js";
import { Migration20261129063000_market_orders } from "./Migration20261129063000_market_orders.js";
import { Migration20261129080000_cards } from "./Migration20261129080000_cards.js";
import { Migration20261129090000_card_authorizations } from "./Migration20261129090000_card_authorizations.js";
import { Migration20261129100000_credit_refunds } from "./Migration20261129100000_credit_refunds.js";
import { Migration20261129110000_live_chains } from "./Migration20261129110000_live_chains.js";
import { Migration20261129130000_chain_sends } from "./Migration20261129130000_chain_sends.js";
import { Migration20261129131000_wallet_deficits } from "./Migration20261129131000_wallet_deficits.js";
import { Migration20261129132000_chain_gas_balance } from "./Migration20261129132000_chain_gas_balance.js";
import { Migration20261129161000_chain_sweeps } from "./Migration20261129161000_chain_sweeps.js";

export const migrationsList: MigrationObject[] = [
  { name: "Migration20261121000000_identity", class: Migration20261121000000_identity },
  { name: "Migration20261121213153_wallets_ledger", class: Migration20261121213153_wallets_ledger },
  { name: "Migration20261121214936_withdrawals_mail", class: Migration20261121214936_withdrawals_mail },
  { name: "Migration20261122142020_webhooks_poller_jobs", class: Migration20261122142020_webhooks_poller_jobs },
  { name: "Migration20261122181405_withdrawal_code_limits", class: Migration20261122181405_withdrawal_code_limits },
  { name: "Migration20261122190000_rate_limits", class: Migration20261122190000_rate_limits },
  { name: "Migration20261123173644_credit_products_notifications", class: Migration20261123173644_credit_products_notifications },
  { name: "Migration20261123175338_credit_wallets", class: Migration20261123175338_credit_wallets },
  { name: "Migration20261123175731_credit_notification_delivery", class: Migration20261123175731_credit_notification_delivery },
  { name: "Migration20261123181033_credit_notification_due_index", class: Migration20261123181033_credit_notification_due_index },
  { name: "Migration20261123194005_ledger_external_derived", class: Migration20261123194005_ledger_external_derived },
  { name: "Migration20261123223000_sandbox_mail_indexes", class: Migration20261123223000_sandbox_mail_indexes },
  { name: "Migration20261126020000_credit_set_aside", class: Migration20261126020000_credit_set_aside },
  { name: "Migration20261126030000_names_tokens", class: Migration20261126030000_names_tokens },
  { name: "Migration20261126040000_outbox", class: Migration20261126040000_outbox },
  { name: "Migration20261126050000_idempotency_keys", class: Migration20261126050000_idempotency_keys },
  { name: "Migration20261126070000_transfers", class: Migration20261126070000_transfers },
  { name: "Migration20261126080000_limits_allowlist", class: Migration20261126080000_limits_allowlist },
  { name: "Migration20261126090000_credit_authorizations", class: Migration20261126090000_credit_authorizations },
  { name: "Migration20261126100000_ledger_trading_accounts", class: Migration20261126100000_ledger_trading_accounts },
  { name: "Migration20261126110000_trading", class: Migration20261126110000_trading },
  { name: "Migration20261128000000_idempotency_caller", class: Migration20261128000000_idempotency_caller },
  { name: "Migration20261129010000_wallet_states", class: Migration20261129010000_wallet_states },
  { name: "Migration20261129020000_inbound_webhooks", class: Migration20261129020000_inbound_webhooks },
  { name: "Migration20261129030000_bank_accounts", class: Migration20261129030000_bank_accounts },
  { name: "Migration20261129040000_fiat_withdrawals", class: Migration20261129040000_fiat_withdrawals },
  { name: "Migration20261129063000_market_orders", class: Migration20261129063000_market_orders },
  { name: "Migration20261129080000_cards", class: Migration20261129080000_cards },
  { name: "Migration20261129090000_card_authorizations", class: Migration20261129090000_card_authorizations },
  { name: "Migration20261129100000_credit_refunds", class: Migration20261129100000_credit_refunds },
  { name: "Migration20261129110000_live_chains", class: Migration20261129110000_live_chains },
  { name: "Migration20261129130000_chain_sends", class: Migration20261129130000_chain_sends },
  { name: "Migration20261129131000_wallet_deficits", class: Migration20261129131000_wallet_deficits },
  { name: "Migration20261129132000_chain_gas_balance", class: Migration20261129132000_chain_gas_balance },
  { name: "Migration20261129161000_chain_sweeps", class: Migration20261129161000_chain_sweeps },
];

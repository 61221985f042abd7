import { Migration } from '@mikro-orm/migrations';

/**
 * Wallet states and currency switches (docs/decisions/customers-users-and-wallets.md "Wallet
 * states"; docs/decisions/provider-and-sandbox.md "Currency switches").
 *
 * `wallet.is_active` becomes `wallet.status` (`ACTIVE`, `LOCKED`, `SUSPENDED`, `INACTIVE`), with
 * `status_reason` and, while suspended, the state and reason to reinstate (`suspended_status`,
 * `suspended_reason`). Every wallet stored so far was active: `is_active` was never false. Down
 * maps `ACTIVE` to true and every other state to false.
 *
 * `currency_switch` holds the operator's switches per currency code: a null flag is not switched.
 */
export class Migration20261129010000_wallet_states extends Migration {

  override name = 'Migration20261129010000_wallet_states';

  override up(): void | Promise<void> {
    this.addSql(`alter table "wallet" add column "status" varchar(16) not null default 'ACTIVE', add column "status_reason" varchar(255) null, add column "suspended_status" varchar(16) null, add column "suspended_reason" varchar(255) null;`);
    this.addSql(`update "wallet" set "status" = 'INACTIVE' where not "is_active";`);
    this.addSql(`alter table "wallet" alter column "status" drop default;`);
    this.addSql(`alter table "wallet" drop column "is_active";`);
    this.addSql(`create table "currency_switch" ("code" varchar(16) not null, "can_deposit" boolean null, "can_withdraw" boolean null, "is_custody_enabled" boolean null, "is_trading_enabled" boolean null, "updated_at" timestamptz not null, primary key ("code"));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "currency_switch" cascade;`);
    this.addSql(`alter table "wallet" add column "is_active" boolean not null default true;`);
    this.addSql(`update "wallet" set "is_active" = ("status" = 'ACTIVE');`);
    this.addSql(`alter table "wallet" alter column "is_active" drop default;`);
    this.addSql(`alter table "wallet" drop column "status", drop column "status_reason", drop column "suspended_status", drop column "suspended_reason";`);
  }
}

import { Migration } from '@mikro-orm/migrations';

/**
 * The ledger's trading accounts (docs/decisions/trading.md "The ledger"; src/domain/ledger.ts):
 * `liquidity:<currency>` (the provider's side of every order) and `fees:<currency>` keep no cached
 * balance, like the external accounts, so the balance checks now apply to the wallet buckets only
 * (`available`, `held`). Down restores the checks as they were; it fails while trading accounts exist.
 */
export class Migration20261126100000_ledger_trading_accounts extends Migration {

  override name = 'Migration20261126100000_ledger_trading_accounts';

  override up(): void | Promise<void> {
    this.addSql(`alter table "ledger_account" drop constraint "ledger_account_balance_check";`);
    this.addSql(`alter table "ledger_account" drop constraint "ledger_account_cached_balance_check";`);
    this.addSql(`alter table "ledger_account" add constraint "ledger_account_balance_check" check (bucket = 'external' or bucket = 'liquidity' or bucket = 'fees' or balance >= 0);`);
    this.addSql(`alter table "ledger_account" add constraint "ledger_account_cached_balance_check" check (bucket = 'external' or bucket = 'liquidity' or bucket = 'fees' or balance is not null);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "ledger_account" drop constraint "ledger_account_balance_check";`);
    this.addSql(`alter table "ledger_account" drop constraint "ledger_account_cached_balance_check";`);
    this.addSql(`alter table "ledger_account" add constraint "ledger_account_balance_check" check (bucket = 'external' or balance >= 0);`);
    this.addSql(`alter table "ledger_account" add constraint "ledger_account_cached_balance_check" check (bucket = 'external' or balance is not null);`);
  }

}

import { Migration } from '@mikro-orm/migrations';

/**
 * docs/decisions/customers-users-and-wallets.md "The custody ledger": external (network) accounts keep
 * no cached balance. Every deposit and every
 * confirmed withdrawal posted to its network's external account and locked and rewrote that one row,
 * so the network's withdrawals ran one at a time. Their balance is now the sum of their postings
 * (src/domain/ledger.ts `balanceCached`); `balance` becomes null for them and stays required for
 * wallet buckets. Down puts the sums of the postings back into the column.
 */
export class Migration20261123194005_ledger_external_derived extends Migration {

  override name = 'Migration20261123194005_ledger_external_derived';

  override up(): void | Promise<void> {
    this.addSql(`alter table "ledger_account" alter column "balance" drop not null;`);
    this.addSql(`update "ledger_account" set "balance" = null where "bucket" = 'external';`);
    this.addSql(`alter table "ledger_account" add constraint "ledger_account_cached_balance_check" check (bucket = 'external' or balance is not null);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "ledger_account" drop constraint "ledger_account_cached_balance_check";`);
    this.addSql(`update "ledger_account" a set "balance" = coalesce((select sum(p."amount") from "ledger_posting" p where p."account_id" = a."id"), 0) where a."bucket" = 'external';`);
    this.addSql(`alter table "ledger_account" alter column "balance" set not null;`);
  }

}

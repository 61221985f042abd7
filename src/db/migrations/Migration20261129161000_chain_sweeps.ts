import { Migration } from '@mikro-orm/migrations';

/**
 * Sweeps of credited deposits into the hot wallet (docs/decisions/live-chains.md "Sweeps"): a
 * send may wait for another one (`depends_on`: the gas wallet's top-up of the deposit address's
 * fees) and signs with the key at `key_path` (a deposit address's derivation path); a credited
 * deposit records the sweep that moves it (`swept_by`).
 */
export class Migration20261129161000_chain_sweeps extends Migration {

  override name = 'Migration20261129161000_chain_sweeps';

  override up(): void | Promise<void> {
    this.addSql(`alter table "chain_send" add column "depends_on" bigint null, add column "key_path" varchar(64) null;`);
    this.addSql(`alter table "chain_deposit" add column "swept_by" bigint null;`);
    this.addSql(`create index "chain_deposit_unswept_index" on "chain_deposit" ("network", "address") where status = 'done' and swept_by is null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "chain_deposit_unswept_index";`);
    this.addSql(`alter table "chain_deposit" drop column if exists "swept_by";`);
    this.addSql(`alter table "chain_send" drop column if exists "depends_on", drop column if exists "key_path";`);
  }

}

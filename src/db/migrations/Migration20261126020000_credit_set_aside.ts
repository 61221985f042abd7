import { Migration } from '@mikro-orm/migrations';

/**
 * Money stays exact (docs/security.md "Money stays exact"): a credit wallet whose next cycle step
 * would take an amount past ±(2^53 − 1) cents is set aside by the cycle batches
 * (src/modules/credit/cycles.ts): `set_aside_at` (the credit core instant of the step that was not
 * run) and `set_aside_reason` (what would have left the range). The partial index serves the
 * `credit_wallets_set_aside` metric's count.
 */
export class Migration20261126020000_credit_set_aside extends Migration {

  override name = 'Migration20261126020000_credit_set_aside';

  override up(): void | Promise<void> {
    this.addSql(`alter table "credit_wallet" add column "set_aside_at" timestamptz null, add column "set_aside_reason" text null;`);
    this.addSql(`create index "credit_wallet_set_aside_index" on "credit_wallet" ("set_aside_at") where set_aside_at is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "credit_wallet_set_aside_index";`);
    this.addSql(`alter table "credit_wallet" drop column "set_aside_at", drop column "set_aside_reason";`);
  }

}

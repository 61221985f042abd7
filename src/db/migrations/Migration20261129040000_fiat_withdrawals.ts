import { Migration } from '@mikro-orm/migrations';

/**
 * Fiat withdrawals (docs/decisions/fiat.md "Fiat withdrawals"; src/modules/withdrawals/entities.ts):
 * a withdrawal records the path it was made on (`withdrawal_type`, every existing row `crypto`), the
 * bank account a fiat one pays out to, and its payout on the rail: the rail, the rail's reference,
 * its state (`submitted`, `settled`, `returned`) and when the settlement job looks at it next
 * (`payout_due_at`, null once nothing more is expected; indexed for the job's claim).
 *
 * Down deletes nothing: it drops the columns, so fiat withdrawals would read as crypto ones; their
 * ledger entries stay balanced.
 */
export class Migration20261129040000_fiat_withdrawals extends Migration {

  override name = 'Migration20261129040000_fiat_withdrawals';

  override up(): void | Promise<void> {
    this.addSql(`alter table "withdrawal" add column "withdrawal_type" varchar(8) not null default 'crypto', add column "bank_account_id" uuid null, add column "payout_rail" varchar(32) null, add column "payout_reference" varchar(64) null, add column "payout_state" varchar(16) null, add column "payout_due_at" timestamptz null;`);
    this.addSql(`create index "withdrawal_payout_due_index" on "withdrawal" ("payout_due_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "withdrawal_payout_due_index";`);
    this.addSql(`alter table "withdrawal" drop column "withdrawal_type", drop column "bank_account_id", drop column "payout_rail", drop column "payout_reference", drop column "payout_state", drop column "payout_due_at";`);
  }

}

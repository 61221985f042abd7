/** Withdrawal code limits: life-time wrong codes, resends and their spacing, the cancel reason. */
import { Migration } from '@mikro-orm/migrations';

export class Migration20261122181405_withdrawal_code_limits extends Migration {

  override name = 'Migration20261122181405_withdrawal_code_limits';

  override up(): void | Promise<void> {
    // Withdrawal code limits (docs/decisions/withdrawals.md "The code"): life-time wrong codes, resends and their spacing. Rows of
    // earlier versions take their creation time as the issue time of their current code.
    this.addSql(`alter table "withdrawal" add "code_failures_total" int not null default 0, add "code_resends" int not null default 0, add "code_issued_at" timestamptz null, add "cancel_reason" varchar(32) null;`);
    this.addSql(`update "withdrawal" set "code_issued_at" = "created_at";`);
    this.addSql(`alter table "withdrawal" alter column "code_issued_at" set not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "withdrawal" drop column "code_failures_total", drop column "code_resends", drop column "code_issued_at", drop column "cancel_reason";`);
  }

}

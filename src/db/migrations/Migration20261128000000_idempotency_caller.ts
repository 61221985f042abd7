import { Migration } from '@mikro-orm/migrations';

/**
 * Idempotency-Keys per caller (docs/idempotency.md "Whose key it is"; src/modules/idempotency/):
 * `idempotency_key` gains `caller` (`user:<userId>` for a user token, `credential:<credentialId>`
 * for the owner API key or a customer session, `operator`, or `tenant` for a caller the service was
 * not told), and its primary key becomes (`customer_id`, `scope`, `caller`, `key`), so two callers
 * of one tenant may use the same key text without meeting.
 *
 * Up gives every row already stored the caller `*`, "any caller of the tenant". The rows do not say
 * who sent them: a withdrawal, transfer or order names its user, but the owner key may have sent it
 * as well as the user's token, and a tenant may have several owner keys; a caller guessed wrong
 * would turn a repeat sent across the upgrade into a second booking. A `*` key answers as it did
 * when it was stored: the same caller's repeat gets its first answer, and any caller of the tenant
 * sending it with another body gets the 409; no caller can take it anew (the service never writes
 * `*`, and checks for it before it inserts a key). Keys used from now on are per caller.
 *
 * Down keeps, for each (tenant, scope, key), its first use (earliest `created_at`, then the least
 * caller) and restores the primary key without `caller`. Callers' later uses of the same key text
 * lose their rows: their repeats would book again. (Going further down, below
 * Migration20261126050000_idempotency_keys, needs withdrawal keys unique per customer again.)
 */
export class Migration20261128000000_idempotency_caller extends Migration {

  override name = 'Migration20261128000000_idempotency_caller';

  override up(): void | Promise<void> {
    this.addSql(`alter table "idempotency_key" add column "caller" varchar(64) not null default '*';`);
    this.addSql(`alter table "idempotency_key" alter column "caller" drop default;`);
    this.addSql(`alter table "idempotency_key" drop constraint "idempotency_key_pkey";`);
    this.addSql(`alter table "idempotency_key" add constraint "idempotency_key_pkey" primary key ("customer_id", "scope", "caller", "key");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`delete from "idempotency_key" k using "idempotency_key" f
      where f."customer_id" = k."customer_id" and f."scope" = k."scope" and f."key" = k."key"
        and (f."created_at", f."caller") < (k."created_at", k."caller");`);
    this.addSql(`alter table "idempotency_key" drop constraint "idempotency_key_pkey";`);
    this.addSql(`alter table "idempotency_key" drop column "caller";`);
    this.addSql(`alter table "idempotency_key" add constraint "idempotency_key_pkey" primary key ("customer_id", "scope", "key");`);
  }

}

import { Migration } from '@mikro-orm/migrations';
import { nameKey } from '../../domain/text.js';

/** Wallets read per statement while the keys are filled. */
const BATCH = 1000;

/** A wallet as the fill reads it, in (user, age) order. */
interface WalletRow {
  wallet_id: string;
  user_id: string;
  name: string;
  /** `created_at` as PostgreSQL prints it (microseconds kept). */
  created_text: string;
}

/**
 * Names people compare, and user tokens that a deactivation revokes (docs/security.md "Names
 * people compare", "Tokens and rate-limit headers").
 *
 * - `wallet.name_key`: the wallet name's comparison key (src/domain/text.ts `nameKey`: NFKC,
 *   case-folded), unique per user (`wallet_user_name_key_unique`), in place of the exact-name
 *   unique. Existing wallets get their key computed here, by the service's own function, oldest
 *   first per user. Wallets created before the rule whose names already collide under it
 *   ("Main" and "main" of one user) are kept as they are, names and all: the oldest holds the key,
 *   the younger ones get a null key (a unique index ignores nulls), so the migration never fails
 *   and nothing a client sees changes; no new wallet can take the name, since the oldest holds it.
 * - `app_user.token_version`: a counter that each deactivation bumps; a user token carries the
 *   version it was issued under. Users deactivated before (`tokens_revoked_at` set) start at 1, so
 *   tokens issued before this migration (which carry no version: read as 0) stay refused for them.
 */
export class Migration20261126030000_names_tokens extends Migration {

  override name = 'Migration20261126030000_names_tokens';

  override async up(): Promise<void> {
    // Statements run in order through execute(): the key fill reads rows between them.
    await this.execute(`alter table "wallet" add column "name_key" text null;`);
    let after: WalletRow | null = null;
    let user: string | null = null;
    let taken = new Set<string>();
    for (;;) {
      // created_at as text: a JavaScript Date would drop the microseconds the keyset needs
      const where = after ? `where ("user_id", "created_at", "wallet_id") > (?::uuid, ?::timestamptz, ?::uuid)` : "";
      const rows = (await this.execute(
        `select "wallet_id", "user_id", "name", "created_at"::text as "created_text" from "wallet" ${where}
          order by "user_id", "created_at", "wallet_id" limit ${BATCH}`,
        after ? [after.user_id, after.created_text, after.wallet_id] : [],
      )) as unknown as WalletRow[];
      if (rows.length === 0) break;
      const keyed: { id: string; key: string }[] = [];
      for (const row of rows) {
        if (row.user_id !== user) {
          user = row.user_id;
          taken = new Set();
        }
        const key = nameKey(row.name);
        if (taken.has(key)) continue; // a younger look-alike: keeps a null key
        taken.add(key);
        keyed.push({ id: row.wallet_id, key });
      }
      // one statement per batch; the keys travel as one JSON text value
      await this.execute(
        `update "wallet" as w set "name_key" = k.key from jsonb_to_recordset(?::jsonb) as k(id uuid, key text) where w."wallet_id" = k.id`,
        [JSON.stringify(keyed)],
      );
      after = rows[rows.length - 1] as WalletRow;
    }
    await this.execute(`alter table "wallet" drop constraint "wallet_user_name_unique";`);
    await this.execute(`alter table "wallet" add constraint "wallet_user_name_key_unique" unique ("user_id", "name_key");`);

    await this.execute(`alter table "app_user" add column "token_version" int not null default 0;`);
    await this.execute(`update "app_user" set "token_version" = 1 where "tokens_revoked_at" is not null;`);
  }

  override async down(): Promise<void> {
    await this.execute(`alter table "app_user" drop column "token_version";`);
    await this.execute(`alter table "wallet" drop constraint "wallet_user_name_key_unique";`);
    await this.execute(`alter table "wallet" drop column "name_key";`);
    // Names unique under the key are unique as they are (equal names have equal keys).
    await this.execute(`alter table "wallet" add constraint "wallet_user_name_unique" unique ("user_id", "name");`);
  }

}

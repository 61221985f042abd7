import { Migration } from '@mikro-orm/migrations';

/**
 * The rate-limit buckets (src/http/rate-limits.ts): the table `rate-limiter-flexible` 11.4.0's
 * PostgreSQL store expects (`_getCreateTableStmt`), created here so no process creates schema at
 * run time, plus an index for the purge of expired rows.
 */
export class Migration20261122190000_rate_limits extends Migration {

  override name = 'Migration20261122190000_rate_limits';

  override up(): void | Promise<void> {
    this.addSql(`create table "rate_limit" ("key" varchar(255) primary key, "points" integer not null default 0, "expire" bigint);`);
    this.addSql(`create index "rate_limit_expire_index" on "rate_limit" ("expire");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "rate_limit";`);
  }

}

import { Migration } from '@mikro-orm/migrations';

/**
 * Market orders (docs/decisions/trading.md "Market orders"; src/modules/trading/entities.ts): an
 * order executed without a quote stores `trade_order.quote_id` null. The unique index on
 * `quote_id` still allows one order per quote (PostgreSQL does not compare nulls), and the foreign
 * key applies to the orders that have a quote.
 *
 * Down deletes the market orders (a column with nulls cannot become `not null`); their ledger
 * entries of kind `trade` and their wallet transactions stay, so the ledger stays balanced, as the
 * trading migration's down leaves them.
 */
export class Migration20261129063000_market_orders extends Migration {

  override name = 'Migration20261129063000_market_orders';

  override up(): void | Promise<void> {
    this.addSql(`alter table "trade_order" alter column "quote_id" drop not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`delete from "trade_order" where "quote_id" is null;`);
    this.addSql(`alter table "trade_order" alter column "quote_id" set not null;`);
  }

}

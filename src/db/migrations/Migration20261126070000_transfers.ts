import { Migration } from '@mikro-orm/migrations';

/**
 * Internal transfers (docs/decisions/limits-and-allowlist.md "Transfers"; src/modules/transfers/):
 * table `transfer`, one row per transfer between two wallets of one customer, pointing to the one
 * journal entry (kind `transfer`) that moved the amount. Indexed for List Wallet Transfers (each
 * direction by wallet and time) and for the sender's transfer caps (user, currency, time). Its
 * Idempotency-Keys live in `idempotency_key` under scope `transfer`; the wallet transactions of
 * both sides (`transfer_out`, `transfer_in`) in `wallet_transaction`. Down drops the table and
 * those keys (a repeat must not point to a transfer that is gone); the money moved stays moved:
 * the journal entries of kind `transfer`, their postings and the wallet transactions are the
 * ledger's history and stay, so the ledger stays balanced and every cached balance right.
 */
export class Migration20261126070000_transfers extends Migration {

  override name = 'Migration20261126070000_transfers';

  override up(): void | Promise<void> {
    this.addSql(`create table "transfer" ("id" uuid not null, "customer_id" varchar(48) not null, "from_wallet_id" uuid not null, "to_wallet_id" uuid not null, "from_user_id" uuid not null, "to_user_id" uuid not null, "currency" varchar(16) not null, "amount" numeric(38,18) not null, "memo" varchar(255) null, "status" varchar(16) not null, "idempotency_key" varchar(255) not null, "journal_entry_id" bigint not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "transfer_from_wallet_created_index" on "transfer" ("from_wallet_id", "created_at");`);
    this.addSql(`create index "transfer_to_wallet_created_index" on "transfer" ("to_wallet_id", "created_at");`);
    this.addSql(`create index "transfer_from_user_currency_created_index" on "transfer" ("from_user_id", "currency", "created_at");`);
    this.addSql(`alter table "transfer" add constraint "transfer_customer_id_foreign" foreign key ("customer_id") references "customer" ("customer_id");`);
    this.addSql(`alter table "transfer" add constraint "transfer_from_wallet_id_foreign" foreign key ("from_wallet_id") references "wallet" ("wallet_id");`);
    this.addSql(`alter table "transfer" add constraint "transfer_to_wallet_id_foreign" foreign key ("to_wallet_id") references "wallet" ("wallet_id");`);
    this.addSql(`alter table "transfer" add constraint "transfer_from_user_id_foreign" foreign key ("from_user_id") references "app_user" ("user_id");`);
    this.addSql(`alter table "transfer" add constraint "transfer_to_user_id_foreign" foreign key ("to_user_id") references "app_user" ("user_id");`);
    this.addSql(`alter table "transfer" add constraint "transfer_journal_entry_id_foreign" foreign key ("journal_entry_id") references "journal_entry" ("id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`delete from "idempotency_key" where "scope" = 'transfer';`);
    this.addSql(`drop table if exists "transfer" cascade;`);
  }

}

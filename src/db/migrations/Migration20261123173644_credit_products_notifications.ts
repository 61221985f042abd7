import { Migration } from '@mikro-orm/migrations';

/**
 * The tenants' credit products (unique three-digit code per tenant; docs/decisions/credit.md "Products")
 * and each tenant's credit notification target (NotificationsEnlist), its signing secret sealed
 * (docs/decisions/notifications.md "Credit notifications").
 */
export class Migration20261123173644_credit_products_notifications extends Migration {

  override name = 'Migration20261123173644_credit_products_notifications';

  override up(): void | Promise<void> {
    this.addSql(`create table "credit_product" ("id" uuid not null, "customer_id" varchar(48) not null, "code" varchar(3) not null, "revolving" boolean not null, "compound" boolean not null, "cut_frequency" varchar(16) not null, "fixed_interest_amount" bigint not null, "base_interest_rate" numeric(9,4) not null, "base_minimum_payment_rate" numeric(9,4) not null, "fixed_minimum_payment_amount" bigint not null, "capital_interest_split" numeric(9,4) not null, "grace_period" int not null, "variable_specs" boolean not null, "morosidad_rate" numeric(9,4) not null, "base_interest_morosidad" bigint not null, "interest_accrual_method" varchar(3) not null, "daily_rate_divisor" int not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "credit_product" add constraint "credit_product_customer_code_unique" unique ("customer_id", "code");`);

    this.addSql(`create table "credit_notification_target" ("customer_id" varchar(48) not null, "url" varchar(2048) not null, "secret_sealed" text not null, "disabled_at" timestamptz null, "disabled_reason" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("customer_id"));`);

    this.addSql(`alter table "credit_product" add constraint "credit_product_customer_id_foreign" foreign key ("customer_id") references "customer" ("customer_id");`);

    this.addSql(`alter table "credit_notification_target" add constraint "credit_notification_target_customer_id_foreign" foreign key ("customer_id") references "customer" ("customer_id") on update cascade on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "credit_product" cascade;`);
    this.addSql(`drop table if exists "credit_notification_target" cascade;`);
  }

}

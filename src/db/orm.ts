/**
 * MikroORM on PostgreSQL: one `initORM()` that connects (failing fast), runs the committed
 * migrations, and returns the ORM. Entities are listed once here.
 */
import { MikroORM, defineConfig, type Options } from "@mikro-orm/postgresql";
import type pg from "pg";
import { Migrator } from "@mikro-orm/migrations";
import { Credential, Customer, ServiceSetting } from "../modules/identity/entities.js";
import { User } from "../modules/users/entities.js";
import { JournalEntry, LedgerAccount, LedgerPosting } from "../modules/ledger/entities.js";
import { Wallet, WalletAddress, WalletTransaction } from "../modules/wallets/entities.js";
import { SandboxDepositAddress, SandboxVaultWallet } from "../providers/sandbox-entities.js";
import { OutboxEmail } from "../modules/mail/entities.js";
import { Withdrawal } from "../modules/withdrawals/entities.js";
import { Webhook, WebhookAttempt, WebhookDelivery } from "../modules/webhooks/entities.js";
import { EmailPoller } from "../modules/poller/entities.js";
import { CreditNotificationTarget, CreditProduct } from "../modules/credit/entities.js";
import { CreditCharge, CreditClock, CreditEvent, CreditEventAttempt, CreditIdempotencyKey, CreditPayment, CreditStatement, CreditWallet } from "../modules/credit/wallet-entities.js";
import { migrationsList } from "./migrations/index.js";

/** Every entity of the service. */
export const entities = [
  ServiceSetting, Customer, Credential, User,
  LedgerAccount, JournalEntry, LedgerPosting,
  Wallet, WalletAddress, WalletTransaction,
  SandboxVaultWallet, SandboxDepositAddress,
  Withdrawal, OutboxEmail,
  Webhook, WebhookDelivery, WebhookAttempt, EmailPoller,
  CreditProduct, CreditNotificationTarget,
  CreditWallet, CreditStatement, CreditEvent, CreditEventAttempt, CreditCharge, CreditPayment, CreditIdempotencyKey, CreditClock,
];

/** Tables the ORM does not own, each created by a committed migration: Agenda's job table and the rate-limit buckets. */
export const FOREIGN_TABLES = ["agenda_jobs", "rate_limit"];

/** How long a checked-out connection that died may stay checked out before {@link releaseDeadConnections} releases it, ms. */
const DEAD_CONNECTION_GRACE_MS = 1_000;

/**
 * Keeps connections that die while checked out from leaking out of `pool` (issue 8, "Database
 * down"). Kysely (under MikroORM) releases a transaction's connection only after its COMMIT or
 * ROLLBACK succeeded; when PostgreSQL goes away mid-transaction both fail, the connection is never
 * released, and after a few outages the pool has no connection left even though the database is
 * back. Here a checked-out connection that ends or fails is released with its error (so pg-pool
 * destroys it instead of reusing it) once {@link DEAD_CONNECTION_GRACE_MS} has passed without its
 * holder releasing it; a later release by the holder is then a no-op.
 */
export function releaseDeadConnections(pool: pg.Pool): void {
  const checkedOut = new Set<pg.PoolClient>();
  pool.on("acquire", (client) => {
    checkedOut.add(client);
    if ((client as { deadConnectionGuard?: boolean }).deadConnectionGuard) return;
    (client as { deadConnectionGuard?: boolean }).deadConnectionGuard = true;
    const died = (error?: Error): void => {
      setTimeout(() => {
        if (!checkedOut.has(client)) return;
        checkedOut.delete(client);
        client.release(error ?? new Error("Connection terminated"));
        client.release = () => {};
      }, DEAD_CONNECTION_GRACE_MS).unref();
    };
    client.on("error", died);
    client.on("end", () => died());
  });
  pool.on("release", (_error, client) => {
    checkedOut.delete(client as pg.PoolClient);
  });
}

/** The ORM configuration for a PostgreSQL connection URL. */
export function ormConfig(clientUrl: string, overrides: Partial<Options> = {}): Options {
  return defineConfig({
    clientUrl,
    entities,
    extensions: [Migrator],
    migrations: { migrationsList, transactional: true, allOrNothing: true, snapshot: false, silent: true },
    pool: { min: 0, max: 10 },
    driverOptions: { onPoolCreated: releaseDeadConnections },
    debug: false,
    schemaGenerator: { skipTables: FOREIGN_TABLES },
    ...overrides,
  });
}

/**
 * Connects to `clientUrl`, applies pending migrations, and returns the ORM.
 * @throws the driver's connection error when the database is unreachable.
 */
export async function initORM(clientUrl: string): Promise<MikroORM> {
  const orm = await MikroORM.init(ormConfig(clientUrl));
  await orm.connect();
  await orm.migrator.up();
  return orm;
}

export { MikroORM };

/**
 * createApp(config) builds everything from configuration, with no globals: database (embedded or
 * `DATABASE_URL`), migrations, identity secrets, services, both surfaces and the express app.
 */
import { resolve } from "node:path";
import type { Express } from "express";
import type { Logger } from "pino";
import { createLogger } from "./logging.js";
import { registerBusinessMetrics } from "./http/business-metrics.js";
import type { Config } from "./config.js";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "./db/embedded.js";
import { cutStatementsAt, initORM, type MikroORM } from "./db/orm.js";
import { ENTITIES } from "./modules/entities.js";
import { checkNamedStatementsSurvive } from "./db/pool-mode.js";
import { Db } from "./db/sql.js";
import { bootstrapIdentitySecrets, type IdentitySecrets } from "./modules/identity/bootstrap.js";
import { openCustodyKeys } from "./providers/evm/keys.js";
import { Metrics, registerJobListenMetrics, registerListenMetrics } from "./http/ops.js";
import { NotificationListener } from "./db/listen.js";
import { assembleExpress } from "./http/express-app.js";
import { RateLimits } from "./http/rate-limits.js";
import { MailService } from "./modules/mail/service.js";
import { JobScheduler } from "./jobs/scheduler.js";
import { startJobs } from "./jobs/registry.js";
import { creditCyclesJob } from "./modules/credit/cycles/service.js";

import { buildServices, buildSurfaces, type AppServices } from "./wiring.js";

export type { AppServices } from "./wiring.js";
/** Options beyond configuration, mostly for tests. */
export interface AppOptions {
  logger?: Logger;
  /** Validate every response against the contract; a mismatch answers 500 (tests turn this on). */
  validateResponses?: boolean;
  /** Called once with a master key generated on this start (default: printed to stdout). */
  onGeneratedMasterKey?: (key: string) => void;
}

/** A built application. `close()` stops the ORM and, if started, the embedded database. */
export interface App {
  express: Express;
  orm: MikroORM;
  /** Where every statement runs (src/db/sql.ts): the ORM's pool, named unless behind a transaction pooler. */
  db: Db;
  services: AppServices;
  logger: Logger;
  databaseUrl: string;
  /** Background jobs (Agenda); they run in this process unless `ROLE=api`. */
  scheduler: JobScheduler;
  /**
   * Stops the background jobs (running ones may finish until `options.deadline`, epoch ms; by
   * default `SHUTDOWN_TIMEOUT_S` from the call), closes the pools (the ORM's, the rate limits', the
   * scheduler's), then stops the embedded database if this process started it. From the deadline on,
   * the statements still running on this process's connections are cancelled, then their backends
   * terminated (src/db/orm.ts `cutStatementsAt`; their transactions roll back), so the close ends a
   * few seconds after the deadline whatever runs (docs/security.md "Shutdown"). Call it after the
   * HTTP server has stopped taking requests.
   */
  close(options?: { deadline?: number }): Promise<void>;
}

export { CREDIT_CYCLES_JOB, CREDIT_CYCLES_INTERVAL_S } from "./modules/credit/cycles/service.js";
export { MAIL_JOB } from "./modules/mail/service.js";

const printMasterKey = (key: string): void => {
  process.stdout.write(`\n  MASTER API KEY (shown once, only its hash is stored):\n\n    ${key}\n\n  Set MASTER_API_KEY to choose your own.\n\n`);
};

/**
 * Builds the service: the database (embedded unless `DATABASE_URL`), its migrations, the identity
 * secrets, the services, both surfaces, the express app and the background jobs. Whatever was
 * started is stopped again when a step fails.
 * @throws when the database is unreachable or a migration fails.
 */
export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const custody = openCustodyKeys(config.liveChains.map((c) => c.network), config, logger); // before anything starts (docs/decisions/live-chains.md "Keys")
  const { databaseUrl, embedded } = await openDatabase(config, logger);
  // what needs a session of its own: the migrations' lock, the job scheduler, the shutdown's cancellations (docs/operations.md "PgBouncer")
  const sessionUrl = config.databaseSessionUrl ?? databaseUrl;
  let orm: MikroORM | undefined;
  let scheduler: JobScheduler | undefined;
  let limits: RateLimits | undefined;
  let listener: NotificationListener | undefined;
  try {
    // every wait of a request bounded by DATABASE_WAIT_S (docs/operations.md "Database waits")
    orm = await initORM(databaseUrl, ENTITIES, sessionUrl, { waitS: config.databaseWaitS, serverSettings: config.databasePoolMode === "session" });
    // named prepared statements behind a transaction pooler: refused at start (docs/operations.md "PgBouncer")
    if (config.databaseUrl !== undefined && config.databasePoolMode === "session") await checkNamedStatementsSurvive(databaseUrl);
    // Every statement of the repositories runs on the ORM's own pool, named unless behind a transaction pooler (src/db/sql.ts).
    const pool = await orm.em.getConnection().getNativeClient();
    const statements = new Db(pool, { named: config.databasePoolMode === "session" }, (error) => logger.error({ err: error }, "a step after a commit failed"));
    const secrets = await loadSecrets(statements, config, logger, options);
    scheduler = new JobScheduler({
      databaseUrl: sessionUrl,
      lockLifetimeMs: config.jobLockLifetimeS * 1000,
      processEveryMs: Math.min(5, config.outboxIntervalS, config.pollerIntervalS, config.payoutIntervalS) * 1000,
      databaseWaitS: config.databaseWaitS,
      logger,
    });
    const wiring = buildServices(config, logger, orm, secrets, statements, scheduler, custody);
    limits = new RateLimits(databaseUrl, {
      ip: config.rateLimitIp,
      credential: config.rateLimitCredential,
      authFailures: config.rateLimitAuthFailures,
      codes: config.rateLimitCodes,
    }, logger, config.rateLimitSyncMs);
    if (config.role !== "worker") {
      // the credential cache's revocations, on a session connection (docs/decisions/credentials-and-tokens.md "The credential cache")
      listener = new NotificationListener(sessionUrl, logger);
      wiring.authenticator.follow(listener);
      await listener.start();
    }
    const validateResponses = options.validateResponses ?? false;
    const surfaces = await buildSurfaces(config, logger, orm, wiring, limits, validateResponses);
    const metrics = new Metrics();
    registerBusinessMetrics(metrics.registry, statements, pool);
    if (listener) registerListenMetrics(metrics.registry, listener);
    registerJobListenMetrics(metrics.registry, scheduler);
    const app = assembleExpress({ surfaces, orm, metrics, logger, validateResponses, trustProxy: config.trustProxy, metricsToken: config.metricsToken });
    const { mail, webhooks, creditDelivery, pollers } = wiring.services;

    // Background jobs: every process defines them, workers run them; the one list (src/jobs/registry.ts, docs/outbox.md "Jobs").
    await startJobs(scheduler, [
      ...mail.jobs(config.outboxIntervalS),
      ...webhooks.jobs(config.outboxIntervalS),
      ...creditDelivery.jobs(config.outboxIntervalS),
      // its set-based statements may outlast DATABASE_WAIT_S: bounded by the job's lock instead (docs/operations.md "Database waits")
      creditCyclesJob(statements.withStatementBound(config.jobLockLifetimeS * 1000), logger, (count) => creditDelivery.notifyCreditEventsWritten(count)),
      ...pollers.jobs(),
      ...wiring.services.payouts.jobs(config.payoutIntervalS),
      ...wiring.services.chains.jobs(),
    ], config.role !== "api");
    if (config.role !== "api") {
      await pollers.syncJobs();
      logger.info({ role: config.role }, "background jobs started");
    }

    return {
      express: app,
      orm,
      db: statements,
      services: wiring.services,
      logger,
      databaseUrl,
      scheduler,
      close: closer(config, logger, sessionUrl, { scheduler, mail, limits, orm, embedded, listener }),
    };
  } catch (error) {
    await scheduler?.close(0).catch(() => {});
    await limits?.close().catch(() => {});
    await listener?.close();
    await orm?.close(true).catch(() => {});
    await embedded?.stop().catch(() => {});
    throw error;
  }
}

/** Starts the embedded PostgreSQL unless `DATABASE_URL` is set. @returns the URL to connect to, and the embedded server if one was started. */
async function openDatabase(config: Config, logger: Logger): Promise<{ databaseUrl: string; embedded?: EmbeddedDatabase }> {
  if (config.databaseUrl) return { databaseUrl: config.databaseUrl };
  const embedded = await startEmbeddedPostgres(config.dataDir);
  if (embedded.leftover !== "none") logger.warn({ dataDir: config.dataDir, leftover: embedded.leftover }, "a PostgreSQL left running by a killed process was stopped first");
  // as root PostgreSQL runs as the user postgres, which must enter DATA_DIR (src/db/embedded.ts openDataDirToPostgres)
  if (embedded.dataDirOpened) logger.info({ dataDir: config.dataDir }, "DATA_DIR opened to the group postgres (chgrp postgres, chmod g+x): the embedded PostgreSQL runs as the user postgres");
  logger.info({ port: embedded.port, dataDir: config.dataDir }, "embedded PostgreSQL started");
  return { databaseUrl: embedded.url, embedded };
}

/**
 * The identity secrets (src/modules/identity/bootstrap.ts): `SECRETS_KEY`, else (embedded
 * PostgreSQL only, src/config.ts) the key file under `DATA_DIR`; what happened is logged, and a
 * master key generated on this start is handed to `options.onGeneratedMasterKey` (default: stdout).
 */
async function loadSecrets(statements: Db, config: Config, logger: Logger, options: AppOptions): Promise<IdentitySecrets> {
  const secretsKeyFile = config.secretsKey === undefined ? resolve(config.dataDir, "secrets.key") : undefined;
  const secrets = await bootstrapIdentitySecrets(statements, { ...config, secretsKeyFile });
  if (secrets.secretsKeySource === "file-created") logger.info({ file: secretsKeyFile }, "generated the secrets key (SECRETS_KEY unset) in its file, mode 0600");
  if (secrets.legacyRow === "moved") logger.warn({ file: secretsKeyFile }, "moved the secrets key of an earlier version out of the database into its file");
  if (secrets.legacyRow === "deleted") logger.warn("deleted the secrets key an earlier version kept in the database (SECRETS_KEY is set)");
  if (secrets.generatedMasterKey) (options.onGeneratedMasterKey ?? printMasterKey)(secrets.generatedMasterKey);
  return secrets;
}

/** The app's {@link App.close} over what {@link createApp} started. */
function closer(
  config: Config,
  logger: Logger,
  databaseUrl: string,
  started: { scheduler: JobScheduler; mail: MailService; limits: RateLimits; orm: MikroORM; embedded: EmbeddedDatabase | undefined; listener: NotificationListener | undefined },
): App["close"] {
  return async (closeOptions: { deadline?: number } = {}) => {
    const deadline = closeOptions.deadline ?? Date.now() + config.shutdownTimeoutS * 1000;
    const cut = cutStatementsAt(deadline, databaseUrl, logger);
    try {
      await started.scheduler.close(Math.max(0, deadline - Date.now()));
      await started.mail.idle();
      started.mail.close();
      await Promise.all([started.limits.close(), started.listener?.close(), started.orm.close(true)]);
    } finally {
      await cut.stop();
      // Stopped whatever failed before: a PostgreSQL left behind would hold the DATA_DIR.
      await started.embedded?.stop();
    }
  };
}

/**
 * createApp(config) builds everything from configuration, with no globals: database (embedded or
 * `DATABASE_URL`), migrations, identity secrets, services, both surfaces and the express app.
 */
import { resolve } from "node:path";
import express, { type Express } from "express";
import type { Logger } from "pino";
import { createLogger } from "./logging.js";
import { observeRequests } from "./http/observe.js";
import { registerBusinessMetrics } from "./http/business-metrics.js";
import { contractCheck } from "./http/contract-check.js";
import type { Document } from "openapi-backend";
import type { Config } from "./config.js";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "./db/embedded.js";
import { cutStatementsAt, initORM, type MikroORM } from "./db/orm.js";
import { Statements } from "./db/statements.js";
import { Authenticator } from "./modules/identity/auth.js";
import { bootstrapIdentitySecrets } from "./modules/identity/bootstrap.js";
import { IdentityService } from "./modules/identity/service.js";
import { UserService } from "./modules/users/service.js";
import { SandboxProvider } from "./providers/sandbox.js";
import type { CustodyProvider } from "./providers/provider.js";
import { docsRouter, loadDocument } from "./http/docs.js";
import { errorBody } from "./http/envelope.js";
import { renderError } from "./http/errors.js";
import { rejectUnsafeTargets, surfaceOf, traceIds } from "./http/middleware.js";
import { BodyBudget } from "./http/json-body.js";
import { Metrics, opsRouter } from "./http/ops.js";
import { buildSurface } from "./http/surface.js";
import { RateLimits } from "./http/rate-limits.js";
import { platformAccess, platformScope } from "./http/platform/access.js";
import { platformHandlers, platformNotImplemented } from "./http/platform/handlers.js";
import { walletHandlers } from "./http/platform/wallet-handlers.js";
import { withdrawalHandlers } from "./http/platform/withdrawal-handlers.js";
import { MailService } from "./modules/mail/service.js";
import { WithdrawalService } from "./modules/withdrawals/service.js";
import { LedgerService } from "./modules/ledger/service.js";
import { WalletService } from "./modules/wallets/service.js";
import { creditAccess, creditHandlers, creditNotImplemented } from "./http/credit/wiring.js";
import { JobScheduler } from "./jobs/scheduler.js";
import { WebhookService } from "./modules/webhooks/service.js";
import { CreditProductService } from "./modules/credit/products.js";
import { CreditWalletService } from "./modules/credit/wallets.js";
import { creditWalletHandlers } from "./http/credit/wallet-handlers.js";
import { CreditNotificationService } from "./modules/credit/notifications.js";
import { CreditNotificationDelivery } from "./modules/credit/delivery.js";
import { SandboxClockService } from "./modules/credit/sandbox-clock.js";
import { REAL_TIME, runDueSteps } from "./modules/credit/cycles.js";
import { sandboxClockHandlers } from "./http/credit/clock-handlers.js";
import { EmailPollerService } from "./modules/poller/service.js";
import { webhookHandlers } from "./http/platform/webhook-handlers.js";
import { pollerHandlers } from "./http/platform/poller-handlers.js";
import type { operations as PlatformOps } from "../generated/types/platform.js";
import type { operations as CreditOps } from "../generated/types/credit.js";

/** Options beyond configuration, mostly for tests. */
export interface AppOptions {
  logger?: Logger;
  /** Validate every response against the contract; a mismatch answers 500 (tests turn this on). */
  validateResponses?: boolean;
  /** Called once with a master key generated on this start (default: printed to stdout). */
  onGeneratedMasterKey?: (key: string) => void;
}

/** The services of a built app (tests use them to seed state the way handlers do). */
export interface AppServices {
  identity: IdentityService;
  users: UserService;
  ledger: LedgerService;
  wallets: WalletService;
  withdrawals: WithdrawalService;
  mail: MailService;
  webhooks: WebhookService;
  pollers: EmailPollerService;
  creditProducts: CreditProductService;
  creditNotifications: CreditNotificationService;
  /** Delivery of the credit notifications; writers of `credit_event` rows call its `notifyCreditEventsWritten` after commit. */
  creditDelivery: CreditNotificationDelivery;
  sandboxClock: SandboxClockService;
  creditWallets: CreditWalletService;
}

/** A built application. `close()` stops the ORM and, if started, the embedded database. */
export interface App {
  express: Express;
  orm: MikroORM;
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

/**
 * Name of the recurring credit cycle job: runs every daily close, grace end and cut due for the
 * real-time tenants (src/modules/credit/cycles.ts `runDueSteps`), every {@link CREDIT_CYCLES_INTERVAL_S}
 * seconds and once at start. Tenants with a sandbox clock are skipped (their clock runs their steps).
 * A wallet whose next step would take an amount beyond ±(2^53 − 1) cents is set aside, logged once
 * and skipped; the others' steps run as usual (docs/security.md "Money stays exact").
 */
export const CREDIT_CYCLES_JOB = "credit-cycles";
/** Interval of {@link CREDIT_CYCLES_JOB}, seconds. */
export const CREDIT_CYCLES_INTERVAL_S = 60;

/** Name of the email delivery job (retries of the outbox; the first attempt follows the commit). */
export const MAIL_JOB = "mail-delivery";

const printMasterKey = (key: string): void => {
  process.stdout.write(
    `\n  MASTER API KEY (shown once, only its hash is stored):\n\n    ${key}\n\n  Set MASTER_API_KEY to choose your own.\n\n`,
  );
};

/** Builds the service. @throws when the database is unreachable or a migration fails. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres(config.dataDir);
    databaseUrl = embedded.url;
    if (embedded.leftover !== "none") logger.warn({ dataDir: config.dataDir, leftover: embedded.leftover }, "a PostgreSQL left running by a killed process was stopped first");
    logger.info({ port: embedded.port, dataDir: config.dataDir }, "embedded PostgreSQL started");
  }
  let orm: MikroORM | undefined;
  let scheduler: JobScheduler | undefined;
  let limits: RateLimits | undefined;
  try {
    orm = await initORM(databaseUrl);
    // SECRETS_KEY, else (embedded PostgreSQL only, src/config.ts) the key file under DATA_DIR.
    const secretsKeyFile = config.secretsKey === undefined ? resolve(config.dataDir, "secrets.key") : undefined;
    const secrets = await bootstrapIdentitySecrets(orm.em.fork(), { ...config, secretsKeyFile });
    if (secrets.secretsKeySource === "file-created") logger.info({ file: secretsKeyFile }, "generated the secrets key (SECRETS_KEY unset) in its file, mode 0600");
    if (secrets.legacyRow === "moved") logger.warn({ file: secretsKeyFile }, "moved the secrets key of an earlier version out of the database into its file");
    if (secrets.legacyRow === "deleted") logger.warn("deleted the secrets key an earlier version kept in the database (SECRETS_KEY is set)");
    if (secrets.generatedMasterKey) (options.onGeneratedMasterKey ?? printMasterKey)(secrets.generatedMasterKey);

    const provider: CustodyProvider = new SandboxProvider(config.sandboxSeed);
    // Hot-path statements run prepared, with bound parameters, on the ORM's own pool (src/db/statements.ts).
    const pool = await orm.em.getConnection().getNativeClient();
    const statements = new Statements(pool);
    const authenticator = new Authenticator(secrets.box, secrets.masterHash, statements);
    const identity = new IdentityService(secrets.box, authenticator, provider, config.sessionTtlS);
    const users = new UserService(secrets.box, config.userTokenTtlS);
    const ledger = new LedgerService();
    const wallets = new WalletService(provider, ledger, users, statements);
    const mail = new MailService(orm, config.smtpUrl, config.mailFrom, logger, statements);
    scheduler = new JobScheduler({
      databaseUrl,
      lockLifetimeMs: config.jobLockLifetimeS * 1000,
      processEveryMs: Math.min(5, config.outboxIntervalS, config.pollerIntervalS) * 1000,
      logger,
    });
    const webhooks = new WebhookService(orm, secrets.box, identity, scheduler, {
      timeoutS: config.webhookTimeoutS,
      retryBaseS: config.webhookRetryBaseS,
      allowPrivate: config.allowPrivateNetworkTargets,
    }, logger);
    const withdrawals = new WithdrawalService(provider, ledger, users, wallets, mail, webhooks, secrets.box, {
      codeTtlS: config.withdrawalCodeTtlS,
      maxAttempts: config.withdrawalCodeMaxAttempts,
      maxTotalAttempts: config.withdrawalCodeMaxTotalAttempts,
      maxResends: config.withdrawalCodeMaxResends,
      resendIntervalS: config.withdrawalCodeResendIntervalS,
      caps: config.withdrawalCaps,
    });
    const pollers = new EmailPollerService(orm, secrets.box, identity, scheduler, withdrawals, {
      intervalS: config.pollerIntervalS,
      timeoutS: config.imapTimeoutS,
      allowPrivate: config.allowPrivateNetworkTargets,
    }, logger);
    const validateResponses = options.validateResponses ?? false;
    const creditProducts = new CreditProductService(statements);
    const creditDelivery = new CreditNotificationDelivery(orm, secrets.box, scheduler, {
      timeoutS: config.webhookTimeoutS,
      retryBaseS: config.webhookRetryBaseS,
      allowPrivate: config.allowPrivateNetworkTargets,
    }, logger);
    // An enlist may enable a target with events waiting: release them and start a round at once.
    const creditNotifications = new CreditNotificationService(secrets.box, config.allowPrivateNetworkTargets, (customerId) => creditDelivery.resumeTenant(customerId));
    // Writers of credit_event rows start their delivery after commit.
    const creditWallets = new CreditWalletService((count) => creditDelivery.notifyCreditEventsWritten(count), logger);
    const sandboxClock = new SandboxClockService(undefined, (count) => creditDelivery.notifyCreditEventsWritten(count), { moveBudgetMs: config.clockMoveBudgetS * 1000, logger });
    limits = new RateLimits(databaseUrl, {
      ip: config.rateLimitIp,
      credential: config.rateLimitCredential,
      authFailures: config.rateLimitAuthFailures,
      codes: config.rateLimitCodes,
    }, logger);

    // One budget of body bytes for both surfaces (src/http/json-body.ts).
    const bodyBudget = new BodyBudget(config.maxBodyBytesInFlight);
    const platform = await buildSurface<PlatformOps>({
      surface: "platform",
      definition: loadDocument("platform") as unknown as Document,
      handlers: {
        ...platformHandlers({ identity, users }),
        ...walletHandlers(wallets, provider),
        ...withdrawalHandlers(withdrawals, mail, provider),
        ...webhookHandlers(webhooks),
        ...pollerHandlers(pollers),
      },
      notImplemented: platformNotImplemented,
      access: platformAccess,
      scope: platformScope,
      orm,
      authenticator,
      logger,
      validateResponses,
      limits,
      bodyLimitBytes: config.bodyLimitBytes,
      bodyBudget,
      codeOperations: ["confirmWithdrawal", "resendWithdrawalCode"],
    });
    const credit = await buildSurface<CreditOps>({
      surface: "credit",
      definition: loadDocument("credit") as unknown as Document,
      handlers: {
        ...creditHandlers({ products: creditProducts, notifications: creditNotifications }),
        ...sandboxClockHandlers(sandboxClock, provider),
        ...creditWalletHandlers(creditWallets),
      },
      notImplemented: creditNotImplemented,
      access: creditAccess,
      orm,
      authenticator,
      logger,
      validateResponses,
      limits,
      bodyLimitBytes: config.bodyLimitBytes,
      bodyBudget,
    });

    const metrics = new Metrics();
    registerBusinessMetrics(metrics.registry, statements, pool);
    const app = express();
    app.disable("x-powered-by");
    // No ETag: every envelope carries its own timestamp and trace id, so a body's hash never matches
    // a client's If-None-Match; computing it cost a hash of every GET body (issue 10).
    app.set("etag", false);
    app.set("trust proxy", config.trustProxy);
    app.set("query parser", "simple");
    app.use(traceIds());
    // Tests: every JSON answer under /api/v1 and /v2, errors included, is checked against the documents.
    if (validateResponses) app.use(contractCheck({ platform: platform.api, credit: credit.api }, logger));
    app.use(observeRequests(logger, metrics));
    app.use(opsRouter(orm, metrics, { metricsToken: config.metricsToken }));
    app.use(docsRouter());
    // Bodies are read by the surfaces once the caller is authenticated (src/http/json-body.ts).
    app.use(rejectUnsafeTargets());
    const platformRouter = express.Router();
    platformRouter.use((req, res, next) => {
      platform.handle(req, res, req.traceId).catch(next);
    });
    const creditRouter = express.Router();
    creditRouter.use((req, res, next) => {
      credit.handle(req, res, req.traceId).catch(next);
    });
    app.use("/api/v1", platformRouter);
    app.use(creditRouter);
    app.use((error: unknown, req: express.Request, res: express.Response, _next: express.NextFunction) => {
      // Errors that escape a surface (an authentication lookup in openapi-backend's security
      // handler, middleware): a lost database answers 503 like inside the surfaces, anything else 500.
      const rendered = renderError(surfaceOf(req.path), error);
      if (rendered.unavailable !== undefined) logger.warn({ err: error, traceId: req.traceId }, "database unavailable: answered 503");
      else logger.error({ err: error, traceId: req.traceId }, "unhandled error");
      if (res.headersSent) return;
      if (rendered.headers) res.set(rendered.headers);
      res.status(rendered.status).json(errorBody(surfaceOf(req.path), req.traceId, rendered.errors));
    });

    // Background jobs (decisions.md §1): every process defines them; workers run them.
    scheduler.define(MAIL_JOB, async () => {
      await mail.deliverPending();
    }, { concurrency: 1 });
    webhooks.defineJobs();
    creditDelivery.defineJobs();
    pollers.defineJobs();
    const cyclesOrm = orm;
    scheduler.define(CREDIT_CYCLES_JOB, async () => {
      // a wallet whose next step would leave ±(2^53 − 1) cents is set aside and logged (docs/security.md "Money stays exact")
      const ran = await runDueSteps(cyclesOrm.em.fork(), REAL_TIME, new Date(), { logger });
      creditDelivery.notifyCreditEventsWritten(ran.events);
    }, { concurrency: 1 });
    await scheduler.start(config.role !== "api");
    if (mail.smtpEnabled) await scheduler.every(MAIL_JOB, config.outboxIntervalS);
    await webhooks.scheduleRecurring(config.outboxIntervalS);
    await creditDelivery.scheduleRecurring(config.outboxIntervalS);
    await scheduler.every(CREDIT_CYCLES_JOB, CREDIT_CYCLES_INTERVAL_S);
    if (config.role !== "api") {
      await pollers.syncJobs();
      logger.info({ role: config.role }, "background jobs started");
    }

    const ormRef = orm;
    const jobs = scheduler;
    const buckets = limits;
    return {
      express: app,
      orm,
      services: { identity, users, ledger, wallets, withdrawals, mail, webhooks, pollers, creditProducts, creditNotifications, creditDelivery, sandboxClock, creditWallets },
      logger,
      databaseUrl,
      scheduler,
      async close(closeOptions: { deadline?: number } = {}) {
        const deadline = closeOptions.deadline ?? Date.now() + config.shutdownTimeoutS * 1000;
        const cut = cutStatementsAt(deadline, databaseUrl as string, logger);
        try {
          await jobs.close(Math.max(0, deadline - Date.now()));
          await mail.idle();
          mail.close();
          await Promise.all([buckets.close(), ormRef.close(true)]);
        } finally {
          await cut.stop();
          // Stopped whatever failed before: a PostgreSQL left behind would hold the DATA_DIR.
          await embedded?.stop();
        }
      },
    };
  } catch (error) {
    await scheduler?.close(0).catch(() => {});
    await limits?.close().catch(() => {});
    await orm?.close(true).catch(() => {});
    await embedded?.stop().catch(() => {});
    throw error;
  }
}

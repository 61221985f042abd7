/**
 * createApp(config) builds everything from configuration, with no globals: database (embedded or
 * `DATABASE_URL`), migrations, identity secrets, services, both surfaces and the express app.
 */
import { resolve } from "node:path";
import type { Express } from "express";
import type { Logger } from "pino";
import { createLogger } from "./logging.js";
import { registerBusinessMetrics } from "./http/business-metrics.js";
import type { Document } from "openapi-backend";
import type { Config } from "./config.js";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "./db/embedded.js";
import { cutStatementsAt, initORM, type MikroORM } from "./db/orm.js";
import { ENTITIES } from "./modules/entities.js";
import { checkNamedStatementsSurvive } from "./db/pool-mode.js";
import { Db } from "./db/sql.js";
import { Authenticator } from "./modules/identity/auth.js";
import { bootstrapIdentitySecrets, type IdentitySecrets } from "./modules/identity/bootstrap.js";
import { IdentityService } from "./modules/identity/service.js";
import { UserService } from "./modules/users/service.js";
import { SandboxProvider } from "./providers/sandbox.js";
import type { CustodyProvider } from "./providers/provider.js";
import { openCustodyKeys, type CustodyKeys } from "./providers/evm/keys.js";
import { liveNetworkSet } from "./domain/live-chains.js";
import { loadDocument } from "./http/docs.js";
import { BodyBudget } from "./http/body-budget.js";
import { Metrics } from "./http/ops.js";
import { assembleExpress } from "./http/express-app.js";
import { buildSurface, type BuiltSurface } from "./http/surface.js";
import { RateLimits } from "./http/rate-limits.js";
import { platformAccess, platformScope } from "./http/platform/access.js";
import { platformHandlers, platformNotImplemented } from "./http/platform/handlers.js";
import { walletHandlers } from "./http/platform/wallet-handlers.js";
import { withdrawalHandlers } from "./http/platform/withdrawal-handlers.js";
import { MailService } from "./modules/mail/service.js";
import { WithdrawalService } from "./modules/withdrawals/service.js";
import { PayoutSettlement } from "./modules/withdrawals/payouts.js";
import type { PayoutRail } from "./modules/payouts/rail.js";
import { SandboxRail } from "./modules/payouts/sandbox-rail.js";
import { LedgerService } from "./modules/ledger/service.js";
import { WalletService } from "./modules/wallets/service.js";
import { WalletStates } from "./modules/wallets/states.js";
import { CurrencySwitches } from "./modules/currencies/service.js";
import { creditAccess, creditHandlers, creditNotImplemented } from "./http/credit/wiring.js";
import { JobScheduler } from "./jobs/scheduler.js";
import { startJobs } from "./jobs/registry.js";
import { WebhookService } from "./modules/webhooks/service.js";
import { CreditProductService } from "./modules/credit/products/service.js";
import { CreditWalletService } from "./modules/credit/accounts/service.js";
import { creditWalletHandlers } from "./http/credit/wallet-handlers.js";
import { creditAuthorizationHandlers } from "./http/credit/authorization-handlers.js";
import { creditCardHandlers } from "./http/credit/card-handlers.js";
import { tradingHandlers } from "./http/platform/trading-handlers.js";
import { TradingService } from "./modules/trading/service.js";
import { CreditAuthorizationService } from "./modules/credit/authorizations/service.js";
import { CreditCardService } from "./modules/credit/cards/service.js";
import { CreditNotificationService } from "./modules/credit/notifications/service.js";
import { CreditNotificationDelivery } from "./modules/credit/notifications/delivery.js";
import { SandboxClockService } from "./modules/credit/clock/service.js";
import { creditCyclesJob } from "./modules/credit/cycles/service.js";
import { chainJobs } from "./modules/chains/service.js";
import { sandboxClockHandlers } from "./http/credit/clock-handlers.js";
import { EmailPollerService } from "./modules/poller/service.js";
import { webhookHandlers } from "./http/platform/webhook-handlers.js";
import { pollerHandlers } from "./http/platform/poller-handlers.js";
import { inboundHandlers } from "./http/platform/inbound-handlers.js";
import { InboundWebhookService } from "./modules/inbound/service.js";
import { limitHandlers } from "./http/platform/limit-handlers.js";
import { addressHandlers } from "./http/platform/address-handlers.js";
import { bankAccountHandlers } from "./http/platform/bank-account-handlers.js";
import { payoutFileHandlers } from "./http/platform/payout-handlers.js";
import { PayoutFileService } from "./modules/payouts/service.js";
import { LimitsService } from "./modules/limits/service.js";
import { AllowlistService } from "./modules/allowlist/service.js";
import { BankAccountService } from "./modules/bank-accounts/service.js";
import { withdrawalUsage } from "./modules/withdrawals/repository.js";
import { transferUsage } from "./modules/transfers/repository.js";
import { TransferService } from "./modules/transfers/service.js";
import { transferHandlers } from "./http/platform/transfer-handlers.js";
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
  /** The wallet state calls (src/modules/wallets/states.ts). */
  walletStates: WalletStates;
  wallets: WalletService;
  withdrawals: WithdrawalService;
  /** The settlement of fiat payouts (docs/decisions/fiat.md "Fiat withdrawals"). */
  payouts: PayoutSettlement;
  mail: MailService;
  webhooks: WebhookService;
  pollers: EmailPollerService;
  /** The inbound webhook: secrets and pushed PINs (docs/decisions/withdrawals.md "PINs pushed by the provider"). */
  inbound: InboundWebhookService;
  creditProducts: CreditProductService;
  creditNotifications: CreditNotificationService;
  /** Delivery of the credit notifications; writers of `credit_event` rows call its `notifyCreditEventsWritten` after commit. */
  creditDelivery: CreditNotificationDelivery;
  sandboxClock: SandboxClockService;
  creditWallets: CreditWalletService;
  creditAuthorizations: CreditAuthorizationService;
  creditCards: CreditCardService;
  trading: TradingService;
  /** Caps of withdrawals and transfers, and the allowlist policy (docs/decisions/limits-and-allowlist.md). */
  limits: LimitsService;
  allowlist: AllowlistService;
  /** Users' bank accounts, the destinations of fiat withdrawals (docs/decisions/fiat.md "Bank accounts"). */
  bankAccounts: BankAccountService;
  /** The customers' SEPA payout files (src/modules/payouts/service.ts). */
  payoutFiles: PayoutFileService;
  /** Transfers between wallets of one customer (docs/decisions/limits-and-allowlist.md "Transfers"). */
  transfers: TransferService;
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
  try {
    orm = await initORM(databaseUrl, ENTITIES, sessionUrl);
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
      logger,
    });
    const wiring = buildServices(config, logger, orm, secrets, statements, scheduler, custody);
    limits = new RateLimits(databaseUrl, {
      ip: config.rateLimitIp,
      credential: config.rateLimitCredential,
      authFailures: config.rateLimitAuthFailures,
      codes: config.rateLimitCodes,
    }, logger, config.rateLimitSyncMs);
    const validateResponses = options.validateResponses ?? false;
    const surfaces = await buildSurfaces(config, logger, orm, wiring, limits, validateResponses);
    const metrics = new Metrics();
    registerBusinessMetrics(metrics.registry, statements, pool);
    const app = assembleExpress({ surfaces, orm, metrics, logger, validateResponses, trustProxy: config.trustProxy, metricsToken: config.metricsToken });
    const { mail, webhooks, creditDelivery, pollers } = wiring.services;

    // Background jobs: every process defines them, workers run them; the one list (src/jobs/registry.ts, docs/outbox.md "Jobs").
    await startJobs(scheduler, [
      ...mail.jobs(config.outboxIntervalS),
      ...webhooks.jobs(config.outboxIntervalS),
      ...creditDelivery.jobs(config.outboxIntervalS),
      creditCyclesJob(statements, logger, (count) => creditDelivery.notifyCreditEventsWritten(count)),
      ...pollers.jobs(),
      ...wiring.services.payouts.jobs(config.payoutIntervalS),
      ...chainJobs(config.liveChains, config.chainRpcTimeoutS, statements, wiring.services.ledger, logger, custody ? [custody.gasWallet.address, custody.hotWallet.address] : []),
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
      close: closer(config, logger, sessionUrl, { scheduler, mail, limits, orm, embedded }),
    };
  } catch (error) {
    await scheduler?.close(0).catch(() => {});
    await limits?.close().catch(() => {});
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

/** The services, and the provider and authenticator the surfaces take besides them. */
interface Wiring {
  services: AppServices;
  provider: CustodyProvider;
  authenticator: Authenticator;
}

/** Builds every service from the configuration (no I/O): the identity secrets, the hot-path statements and the job queue. */
function buildServices(config: Config, logger: Logger, orm: MikroORM, secrets: IdentitySecrets, statements: Db, scheduler: JobScheduler, custody: CustodyKeys | undefined): Wiring {
  const provider: CustodyProvider = new SandboxProvider(config.sandboxSeed, { spreadBps: config.sandboxSpreadBps, feeBps: config.sandboxFeeBps }, custody);
  const authenticator = new Authenticator(secrets.box, secrets.masterHash, statements);
  const identity = new IdentityService(secrets.box, authenticator, provider, config.sessionTtlS, statements);
  const users = new UserService(secrets.box, config.userTokenTtlS);
  const ledger = new LedgerService();
  const switches = new CurrencySwitches(statements, provider);
  const wallets = new WalletService(provider, ledger, users, statements, switches, custody && liveNetworkSet(config.liveChains));
  const mail = new MailService(statements, config.smtpUrl, config.mailFrom, logger);
  const webhooks = new WebhookService(statements, secrets.box, identity, scheduler, {
    timeoutS: config.webhookTimeoutS,
    retryBaseS: config.webhookRetryBaseS,
    allowPrivate: config.allowPrivateNetworkTargets,
  }, logger);
  const limits = new LimitsService(statements, { withdrawal: withdrawalUsage, transfer: transferUsage }, { withdrawal: config.withdrawalCaps, transfer: config.transferCaps }, { identity, users, provider });
  const walletStates = new WalletStates(statements, ledger, webhooks);
  const allowlist = new AllowlistService(statements, { provider, wallets, users, policy: limits, notifier: webhooks }, { cooldownS: config.allowlistCooldownS });
  const transfers = new TransferService(ledger, statements, wallets, limits);
  const bankAccounts = new BankAccountService(statements, secrets.box, users);
  const payoutFiles = new PayoutFileService(statements, identity, bankAccounts, provider);
  const payoutRail: PayoutRail = new SandboxRail();
  const trading = new TradingService({ ledger, wallets, users, provider, statements }, { quoteTtlS: config.quoteTtlS });
  const withdrawals = new WithdrawalService(statements, provider, ledger, users, wallets, mail, webhooks, secrets.box, {
    codeTtlS: config.withdrawalCodeTtlS,
    maxAttempts: config.withdrawalCodeMaxAttempts,
    maxTotalAttempts: config.withdrawalCodeMaxTotalAttempts,
    maxResends: config.withdrawalCodeMaxResends,
    resendIntervalS: config.withdrawalCodeResendIntervalS,
  }, { limits, destinations: allowlist }, { bankAccounts, rail: payoutRail });
  const payouts = new PayoutSettlement(statements, ledger, payoutRail, webhooks, logger);
  const pollers = new EmailPollerService(orm, secrets.box, identity, scheduler, withdrawals, {
    intervalS: config.pollerIntervalS,
    timeoutS: config.imapTimeoutS,
    allowPrivate: config.allowPrivateNetworkTargets,
  }, logger, statements);
  const inbound = new InboundWebhookService(statements, secrets.box, identity, withdrawals, { secretOverlapS: config.inboundSecretOverlapS });
  const creditProducts = new CreditProductService(statements);
  const creditDelivery = new CreditNotificationDelivery(statements, secrets.box, scheduler, {
    timeoutS: config.webhookTimeoutS,
    retryBaseS: config.webhookRetryBaseS,
    allowPrivate: config.allowPrivateNetworkTargets,
  }, logger);
  // An enlist may enable a target with events waiting: release them and start a round at once.
  const creditNotifications = new CreditNotificationService(statements, secrets.box, config.allowPrivateNetworkTargets, (customerId) => creditDelivery.resumeTenant(customerId));
  // Writers of credit_event rows start their delivery after commit.
  const creditWallets = new CreditWalletService(statements, (count) => creditDelivery.notifyCreditEventsWritten(count), logger);
  const creditAuthorizations = new CreditAuthorizationService(statements, { ttlDays: config.authorizationTtlDays }, (count) => creditDelivery.notifyCreditEventsWritten(count), logger);
  const creditCards = new CreditCardService(statements, secrets.box, { cardsPerWallet: config.cardsPerWallet, ttlDays: config.authorizationTtlDays }, (count) => creditDelivery.notifyCreditEventsWritten(count), logger);
  const sandboxClock = new SandboxClockService(statements, undefined, (count) => creditDelivery.notifyCreditEventsWritten(count), { moveBudgetMs: config.clockMoveBudgetS * 1000, logger });
  return {
    provider,
    authenticator,
    services: { identity, users, ledger, wallets, walletStates, withdrawals, payouts, mail, webhooks, pollers, inbound, creditProducts, creditNotifications, creditDelivery, sandboxClock, creditWallets, creditAuthorizations, creditCards, limits, allowlist, transfers, trading, bankAccounts, payoutFiles },
  };
}

/** Both surfaces (src/http/surface.ts), sharing the rate limits and one budget of body bytes. */
async function buildSurfaces(
  config: Config,
  logger: Logger,
  orm: MikroORM,
  { services, provider, authenticator }: Wiring,
  limits: RateLimits,
  validateResponses: boolean,
): Promise<{ platform: BuiltSurface; credit: BuiltSurface }> {
  const { identity, users, wallets, walletStates, withdrawals, mail, webhooks, pollers, creditProducts, creditNotifications, sandboxClock, creditWallets, creditAuthorizations, limits: caps, allowlist, transfers, trading } = services;
  // One budget of body bytes for both surfaces (src/http/json-body.ts).
  const bodyBudget = new BodyBudget(config.maxBodyBytesInFlight, config.maxBodyBytesPerCaller, config.bodyLimitBytes);
  // what both surfaces share: the database, who is calling, logging, validation and the request bounds
  const shared = { orm, authenticator, logger, validateResponses, limits, bodyLimitBytes: config.bodyLimitBytes, bodyBudget };
  const platform = await buildSurface<PlatformOps>({
    surface: "platform",
    definition: loadDocument("platform") as unknown as Document,
    handlers: {
      ...platformHandlers({ identity, users }),
      ...walletHandlers(wallets, walletStates, wallets.switches, provider),
      ...withdrawalHandlers(withdrawals, mail, provider),
      ...webhookHandlers(webhooks),
      ...pollerHandlers(pollers),
      ...inboundHandlers(services.inbound),
      ...limitHandlers(caps),
      ...addressHandlers(allowlist),
      ...bankAccountHandlers(services.bankAccounts),
      ...payoutFileHandlers(services.payoutFiles),
      ...transferHandlers(transfers),
      ...tradingHandlers(trading),
    },
    notImplemented: platformNotImplemented,
    access: platformAccess,
    scope: platformScope,
    ...shared,
    codeOperations: ["confirmWithdrawal", "resendWithdrawalCode"],
  });
  const credit = await buildSurface<CreditOps>({
    surface: "credit",
    definition: loadDocument("credit") as unknown as Document,
    handlers: {
      ...creditHandlers({ products: creditProducts, notifications: creditNotifications, delivery: services.creditDelivery }),
      ...sandboxClockHandlers(sandboxClock, provider),
      ...creditWalletHandlers(creditWallets),
      ...creditAuthorizationHandlers(creditAuthorizations),
      ...creditCardHandlers(services.creditCards),
    },
    notImplemented: creditNotImplemented,
    access: creditAccess,
    ...shared,
  });
  return { platform, credit };
}

/** The app's {@link App.close} over what {@link createApp} started. */
function closer(
  config: Config,
  logger: Logger,
  databaseUrl: string,
  started: { scheduler: JobScheduler; mail: MailService; limits: RateLimits; orm: MikroORM; embedded: EmbeddedDatabase | undefined },
): App["close"] {
  return async (closeOptions: { deadline?: number } = {}) => {
    const deadline = closeOptions.deadline ?? Date.now() + config.shutdownTimeoutS * 1000;
    const cut = cutStatementsAt(deadline, databaseUrl, logger);
    try {
      await started.scheduler.close(Math.max(0, deadline - Date.now()));
      await started.mail.idle();
      started.mail.close();
      await Promise.all([started.limits.close(), started.orm.close(true)]);
    } finally {
      await cut.stop();
      // Stopped whatever failed before: a PostgreSQL left behind would hold the DATA_DIR.
      await started.embedded?.stop();
    }
  };
}

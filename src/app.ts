/**
 * createApp(config) builds everything from configuration, with no globals: database (embedded or
 * `DATABASE_URL`), migrations, identity secrets, services, both surfaces and the express app.
 */
import express, { type Express } from "express";
import { pino, type Logger } from "pino";
import { pinoHttp } from "pino-http";
import type { Document } from "openapi-backend";
import type { Config } from "./config.js";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "./db/embedded.js";
import { initORM, type MikroORM } from "./db/orm.js";
import { Authenticator } from "./modules/identity/auth.js";
import { bootstrapIdentitySecrets } from "./modules/identity/bootstrap.js";
import { IdentityService } from "./modules/identity/service.js";
import { UserService } from "./modules/users/service.js";
import { SandboxProvider } from "./providers/sandbox.js";
import type { CustodyProvider } from "./providers/provider.js";
import { docsRouter, loadDocument } from "./http/docs.js";
import { errorBody } from "./http/envelope.js";
import { bodyErrors, jsonBodies, surfaceOf, traceIds } from "./http/middleware.js";
import { Metrics, opsRouter } from "./http/ops.js";
import { buildSurface } from "./http/surface.js";
import { platformAccess, platformScope } from "./http/platform/access.js";
import { platformHandlers, platformNotImplemented } from "./http/platform/handlers.js";
import { walletHandlers } from "./http/platform/wallet-handlers.js";
import { withdrawalHandlers } from "./http/platform/withdrawal-handlers.js";
import { MailService } from "./modules/mail/service.js";
import { WithdrawalService } from "./modules/withdrawals/service.js";
import { LedgerService } from "./modules/ledger/service.js";
import { WalletService } from "./modules/wallets/service.js";
import { creditAccess, creditHandlers, creditNotImplemented } from "./http/credit/wiring.js";
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
}

/** A built application. `close()` stops the ORM and, if started, the embedded database. */
export interface App {
  express: Express;
  orm: MikroORM;
  services: AppServices;
  logger: Logger;
  databaseUrl: string;
  close(): Promise<void>;
}

const printMasterKey = (key: string): void => {
  process.stdout.write(
    `\n  MASTER API KEY (shown once, only its hash is stored):\n\n    ${key}\n\n  Set MASTER_API_KEY to choose your own.\n\n`,
  );
};

/** Builds the service. @throws when the database is unreachable or a migration fails. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const logger =
    options.logger ??
    pino({
      level: config.logLevel,
      redact: { paths: ["req.headers.authorization", 'req.headers["x-api-key"]', 'req.headers["x-master-api-key"]'], censor: "[redacted]" },
    });
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres(config.dataDir);
    databaseUrl = embedded.url;
    logger.info({ port: embedded.port, dataDir: config.dataDir }, "embedded PostgreSQL started");
  }
  let orm: MikroORM | undefined;
  try {
    orm = await initORM(databaseUrl);
    const secrets = await bootstrapIdentitySecrets(orm.em.fork(), config);
    if (secrets.generatedMasterKey) (options.onGeneratedMasterKey ?? printMasterKey)(secrets.generatedMasterKey);

    const provider: CustodyProvider = new SandboxProvider(config.sandboxSeed);
    const authenticator = new Authenticator(secrets.box, secrets.masterHash);
    const identity = new IdentityService(secrets.box, authenticator, provider, config.sessionTtlS);
    const users = new UserService(secrets.box, config.userTokenTtlS);
    const ledger = new LedgerService();
    const wallets = new WalletService(provider, ledger, users);
    const mail = new MailService(orm, config.smtpUrl, config.mailFrom, logger);
    const withdrawals = new WithdrawalService(provider, ledger, users, wallets, mail, secrets.box, {
      codeTtlS: config.withdrawalCodeTtlS,
      maxAttempts: config.withdrawalCodeMaxAttempts,
      caps: config.withdrawalCaps,
    });
    const validateResponses = options.validateResponses ?? false;

    const platform = await buildSurface<PlatformOps>({
      surface: "platform",
      definition: loadDocument("platform") as unknown as Document,
      handlers: { ...platformHandlers({ identity, users }), ...walletHandlers(wallets, provider), ...withdrawalHandlers(withdrawals, mail, provider) },
      notImplemented: platformNotImplemented,
      access: platformAccess,
      scope: platformScope,
      orm,
      authenticator,
      logger,
      validateResponses,
    });
    const credit = await buildSurface<CreditOps>({
      surface: "credit",
      definition: loadDocument("credit") as unknown as Document,
      handlers: creditHandlers,
      notImplemented: creditNotImplemented,
      access: creditAccess,
      orm,
      authenticator,
      logger,
      validateResponses,
    });

    const metrics = new Metrics();
    const app = express();
    app.disable("x-powered-by");
    app.set("query parser", "simple");
    app.use(traceIds());
    app.use(
      pinoHttp({
        logger,
        genReqId: (req) => (req as express.Request).traceId,
        customProps: (req) => ({ traceId: (req as express.Request).traceId }),
        serializers: { req: (req: { method: string; url: string }) => ({ method: req.method, url: req.url }) },
      }),
    );
    app.use(metrics.middleware());
    app.use(opsRouter(orm, metrics));
    app.use(docsRouter());
    app.use(...jsonBodies(config.bodyLimitBytes));
    app.use(bodyErrors());
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
      logger.error({ err: error, traceId: req.traceId }, "unhandled error");
      if (res.headersSent) return;
      res.status(500).json(errorBody(surfaceOf(req.path), req.traceId, [{ code: "INTERNAL_SERVER_ERROR", message: "An unexpected error occurred." }]));
    });

    // Email delivery retries (SMTP only): a round every 30 s on worker processes. Agenda takes the
    // background jobs over with the poller and webhook issues.
    const mailRounds = mail.smtpEnabled && config.role !== "api" ? setInterval(() => mail.kick(), 30_000) : undefined;
    mailRounds?.unref();

    const ormRef = orm;
    return {
      express: app,
      orm,
      services: { identity, users, ledger, wallets, withdrawals, mail },
      logger,
      databaseUrl,
      async close() {
        if (mailRounds) clearInterval(mailRounds);
        await mail.idle();
        mail.close();
        await ormRef.close(true);
        await embedded?.stop();
      },
    };
  } catch (error) {
    await orm?.close(true).catch(() => {});
    await embedded?.stop().catch(() => {});
    throw error;
  }
}

/**
 * The composition root's wiring (docs/architecture.md "Layers"): every service built from the
 * configuration (`buildServices`, no I/O) and both HTTP surfaces over them (`buildSurfaces`).
 * `src/app.ts` starts the database, calls these and assembles the express app and the jobs.
 */
import type { Logger } from "pino";
import type { Document } from "openapi-backend";
import type { Config } from "./config.js";
import { type MikroORM } from "./db/orm.js";
import { Db } from "./db/sql.js";
import { Authenticator } from "./modules/identity/auth.js";
import { type IdentitySecrets } from "./modules/identity/bootstrap.js";
import { IdentityService } from "./modules/identity/service.js";
import { UserService } from "./modules/users/service.js";
import { SandboxProvider } from "./providers/sandbox.js";
import type { CustodyProvider } from "./providers/provider.js";
import { type CustodyKeys } from "./providers/evm/keys.js";
import { liveNetworkSet } from "./domain/live-chains.js";
import { loadDocument } from "./http/docs.js";
import { BodyBudget } from "./http/body-budget.js";
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
import { LiveChains } from "./modules/chains/service.js";
import { SendQueue } from "./modules/chains/send-queue.js";
import { ChainSendFailures } from "./modules/withdrawals/reversal.js";
import { transferHandlers } from "./http/platform/transfer-handlers.js";
import { chainHandlers } from "./http/platform/chain-handlers.js";
import type { operations as PlatformOps } from "../generated/types/platform.js";
import type { operations as CreditOps } from "../generated/types/credit.js";


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
  /** The live EVM networks: their nodes and background work (docs/decisions/live-chains.md). */
  chains: LiveChains;
}

/** The services, and the provider and authenticator the surfaces take besides them. */
export interface Wiring {
  services: AppServices;
  provider: CustodyProvider;
  authenticator: Authenticator;
}

/** Builds every service from the configuration (no I/O): the identity secrets, the hot-path statements and the job queue. */
export function buildServices(config: Config, logger: Logger, orm: MikroORM, secrets: IdentitySecrets, statements: Db, scheduler: JobScheduler, custody: CustodyKeys | undefined): Wiring {
  const provider: CustodyProvider = new SandboxProvider(config.sandboxSeed, { spreadBps: config.sandboxSpreadBps, feeBps: config.sandboxFeeBps }, custody);
  const authenticator = new Authenticator(secrets.box, secrets.masterHash, statements);
  const identity = new IdentityService(secrets.box, authenticator, provider, config.sessionTtlS, statements);
  const users = new UserService(secrets.box, config.userTokenTtlS, statements, authenticator);
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
  const chains = new LiveChains(config.liveChains, config.chainRpcTimeoutS, { db: statements, ledger, custody, logger, notifier: webhooks, outcomes: new ChainSendFailures(ledger, webhooks) });
  const withdrawals = new WithdrawalService(statements, provider, ledger, users, wallets, mail, webhooks, secrets.box, {
    codeTtlS: config.withdrawalCodeTtlS,
    maxAttempts: config.withdrawalCodeMaxAttempts,
    maxTotalAttempts: config.withdrawalCodeMaxTotalAttempts,
    maxResends: config.withdrawalCodeMaxResends,
    resendIntervalS: config.withdrawalCodeResendIntervalS,
  }, { limits, destinations: allowlist }, { bankAccounts, rail: payoutRail }, custody && new SendQueue(chains));
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
    services: { chains, identity, users, ledger, wallets, walletStates, withdrawals, payouts, mail, webhooks, pollers, inbound, creditProducts, creditNotifications, creditDelivery, sandboxClock, creditWallets, creditAuthorizations, creditCards, limits, allowlist, transfers, trading, bankAccounts, payoutFiles },
  };
}

/** Both surfaces (src/http/surface.ts), sharing the rate limits and one budget of body bytes. */
export async function buildSurfaces(
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
      ...chainHandlers(services.chains),
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


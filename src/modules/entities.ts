/**
 * Every ORM entity of the service, assembled from the modules' own lists and the sandbox
 * provider's. src/app.ts (and the scripts and tests that open the database themselves) hand it to
 * src/db/orm.ts `initORM`: the database layer imports no module (eslint.config.js).
 */
import { IDENTITY_ENTITIES } from "./identity/entities.js";
import { USER_ENTITIES } from "./users/entities.js";
import { LEDGER_ENTITIES } from "./ledger/entities.js";
import { WALLET_ENTITIES } from "./wallets/entities.js";
import { POLLER_ENTITIES } from "./poller/entities.js";
import { SANDBOX_ENTITIES } from "../providers/sandbox-entities.js";
import { OutboxEmail } from "./mail/entities.js";
import { Withdrawal } from "./withdrawals/entities.js";
import { IdempotencyKey } from "./idempotency/entities.js";
import { TRANSFER_ENTITIES } from "./transfers/entities.js";
import { CustomerLimits } from "./limits/entities.js";
import { AllowlistAddress } from "./allowlist/entities.js";
import { BankAccount } from "./bank-accounts/entities.js";
import { Webhook, WebhookDelivery } from "./webhooks/entities.js";
import { DeliveryAttempt } from "./outbox/entities.js";
import { CreditProduct } from "./credit/products/entities.js";
import { CreditNotificationTarget } from "./credit/notifications/entities.js";
import { CreditClock } from "./credit/clock/entities.js";
import { CreditCharge, CreditEvent, CreditPayment, CreditStatement, CreditWallet } from "./credit/accounts/entities.js";
import { CreditAuthorization, CreditRefund } from "./credit/authorizations/entities.js";
import { CreditCard } from "./credit/cards/entities.js";
import { TRADING_ENTITIES } from "./trading/entities.js";
import { CurrencySwitch } from "./currencies/entities.js";
import { INBOUND_ENTITIES } from "./inbound/entities.js";
import { CHAIN_ENTITIES } from "./chains/entities.js";
import { ChainGasBalance } from "./chains/overview-entities.js";

/** The entities of every module and of the sandbox provider, in the order they were listed before. */
export const ENTITIES = [
  ...IDENTITY_ENTITIES, ...USER_ENTITIES,
  ...LEDGER_ENTITIES,
  ...WALLET_ENTITIES,
  ...SANDBOX_ENTITIES,
  Withdrawal, OutboxEmail, IdempotencyKey,
  Webhook, WebhookDelivery, DeliveryAttempt, ...POLLER_ENTITIES,
  CreditProduct, CreditNotificationTarget,
  CreditWallet, CreditStatement, CreditEvent, CreditCharge, CreditPayment, CreditClock,
  ...TRANSFER_ENTITIES,
  CustomerLimits, AllowlistAddress, BankAccount,
  CreditAuthorization,
  CreditCard,
  CreditRefund,
  ...TRADING_ENTITIES,
  CurrencySwitch,
  ...INBOUND_ENTITIES,
  ...CHAIN_ENTITIES, ChainGasBalance,
];

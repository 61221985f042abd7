/**
 * The credit notifications as a channel of the outbox (docs/outbox.md "Channels";
 * docs/decisions/notifications.md "Credit notifications"; spec/credit/notifications.tsp
 * `CreditNotification`): every `credit_event` row is a notification, POSTed to the tenant's
 * `creditNotificationsURL` with the Standard Webhooks signature of the tenant's `whsec_` secret
 * (`webhook-id` = the event's id), the notification retry policy and a lease of
 * 3 × `WEBHOOK_TIMEOUT_S` + 5 s. A wallet is a stream ordered by `sequence`.
 *
 * A tenant without an enabled target keeps its events pending: a claimed head is parked until
 * NotificationsEnlist registers (or enables again) a target; HTTP 410 disables the target (only the
 * registration it was sent to, told by its sealed secret) and parks the event. A deleted (inactive)
 * tenant's events become `disabled` when their turn comes.
 */
import type { Logger } from "pino";
import type { Sql, Tx } from "../../../db/sql.js";
import type { components } from "../../../../generated/types/credit.js";
import { DomainError } from "../../../domain/errors.js";
import { deliveryLeaseMs, notificationRetryPolicy } from "../../../domain/outbox.js";
import { checkTargetUrl } from "../../../domain/webhooks.js";
import type { SecretBox } from "../../identity/secrets.js";
import type { AttemptResult, Claimed, OutboxChannel, OutboxTable, Prepared } from "../../outbox/channel.js";
import { attemptResult, postSigned, type NotificationSettings } from "../../outbox/http-sender.js";
import { CLAIMABLE, creditMessage, disableTarget } from "./repository.js";
import { creditSecretContext } from "./service.js";

/** Schema `CreditNotification`: the JSON body POSTed to the tenant's `creditNotificationsURL`. */
export type CreditNotificationBody = components["schemas"]["CreditNotification"];
/** Schema `CreditWalletDetails` (`walletDetails_after`). */
type WalletDetailsBody = components["schemas"]["CreditWalletDetails"];

/** Why a target is disabled after a 410 (`credit_notification_target.disabled_reason`). */
const GONE_REASON = "the receiver answered HTTP 410 Gone";

/** The columns of a `credit_event` row the body is built from. */
export interface CreditEventRow {
  walletId: string;
  /** The card of an authorization's event (docs/decisions/cards.md); null or absent otherwise. */
  cardId?: string | null;
  type: string;
  amount: number;
  direction: "debit" | "credit";
  affectsBalance: boolean;
  walletDetailsAfter: Record<string, unknown>;
  sequence: number;
  /** Only on `Reembolso`: the cents of the refund above the debt (docs/decisions/cards.md "Refunds"); null or absent otherwise. */
  unappliedAmount?: number | null;
}

/**
 * The `CreditNotification` body of an event (spec/credit/notifications.tsp), keys in the spec's
 * order: `walletId`, `cardId` (only on the events of a card's authorization), `type`, `amount` (cents), `direction`, `affectsBalance`, `walletDetails_after`
 * (the fields of `CreditWalletDetails` as stored with the event, in the spec's order, unknown keys
 * dropped), `sequence` and, only on `Reembolso`, `unappliedAmount` (cents). The same row always
 * gives the same text, so every retry carries the same body.
 */
export function creditNotificationBody(row: CreditEventRow): CreditNotificationBody {
  const d = row.walletDetailsAfter as Partial<WalletDetailsBody>;
  const interest = (d.interestSpecs ?? {}) as Partial<WalletDetailsBody["interestSpecs"]>;
  const minimum = (d.minimumPaymentSpecs ?? {}) as Partial<WalletDetailsBody["minimumPaymentSpecs"]>;
  return {
    walletId: row.walletId,
    ...(row.cardId ? { cardId: row.cardId } : {}),
    type: row.type as CreditNotificationBody["type"],
    amount: row.amount,
    direction: row.direction,
    affectsBalance: row.affectsBalance,
    walletDetails_after: {
      principal_outstanding: d.principal_outstanding as number,
      interest_accrued: d.interest_accrued as number,
      totalDebt: d.totalDebt as number,
      limit: d.limit as number,
      amountOverdraft: d.amountOverdraft as number,
      // events written before authorizations existed carry no `amountHeld`: no hold was open then
      amountHeld: (d.amountHeld as number | undefined) ?? 0,
      interestSpecs: {
        interestRateNominal: interest.interestRateNominal as number,
        interestRateMoroso: interest.interestRateMoroso as number,
        fixedInterestNominal: interest.fixedInterestNominal as number,
        fixedInterestMoroso: interest.fixedInterestMoroso as number,
      },
      minimumPaymentSpecs: {
        minimumPaymentRate: minimum.minimumPaymentRate as number,
        fixedMinimumPayment: minimum.fixedMinimumPayment as number,
      },
    },
    sequence: row.sequence,
    ...(row.unappliedAmount === null || row.unappliedAmount === undefined ? {} : { unappliedAmount: row.unappliedAmount }),
  };
}

/** A claimed event loaded for one attempt: its tenant's stored target and the body. */
export interface CreditMessage {
  eventId: string;
  customerId: string;
  target: { url: string; secret_sealed: string };
  body: string;
}

/** The credit notifications' outbox table, `credit_event` (events are written without `next_attempt_at`: due at once). */
export const CREDIT_EVENT_TABLE: OutboxTable = {
  name: "credit_event",
  status: "delivery_status",
  attempts: "attempt_count",
  statuses: { succeeded: "succeeded", failed: "failed", disabled: "disabled" },
  countsSuccess: true,
  clearsNextAttempt: true,
  nullIsDue: true,
};

/** The `credit` channel of the outbox (see the module docs). */
export function creditChannel(box: SecretBox, settings: NotificationSettings, logger: Logger): OutboxChannel<CreditMessage> {
  return {
    name: "credit",
    table: CREDIT_EVENT_TABLE,
    policy: {
      retry: notificationRetryPolicy(settings.retryBaseS * 1000),
      leaseMs: deliveryLeaseMs(settings.timeoutS * 1000),
      onGone: "park",
      stopRoundOnFailure: false,
    },
    stream: { key: "wallet_id", order: "sequence" },
    claimable: CLAIMABLE,
    returning: ["customer_id", "sequence"],
    async prepare(sql: Sql, claimed: Claimed): Promise<Prepared<CreditMessage>> {
      const customerId = String(claimed.row.customer_id);
      // the tenant's state, its target and the event, in one statement
      const { tenantActive, target, event } = await creditMessage(sql, claimed.id);
      if (!tenantActive) return { skip: "disable" };
      // removed or disabled since the claim: the event waits, unattempted
      if (!target || target.disabled_at !== null) return { skip: "park" };
      return { message: { eventId: claimed.id, customerId, target: { url: target.url, secret_sealed: target.secret_sealed }, body: JSON.stringify(creditNotificationBody(event)) } };
    },
    send: (message) => send(box, settings, logger, message),
    async disableTarget(tx: Tx, _claimed: Claimed, message: CreditMessage) {
      await disableTarget(tx, message.customerId, GONE_REASON, message.target.secret_sealed);
    },
  };
}

/**
 * Signs and POSTs one event's body to the tenant's stored target. Never throws: a stored URL that
 * breaks the target rule (stored before it) is an `unsendable` result naming the rule
 * (docs/security.md "Outgoing notifications and their targets"); a sealed secret that does not open
 * with the current `SECRETS_KEY` is a failed attempt saying so, retried on the schedule.
 */
async function send(box: SecretBox, settings: NotificationSettings, logger: Logger, message: CreditMessage): Promise<AttemptResult> {
  let url: URL;
  try {
    url = checkTargetUrl(message.target.url, "creditNotificationsURL");
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { httpStatus: null, error: `the stored target cannot be sent to (${error.message.replace(/\.$/, "")}); call NotificationsEnlist again`, durationMs: 0, unsendable: true };
  }
  let secret: string;
  try {
    secret = box.open(message.target.secret_sealed, creditSecretContext(message.customerId));
  } catch (error) {
    logger.error({ err: error, eventId: message.eventId }, "credit notification signing secret does not open");
    return { httpStatus: null, error: "the target's sealed signing secret cannot be opened with the current SECRETS_KEY", durationMs: 0 };
  }
  return attemptResult(await postSigned(url, {}, [secret], message.eventId, message.body, settings.timeoutS * 1000, settings.allowPrivate));
}

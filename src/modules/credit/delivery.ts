/**
 * Delivery of the credit notifications (issue 9 "Notifications"; decisions.md §5 and §6, last
 * paragraph; spec/credit/notifications.tsp `CreditNotification` and its delivery rules): every
 * `credit_event` row is a notification of the outbox, written in the transaction of the change, and
 * goes to the tenant's `creditNotificationsURL` like the platform webhooks go out
 * (src/modules/webhooks/): Standard Webhooks signature ({@link postSigned}: `webhook-id` = the
 * event's `id`, the same on every attempt; `webhook-timestamp`; `webhook-signature` with the
 * target's `whsec_` secret), the webhook retry schedule ({@link retryDelayMs}, {@link
 * MAX_DELIVERY_ATTEMPTS}: about three days), the same HTTP client (10 s timeout by default,
 * redirects not followed, at most 64 KiB of the answer read) and the SSRF guard at connect time.
 *
 * Order: a wallet's events go out in `sequence` order. Only a wallet's lowest pending event (its
 * head) can be claimed, so event n + 1 waits until event n has succeeded, failed for good (all
 * attempts used) or been disabled; different wallets go in parallel ({@link DeliverOptions.lanes}).
 *
 * At least once: a head is claimed in a short statement (`FOR UPDATE SKIP LOCKED`, then a lease on
 * `next_attempt_at`, {@link deliveryLeaseMs}), sent with no database connection held, then the
 * attempt and the new state are recorded in one transaction. A round that dies mid-send leaves the
 * lease to expire; a later round sends the event again with the same `webhook-id`.
 *
 * Choices (the spec is silent): a tenant without a target, or whose target is disabled by an HTTP
 * 410, keeps its events `pending`: they wait, unattempted, and go out in order once
 * NotificationsEnlist registers (or enables again) a target, to the new URL with the new secret
 * (the enlist doc: "notifications not yet delivered go to the new URL signed with the new secret").
 * The event that got the 410 keeps that attempt and is the first to go again. A deleted
 * (inactive) tenant's events become `disabled` when their turn comes.
 *
 * Cost: a claim walks the partial index of pending events by `next_attempt_at` (due retries,
 * then never-attempted events) and stops at the first claimable head, so it does not grow with
 * the backlog. Waiting events are parked out of that walk (`next_attempt_at` = {@link PARKED_AT}):
 * at a 410, and by a sweep at most once per `OUTBOX_INTERVAL_S` per process; NotificationsEnlist
 * ({@link CreditNotificationDelivery.resumeTenant}) and the same sweep release them.
 */
import { randomUUID } from "node:crypto";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type { Logger } from "pino";
import type { components } from "../../../generated/types/credit.js";
import { DomainError } from "../../domain/errors.js";
import { MAX_DELIVERY_ATTEMPTS, checkTargetUrl, deliveryLeaseMs, judgeAttempt, retryDelayMs } from "../../domain/webhooks.js";
import type { JobScheduler } from "../../jobs/scheduler.js";
import type { SecretBox } from "../identity/secrets.js";
import { postSigned, type SendResult } from "../webhooks/sender.js";
import type { WebhookSettings } from "../webhooks/service.js";
import { creditSecretContext } from "./notifications.js";
import { CreditEvent, CreditEventAttempt } from "./wallet-entities.js";

/** Schema `CreditNotification`: the JSON body POSTed to the tenant's `creditNotificationsURL`. */
export type CreditNotificationBody = components["schemas"]["CreditNotification"];
/** Schema `CreditWalletDetails` (`walletDetails_after`). */
type WalletDetailsBody = components["schemas"]["CreditWalletDetails"];

/** Name of the delivery job: a round over the due credit notifications of every tenant. */
export const CREDIT_DELIVERY_JOB = "credit-notification-delivery";

/**
 * `next_attempt_at` of a pending event that waits for its tenant's target (none, or disabled by a
 * 410): a far-future instant, so claims never walk over it; NotificationsEnlist sets it back to null.
 */
export const PARKED_AT = new Date("9999-01-01T00:00:00Z");

/** Why a target is disabled after a 410 (`credit_notification_target.disabled_reason`). */
const GONE_REASON = "the receiver answered HTTP 410 Gone";

/** Options of a delivery round. */
export interface DeliverOptions {
  /** Wallets sent to at the same time (each lane claims, sends and records one event at a time). Default 8. */
  lanes?: number;
  /** Attempts after which the round ends (the next round goes on). Default 500. */
  limit?: number;
}

/** A claimed event: enough to send it. */
interface Claimed {
  id: string;
  walletId: string;
  customerId: string;
  sequence: number;
  attemptCount: number;
}

/** The columns of a `credit_event` row the body is built from. */
export interface CreditEventRow {
  walletId: string;
  type: string;
  amount: number;
  direction: "debit" | "credit";
  affectsBalance: boolean;
  walletDetailsAfter: Record<string, unknown>;
  sequence: number;
}

/**
 * Starts a credit notification delivery round on a worker at once (the after-commit trigger, like
 * the webhooks' `kick`). Writers of `credit_event` rows (wallet operations, the cycle batches, the
 * sandbox clock) call it after their transaction has committed; calling it before the commit may
 * run a round that does not see the events yet, which the recurring round (every
 * `OUTBOX_INTERVAL_S`) then catches. Never throws; a lost start is logged by the scheduler.
 * @param scheduler the service's job scheduler (`App.scheduler`).
 * @param written how many events the transaction wrote; 0 starts nothing.
 */
export function notifyCreditEventsWritten(scheduler: Pick<JobScheduler, "kick">, written = 1): void {
  if (written > 0) scheduler.kick(CREDIT_DELIVERY_JOB);
}

/**
 * The `CreditNotification` body of an event (spec/credit/notifications.tsp), keys in the spec's
 * order: `walletId`, `type`, `amount` (cents), `direction`, `affectsBalance`, `walletDetails_after`
 * (the fields of `CreditWalletDetails` as stored with the event, in the spec's order, unknown keys
 * dropped) and `sequence`. The same row always gives the same text, so every retry carries the
 * same body.
 */
export function creditNotificationBody(row: CreditEventRow): CreditNotificationBody {
  const d = row.walletDetailsAfter as Partial<WalletDetailsBody>;
  const interest = (d.interestSpecs ?? {}) as Partial<WalletDetailsBody["interestSpecs"]>;
  const minimum = (d.minimumPaymentSpecs ?? {}) as Partial<WalletDetailsBody["minimumPaymentSpecs"]>;
  return {
    walletId: row.walletId,
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
  };
}

/** The signed, ordered, retried delivery of the credit notifications (see the module docs). */
export class CreditNotificationDelivery {
  /**
   * @param settings the platform webhooks' settings: `WEBHOOK_TIMEOUT_S`, `WEBHOOK_RETRY_BASE_S`,
   *   `ALLOW_PRIVATE_NETWORK_TARGETS`.
   */
  constructor(
    private readonly orm: MikroORM,
    private readonly box: SecretBox,
    private readonly scheduler: JobScheduler,
    private readonly settings: WebhookSettings,
    private readonly logger: Logger,
  ) {}

  /** Milliseconds between two sweeps of waiting events in this process (`OUTBOX_INTERVAL_S`, set by {@link scheduleRecurring}). */
  private sweepEveryMs = 10_000;
  /** When this process last swept (epoch ms); 0: never. */
  private lastSweepAt = 0;

  /** Defines the delivery job `credit-notification-delivery` (every process). */
  defineJobs(): void {
    this.scheduler.define(CREDIT_DELIVERY_JOB, async () => {
      await this.deliverDue();
    }, { concurrency: 2 });
  }

  /** The recurring delivery round (retries, events whose start was lost, what a crash left behind), every `intervalS` seconds (`OUTBOX_INTERVAL_S`). */
  async scheduleRecurring(intervalS: number): Promise<void> {
    this.sweepEveryMs = intervalS * 1000;
    await this.scheduler.every(CREDIT_DELIVERY_JOB, intervalS);
  }

  /**
   * After NotificationsEnlist of tenant `customerId` (its target registered, or enabled again):
   * releases the tenant's parked events (they are due at once, in `sequence` order per wallet) and
   * starts a delivery round. Never throws: a failure is logged, and the next sweep releases them.
   */
  async resumeTenant(customerId: string): Promise<void> {
    try {
      await this.orm.em.fork().execute(
        `update credit_event set next_attempt_at = null where delivery_status = 'pending' and next_attempt_at = ? and customer_id = ?`,
        [PARKED_AT, customerId],
      );
    } catch (error) {
      this.logger.warn({ err: error, customerId }, "could not release the waiting credit notifications (the next sweep will)");
    }
    this.notifyCreditEventsWritten();
  }

  /**
   * Parks the due pending events of tenants without an enabled target and releases the parked
   * events of tenants that have one again (also healing a release that raced a park). Two
   * statements over the pending events; run at most once per `OUTBOX_INTERVAL_S` per process.
   */
  async sweepWaiting(): Promise<void> {
    const em = this.orm.em.fork();
    await em.execute(
      `update credit_event e set next_attempt_at = null
        where e.delivery_status = 'pending' and e.next_attempt_at = ?
          and exists (select 1 from credit_notification_target t where t.customer_id = e.customer_id and t.disabled_at is null)`,
      [PARKED_AT],
    );
    await em.execute(
      `update credit_event e set next_attempt_at = ?
        where e.delivery_status = 'pending' and (e.next_attempt_at is null or e.next_attempt_at <= now())
          and not exists (select 1 from credit_notification_target t where t.customer_id = e.customer_id and t.disabled_at is null)`,
      [PARKED_AT],
    );
  }

  /** {@link notifyCreditEventsWritten} on this service's scheduler. */
  notifyCreditEventsWritten(written = 1): void {
    notifyCreditEventsWritten(this.scheduler, written);
  }

  /**
   * A delivery round: `lanes` loops, each claiming a due wallet head (see the module docs), sending
   * it and recording the outcome, until none is due or `limit` attempts were made. Safe to run on
   * any number of workers at once.
   * @returns how many events were claimed (attempted, or found without an enabled target or tenant).
   */
  async deliverDue(options: DeliverOptions = {}): Promise<number> {
    const lanes = options.lanes ?? 8;
    const limit = options.limit ?? 500;
    if (Date.now() - this.lastSweepAt >= this.sweepEveryMs) {
      this.lastSweepAt = Date.now();
      await this.sweepWaiting();
    }
    let taken = 0;
    const lane = async (): Promise<void> => {
      while (taken < limit) {
        const claimed = await this.claimDue();
        if (!claimed) return;
        taken++;
        await this.attempt(claimed);
      }
    };
    await Promise.all(Array.from({ length: lanes }, lane));
    return taken;
  }

  /**
   * Claims a due wallet head: the wallet's lowest pending event, due, of a tenant with an enabled
   * target; locked with `FOR UPDATE SKIP LOCKED` (concurrent claims take other wallets) and leased
   * by moving `next_attempt_at` {@link deliveryLeaseMs} ahead, in one short statement. Due retries
   * go first, oldest first (at most one per wallet, so they cannot crowd new events out for
   * long), then never-attempted events; each is a bounded walk of `credit_event_pending_due_index`
   * (`next_attempt_at <= now()`, then `next_attempt_at is null`), so an empty claim costs little
   * however many events wait. Exposed for the crash tests.
   * @returns the claimed event, or undefined when none is due.
   */
  async claimDue(): Promise<Claimed | undefined> {
    return (await this.claimWhere("e.next_attempt_at <= now()")) ?? (await this.claimWhere("e.next_attempt_at is null"));
  }

  /** {@link claimDue} among the pending events that satisfy `due` (a fixed SQL condition on `e`). */
  private async claimWhere(due: "e.next_attempt_at <= now()" | "e.next_attempt_at is null"): Promise<Claimed | undefined> {
    const rows = await this.orm.em.fork().execute<{ id: string; wallet_id: string; customer_id: string; sequence: string | number; attempt_count: number }[]>(
      `update credit_event set next_attempt_at = now() + (? * interval '1 millisecond')
        where id = (
          select e.id from credit_event e
           where e.delivery_status = 'pending' and ${due}
             and e.sequence = (select min(h.sequence) from credit_event h where h.wallet_id = e.wallet_id and h.delivery_status = 'pending')
             and exists (select 1 from credit_notification_target t where t.customer_id = e.customer_id and t.disabled_at is null)
           order by e.next_attempt_at asc nulls first
           limit 1
           for update of e skip locked)
        returning id, wallet_id, customer_id, sequence, attempt_count`,
      [deliveryLeaseMs(this.settings.timeoutS * 1000)],
    );
    const row = rows[0];
    return row
      ? { id: row.id, walletId: row.wallet_id, customerId: row.customer_id, sequence: Number(row.sequence), attemptCount: row.attempt_count }
      : undefined;
  }

  /**
   * One attempt of a claimed event: builds its body, signs it with the tenant's current secret,
   * POSTs it (no connection held), then records the attempt and the event's new state in one
   * transaction: 2xx `succeeded`; 410 disables the target (only the registration it was sent to, told by
   * its sealed secret: a NotificationsEnlist meanwhile stands) and parks the event (pending, {@link PARKED_AT}) until a target is
   * enabled again; a request that cannot be built (a stored URL breaking the target rule)
   * `failed` at once; anything else the next attempt after {@link retryDelayMs}, or `failed` after
   * {@link MAX_DELIVERY_ATTEMPTS}. An inactive tenant makes the event `disabled`; a target removed
   * or disabled since the claim parks it unattempted.
   */
  private async attempt(claimed: Claimed): Promise<void> {
    const em = this.orm.em.fork();
    const [customer] = await em.execute<{ is_active: boolean }[]>(`select is_active from customer where customer_id = ?`, [claimed.customerId]);
    if (!customer?.is_active) {
      await em.nativeUpdate(CreditEvent, { id: claimed.id, deliveryStatus: "pending" }, { deliveryStatus: "disabled", nextAttemptAt: null });
      return;
    }
    const [target] = await em.execute<{ url: string; secret_sealed: string; disabled_at: Date | null }[]>(
      `select url, secret_sealed, disabled_at from credit_notification_target where customer_id = ?`,
      [claimed.customerId],
    );
    if (!target || target.disabled_at !== null) {
      await em.nativeUpdate(CreditEvent, { id: claimed.id, deliveryStatus: "pending" }, { nextAttemptAt: PARKED_AT });
      return;
    }
    const attemptedAt = new Date();
    const event = await em.findOneOrFail(CreditEvent, { id: claimed.id });
    const result = await this.send(claimed, target, JSON.stringify(creditNotificationBody(event)));
    // A request that cannot be built from the stored URL gives the event up at once: retrying cannot help.
    const verdict = result.unsendable ? "unsendable" : judgeAttempt(result.status);
    const attempts = claimed.attemptCount + 1;
    const error = verdict === "succeeded" ? null : result.status !== null ? `HTTP ${result.status}` : result.error;
    await em.transactional(async (tx: EntityManager) => {
      tx.create(CreditEventAttempt, { id: randomUUID(), eventId: claimed.id, attemptedAt, httpStatus: result.status, durationMs: result.durationMs, error });
      const pending = { id: claimed.id, deliveryStatus: "pending" as const };
      if (verdict === "succeeded") {
        await tx.nativeUpdate(CreditEvent, pending, { deliveryStatus: "succeeded", attemptCount: attempts, nextAttemptAt: null });
      } else if (verdict === "disable") {
        await tx.execute(
          `update credit_notification_target set disabled_at = now(), disabled_reason = ?, updated_at = now()
            where customer_id = ? and disabled_at is null and secret_sealed = ?`,
          [GONE_REASON, claimed.customerId, target.secret_sealed],
        );
        await tx.nativeUpdate(CreditEvent, pending, { attemptCount: attempts, nextAttemptAt: PARKED_AT });
      } else if (verdict === "unsendable" || attempts >= MAX_DELIVERY_ATTEMPTS) {
        await tx.nativeUpdate(CreditEvent, pending, { deliveryStatus: "failed", attemptCount: attempts, nextAttemptAt: null });
      } else {
        const wait = retryDelayMs(attempts, this.settings.retryBaseS * 1000, Math.random());
        await tx.nativeUpdate(CreditEvent, pending, { attemptCount: attempts, nextAttemptAt: new Date(Date.now() + wait) });
      }
    });
    if (verdict !== "succeeded") {
      this.logger.warn({ eventId: claimed.id, walletId: claimed.walletId, sequence: claimed.sequence, attempts, status: result.status, error }, "credit notification attempt failed");
    }
  }

  /**
   * Signs and POSTs one event's body to the tenant's stored target. Never throws: a stored URL
   * that breaks the target rule (stored before it) is an `unsendable` result naming the rule
   * (docs/security.md "Outgoing notifications and their targets"); a sealed secret that does not
   * open with the current `SECRETS_KEY` is a failed attempt saying so, retried on the schedule.
   */
  private async send(claimed: Claimed, target: { url: string; secret_sealed: string }, body: string): Promise<SendResult> {
    let url: URL;
    try {
      url = checkTargetUrl(target.url, "creditNotificationsURL");
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return { status: null, body: "", error: `the stored target cannot be sent to (${error.message.replace(/\.$/, "")}); call NotificationsEnlist again`, durationMs: 0, unsendable: true };
    }
    let secret: string;
    try {
      secret = this.box.open(target.secret_sealed, creditSecretContext(claimed.customerId));
    } catch (error) {
      this.logger.error({ err: error, eventId: claimed.id }, "credit notification signing secret does not open");
      return { status: null, body: "", error: "the target's sealed signing secret cannot be opened with the current SECRETS_KEY", durationMs: 0 };
    }
    return postSigned(url, {}, [secret], claimed.id, body, this.settings.timeoutS * 1000, this.settings.allowPrivate);
  }
}

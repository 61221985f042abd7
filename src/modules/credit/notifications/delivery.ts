/**
 * Delivery of the credit notifications (docs/decisions/notifications.md "Credit notifications";
 * spec/credit/notifications.tsp and its delivery rules): the outbox's `credit` channel
 * (./channel.ts; docs/outbox.md) run by the job `credit-notification-delivery`, after every commit
 * that wrote events ({@link notifyCreditEventsWritten}) and every `OUTBOX_INTERVAL_S`.
 *
 * Order: a wallet's events go out in `sequence` order. Only a wallet's lowest pending event (its
 * head) is due; an event written behind a pending one waits (`next_attempt_at` = `WAITING_AT`, set
 * by the insert trigger of `credit_event`) until the event before it has succeeded, failed for good
 * (all attempts used) or been disabled; different wallets go in parallel ({@link DeliverOptions.lanes}).
 *
 * At least once: a head is claimed in a short statement (`FOR UPDATE SKIP LOCKED`, then a lease on
 * `next_attempt_at`), sent with no database connection held, then the attempt and the new state
 * are recorded in one transaction. A round that dies mid-send leaves the lease to expire; a later
 * round sends the event again with the same `webhook-id`.
 *
 * A tenant without a target, or whose target is disabled by an HTTP 410, keeps its events
 * `pending`: its heads are parked (`PARKED_AT`) and go out in order once NotificationsEnlist
 * registers (or enables again) a target, to the new URL with the new secret. Parking happens at a
 * 410, when a claimed head finds no target, and by a sweep at most once per `OUTBOX_INTERVAL_S` per
 * process; NotificationsEnlist ({@link CreditNotificationDelivery.resumeTenant}) and the same sweep
 * release them.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Logger } from "pino";
import type { Db } from "../../../db/sql.js";
import { PARKED_AT } from "../../../domain/outbox.js";
import type { JobQueue, JobSpec } from "../../../jobs/port.js";
import type { SecretBox } from "../../identity/secrets.js";
import type { OutboxChannel } from "../../outbox/channel.js";
import type { NotificationSettings } from "../../outbox/http-sender.js";
import { Outbox } from "../../outbox/outbox.js";
import { creditChannel, type CreditMessage } from "./channel.js";
import { listCreditDeliveries, recoverCreditNotifications, type CreditDeliveryListView } from "./log.js";
import { releaseTenant, sweepParked } from "./repository.js";

export { creditNotificationBody, type CreditEventRow, type CreditNotificationBody } from "./channel.js";
export { PARKED_AT, WAITING_AT } from "../../../domain/outbox.js";

/** Name of the delivery job: a round over the due credit notifications of every tenant. */
export const CREDIT_DELIVERY_JOB = "credit-notification-delivery";

/** Options of a delivery round. */
export interface DeliverOptions {
  /** Wallets sent to at the same time (each lane claims, sends and records one event at a time). Default 8. */
  lanes?: number;
  /** Claims after which the round ends (the next round goes on). Default 500. */
  limit?: number;
}

/** A claimed event: enough to send it. */
export interface ClaimedEvent {
  id: string;
  walletId: string;
  customerId: string;
  sequence: number;
  attemptCount: number;
}

/**
 * Starts a credit notification delivery round on a worker at once (the after-commit trigger, like
 * the webhooks' `kick`). Writers of `credit_event` rows (wallet operations, the cycle batches, the
 * sandbox clock) call it after their transaction has committed; calling it before the commit may
 * run a round that does not see the events yet, which the recurring round (every
 * `OUTBOX_INTERVAL_S`) then catches. Never throws; a lost start is logged by the queue.
 * @param queue the service's job queue (`App.scheduler`).
 * @param written how many events the transaction wrote; 0 starts nothing.
 */
export function notifyCreditEventsWritten(queue: Pick<JobQueue, "kick">, written = 1): void {
  if (written > 0) queue.kick(CREDIT_DELIVERY_JOB);
}

/** The signed, ordered, retried delivery of the credit notifications (see the module docs). */
export class CreditNotificationDelivery {
  private readonly outbox: Outbox;
  /** The outbox channel `credit` (./channel.ts). */
  readonly channel: OutboxChannel<CreditMessage>;
  /** Milliseconds between two sweeps of waiting events in this process (`OUTBOX_INTERVAL_S`, set by {@link jobs}). */
  private sweepEveryMs = 10_000;
  /** When this process last swept (epoch ms); 0: never. */
  private lastSweepAt = 0;

  /**
   * @param db runs the statements of ./repository.ts and of the outbox.
   * @param settings the notification settings: `WEBHOOK_TIMEOUT_S`, `WEBHOOK_RETRY_BASE_S`,
   *   `ALLOW_PRIVATE_NETWORK_TARGETS`.
   */
  constructor(
    private readonly db: Db,
    box: SecretBox,
    private readonly queue: JobQueue,
    settings: NotificationSettings,
    private readonly logger: Logger,
  ) {
    this.outbox = new Outbox(db, logger);
    this.channel = creditChannel(box, settings, logger);
  }

  /**
   * The delivery job `credit-notification-delivery` (src/jobs/registry.ts), two rounds at once per
   * worker, recurring every `intervalS` seconds (`OUTBOX_INTERVAL_S`: retries, events whose start
   * was lost, what a crash left behind), which is also the interval of this process's sweeps.
   */
  jobs(intervalS: number): JobSpec[] {
    this.sweepEveryMs = intervalS * 1000;
    return [{ name: CREDIT_DELIVERY_JOB, run: async () => {
      await this.deliverDue();
    }, concurrency: 2, everyS: intervalS }];
  }

  /**
   * After NotificationsEnlist of tenant `customerId` (its target registered, or enabled again):
   * releases the tenant's parked heads (due at once, in `sequence` order per wallet) and starts a
   * delivery round. Never throws: a failure is logged, and the next sweep releases them.
   */
  async resumeTenant(customerId: string): Promise<void> {
    try {
      await releaseTenant(this.db, customerId, PARKED_AT);
    } catch (error) {
      this.logger.warn({ err: error, customerId }, "could not release the waiting credit notifications (the next sweep will)");
    }
    this.notifyCreditEventsWritten();
  }

  /**
   * Releases the parked heads of tenants that have an enabled target again (also healing a release
   * that raced a park) and parks the due heads of tenants without one. Two statements over the
   * parked and the due heads only (a wallet's later events wait beyond both); a row a round or a
   * writer holds is left to the next sweep. Run at most once per `OUTBOX_INTERVAL_S` per process.
   */
  async sweepWaiting(): Promise<void> {
    await sweepParked(this.db, PARKED_AT);
  }

  /**
   * RecoverCreditNotifications for tenant `customerId` (./log.ts {@link recoverCreditNotifications};
   * docs/outbox.md "Recovering missed notifications"), then a delivery round after the commit.
   * @returns `{ recovered }`: how many notifications were re-queued.
   * @throws DomainError NOT_FOUND (404, no target); ValidationFailed (422 on `since`).
   */
  async recover(em: EntityManager, customerId: string, since: string): Promise<{ recovered: number }> {
    const recovered = await recoverCreditNotifications(em, this.db, this.channel, customerId, since);
    this.notifyCreditEventsWritten(recovered);
    return { recovered };
  }

  /** The credit delivery log of tenant `customerId`, one page ({@link listCreditDeliveries}). */
  listDeliveries(em: EntityManager, customerId: string, page: { limit: number; offset: number }): Promise<CreditDeliveryListView> {
    return listCreditDeliveries(em, customerId, page);
  }

  /** {@link notifyCreditEventsWritten} on this service's queue. */
  notifyCreditEventsWritten(written = 1): void {
    notifyCreditEventsWritten(this.queue, written);
  }

  /**
   * A delivery round: `lanes` loops, each claiming a due wallet head (see the module docs), sending
   * it and recording the outcome, until none is due or `limit` events were claimed. Sweeps first
   * when the last sweep of this process is `OUTBOX_INTERVAL_S` old. Safe to run on any number of
   * workers at once.
   * @returns how many events were claimed (attempted, or found without an enabled target or tenant).
   */
  async deliverDue(options: DeliverOptions = {}): Promise<number> {
    if (Date.now() - this.lastSweepAt >= this.sweepEveryMs) {
      this.lastSweepAt = Date.now();
      await this.sweepWaiting();
    }
    return (await this.outbox.round(this.channel, { lanes: options.lanes ?? 8, limit: options.limit ?? 500 })).claimed;
  }

  /**
   * Claims a due wallet head without sending it: the wallet's lowest pending event, due, of a tenant
   * with an enabled target; locked with `FOR UPDATE SKIP LOCKED` and leased (src/modules/outbox/repository/claim.ts).
   * Due retries go first, oldest first, then never-attempted events. Exposed for the crash tests.
   * @returns the claimed event, or undefined when none is due.
   */
  async claimDue(): Promise<ClaimedEvent | undefined> {
    const claimed = await this.outbox.claim(this.channel);
    if (!claimed) return undefined;
    const { wallet_id, customer_id, sequence } = claimed.row;
    return { id: claimed.id, walletId: String(wallet_id), customerId: String(customer_id), sequence: Number(sequence), attemptCount: claimed.attempts };
  }
}

/**
 * The credit delivery log and recovery (docs/outbox.md "Recovering missed notifications";
 * spec/credit/notifications.tsp `listCreditNotificationDeliveries`, `recoverCreditNotifications`):
 * the tenant's notifications with their delivery state and attempts, as the platform's List
 * Webhook Deliveries shows the PIN webhook's.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Db } from "../../../db/sql.js";
import type { components } from "../../../../generated/types/credit.js";
import { DomainError } from "../../../domain/errors.js";
import { PARKED_AT, WAITING_AT } from "../../../domain/outbox.js";
import type { OutboxChannel } from "../../outbox/channel.js";
import { DeliveryAttempt } from "../../outbox/entities.js";
import { recoverSince, requeueFailed } from "../../outbox/recover.js";
import { tenantNow } from "../clock/repository.js";
import { CreditEvent } from "../accounts/entities.js";
import { CreditNotificationTarget } from "./entities.js";

/** Schema `CreditNotificationDelivery`. */
export type CreditDeliveryView = components["schemas"]["CreditNotificationDelivery"];
/** Schema `CreditNotificationDeliveryList`. */
export type CreditDeliveryListView = components["schemas"]["CreditNotificationDeliveryList"];

/** Attempts shown per notification (the newest). */
const ATTEMPTS_SHOWN = 50;

/**
 * One page of tenant `customerId`'s credit notifications, newest first (`createdAt`, then wallet
 * and `sequence` descending), each with its attempts oldest first. `nextAttemptAt` is null unless
 * the notification is pending with a real schedule (a wallet's later events waiting for its head,
 * and events held while the target is disabled, show null).
 * @param page `limit` 1–100, `offset` ≥ 0 (the schema has checked both).
 */
export async function listCreditDeliveries(
  em: EntityManager,
  customerId: string,
  page: { limit: number; offset: number },
): Promise<CreditDeliveryListView> {
  const [rows, total] = await em.findAndCount(
    CreditEvent,
    { customerId },
    { orderBy: { createdAt: "desc", walletId: "desc", sequence: "desc" }, limit: page.limit, offset: page.offset },
  );
  const ids = rows.map((r) => r.id);
  const attempts = ids.length === 0
    ? []
    : await em.find(DeliveryAttempt, { channel: "credit", messageId: { $in: ids } }, { orderBy: { attemptedAt: "asc", id: "asc" } });
  const items = rows.map((r): CreditDeliveryView => {
    const next = r.nextAttemptAt ?? null;
    const scheduled = r.deliveryStatus === "pending" && next !== null && next.getTime() !== WAITING_AT.getTime() && next.getTime() !== PARKED_AT.getTime();
    return {
      eventId: r.id,
      webhookId: r.id,
      type: r.type as CreditDeliveryView["type"],
      walletId: r.walletId,
      sequence: r.sequence,
      status: r.deliveryStatus,
      attempts: attempts.filter((a) => a.messageId === r.id).slice(-ATTEMPTS_SHOWN).map((a) => ({
        attemptedAt: a.attemptedAt.toISOString(),
        httpStatus: a.httpStatus ?? null,
        durationMs: a.durationMs,
        error: a.error ?? null,
      })),
      nextAttemptAt: scheduled ? next.toISOString() : null,
      createdAt: r.createdAt.toISOString(),
    };
  });
  return { items, total, limit: page.limit, offset: page.offset };
}

/**
 * RecoverCreditNotifications: re-queues tenant `customerId`'s notifications created at or after
 * `since` whose last attempt failed — `failed`, `disabled`, or `pending` with a retry still to come
 * — due now ({@link requeueFailed}: per-wallet order kept, `webhook-id` = event id kept, attempts
 * history kept, counter restarted; one that may be in flight keeps its lease), in one
 * `db.transaction`.
 * Never-attempted and succeeded notifications are not touched. A disabled target stays disabled
 * (its re-queued events wait until NotificationsEnlist). The caller starts a round.
 * @param since ISO 8601 date-time, at most 30 days back, not in the future, on the tenant's clock
 *   (`tenantNow`: its sandbox clock while active, the clock the events' `createdAt` follow).
 * @returns how many notifications were re-queued.
 * @throws DomainError NOT_FOUND (404) when the tenant has no target; ValidationFailed (422
 *   `VALIDATION_ERROR` on `since`).
 */
export async function recoverCreditNotifications<M>(em: EntityManager, db: Db, channel: OutboxChannel<M>, customerId: string, since: string): Promise<number> {
  const from = recoverSince(since, await tenantNow(db, customerId));
  const target = await em.findOne(CreditNotificationTarget, { customerId });
  if (!target) throw new DomainError("NOT_FOUND", "No credit notification URL is registered yet: call NotificationsEnlist (PUT /v2/notifications).");
  return db.transaction((tx) => requeueFailed(tx, channel, customerId, from));
}

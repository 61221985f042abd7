/**
 * The credit notifications' SQL (docs/architecture.md "Reaching the database"): the tenants'
 * targets (`credit_notification_target`, owned here), and the delivery state of the credit
 * notifications. The events themselves (`credit_event`) are the wallets' event log, owned by
 * src/modules/credit/accounts/ (defined and written there); their delivery columns
 * (`delivery_status`, `attempt_count`, `next_attempt_at`) are written only by the outbox's
 * statements (src/modules/outbox/repository/, built from `CREDIT_EVENT_TABLE` in ./channel.ts) and
 * by the statements below. {@link CREDIT_MESSAGE} also reads identity's `customer` (`is_active`).
 */
import type { PreparedStatement, Sql, Tx } from "../../../db/sql.js";

/** SQL condition: the tenant of the `credit_event` row aliased `alias` has an enabled target (a constant fragment). */
const hasEnabledTarget = (alias: "m" | "e"): string =>
  `exists (select 1 from credit_notification_target t where t.customer_id = ${alias}.customer_id and t.disabled_at is null)`;

/** The credit channel's claim condition (the outbox's claim aliases the event `m`): its tenant has an enabled target. */
export const CLAIMABLE: string = hasEnabledTarget("m");

// --- targets (./service.ts) -------------------------------------------------------------------

/**
 * Registers tenant `$1`'s target (`$2` URL, `$3` sealed signing secret, `$4` now), enabled,
 * replacing any previous one; keeps the first registration's `created_at`.
 */
export const UPSERT_TARGET: PreparedStatement = {
  name: "credit_notifications_upsert_target",
  text: `insert into credit_notification_target (customer_id, url, secret_sealed, disabled_at, disabled_reason, created_at, updated_at)
           values ($1, $2, $3, null, null, $4, $4)
         on conflict (customer_id) do update set url = excluded.url, secret_sealed = excluded.secret_sealed,
           disabled_at = null, disabled_reason = null, updated_at = excluded.updated_at
         returning created_at, updated_at`,
};

/**
 * Registers `url` as tenant `customerId`'s target with the sealed signing secret `secretSealed`,
 * enabled, replacing any previous one: one statement ({@link UPSERT_TARGET}, autocommit on `sql`),
 * so concurrent calls leave one target (the last one wins) and keep the first registration's
 * `created_at`. `now` is the instant written (UTC).
 * @returns the row's `created_at` and `updated_at`, or undefined when the driver returned no row.
 */
export async function upsertTarget(
  sql: Sql,
  customerId: string,
  url: string,
  secretSealed: string,
  now: Date,
): Promise<{ created_at: Date | string; updated_at: Date | string } | undefined> {
  const [row] = await sql.rows<{ created_at: Date | string; updated_at: Date | string }>(UPSERT_TARGET, [customerId, url, secretSealed, now]);
  return row;
}

/** Disables tenant `$1`'s target after HTTP 410 (`$2` why), only the registration signed with `$3` (its sealed secret) and only if enabled. */
export const DISABLE_TARGET: PreparedStatement = {
  name: "credit_notifications_disable_target",
  text: `update credit_notification_target set disabled_at = now(), disabled_reason = $2, updated_at = now()
          where customer_id = $1 and disabled_at is null and secret_sealed = $3`,
};

/** Disables a tenant's target in `tx` ({@link DISABLE_TARGET}). */
export async function disableTarget(tx: Tx, customerId: string, reason: string, secretSealed: string): Promise<void> {
  await tx.run(DISABLE_TARGET, [customerId, reason, secretSealed]);
}

// --- delivery (./channel.ts, ./delivery.ts) -----------------------------------------------------

/**
 * Event `$1` for one attempt: whether its tenant is active, the tenant's target (null columns
 * without one), and the event's columns the body is built from.
 */
export const CREDIT_MESSAGE: PreparedStatement = {
  name: "credit_notifications_message",
  text: `select coalesce(c.is_active, false) as tenant_active, t.url, t.secret_sealed, t.disabled_at, t.customer_id is not null as has_target,
                e.wallet_id, e.card_id, e.type, e.amount, e.direction, e.affects_balance, e.wallet_details_after, e.sequence, e.unapplied_amount
           from credit_event e
           left join customer c on c.customer_id = e.customer_id
           left join credit_notification_target t on t.customer_id = e.customer_id
          where e.id = $1`,
};

/** An event loaded for one attempt ({@link CREDIT_MESSAGE}). */
export interface CreditMessageRow {
  tenantActive: boolean;
  /** The tenant's target, undefined without one. */
  target?: { url: string; secret_sealed: string; disabled_at: Date | string | null };
  event: {
    walletId: string;
    cardId: string | null;
    type: string;
    amount: number;
    direction: "debit" | "credit";
    affectsBalance: boolean;
    walletDetailsAfter: Record<string, unknown>;
    sequence: number;
    /** Only on `Reembolso`, cents; null otherwise. */
    unappliedAmount: number | null;
  };
}

interface CreditMessageDbRow {
  tenant_active: boolean;
  has_target: boolean;
  url: string | null;
  secret_sealed: string | null;
  disabled_at: Date | string | null;
  wallet_id: string;
  card_id: string | null;
  type: string;
  amount: string | number;
  direction: "debit" | "credit";
  affects_balance: boolean;
  wallet_details_after: Record<string, unknown> | string;
  sequence: string | number;
  unapplied_amount: string | number | null;
}

/** Event `id` for one attempt ({@link CREDIT_MESSAGE}). @throws Error when there is no event `id`. */
export async function creditMessage(sql: Sql, id: string): Promise<CreditMessageRow> {
  const [row] = await sql.rows<CreditMessageDbRow>(CREDIT_MESSAGE, [id]);
  if (!row) throw new Error(`credit event ${id} not found`);
  const details = typeof row.wallet_details_after === "string" ? (JSON.parse(row.wallet_details_after) as Record<string, unknown>) : row.wallet_details_after;
  return {
    tenantActive: row.tenant_active,
    ...(row.has_target && { target: { url: row.url!, secret_sealed: row.secret_sealed!, disabled_at: row.disabled_at } }),
    event: {
      walletId: row.wallet_id,
      cardId: row.card_id,
      type: row.type,
      amount: Number(row.amount),
      direction: row.direction,
      affectsBalance: row.affects_balance,
      walletDetailsAfter: details,
      sequence: Number(row.sequence),
      unappliedAmount: row.unapplied_amount === null ? null : Number(row.unapplied_amount),
    },
  };
}

/** Releases tenant `$2`'s parked heads (`next_attempt_at` = `$1`, `PARKED_AT`): due at once. */
export const RELEASE_TENANT: PreparedStatement = {
  name: "credit_notifications_release_tenant",
  text: `update credit_event set next_attempt_at = null where delivery_status = 'pending' and next_attempt_at = $1 and customer_id = $2`,
};

/** Releases a tenant's parked heads ({@link RELEASE_TENANT}), autocommit on `sql`. */
export async function releaseTenant(sql: Sql, customerId: string, parkedAt: Date): Promise<void> {
  await sql.run(RELEASE_TENANT, [parkedAt, customerId]);
}

/** Releases the parked heads (`$1`, `PARKED_AT`) of tenants that have an enabled target; rows held by others are skipped. */
export const RELEASE_PARKED: PreparedStatement = {
  name: "credit_notifications_release_parked",
  text: `update credit_event set next_attempt_at = null
          where id in (select e.id from credit_event e where e.delivery_status = 'pending' and e.next_attempt_at = $1
                         and ${hasEnabledTarget("e")} for update of e skip locked)`,
};

/** Parks (`$1`, `PARKED_AT`) the due heads of tenants without an enabled target; rows held by others are skipped. */
export const PARK_DUE: PreparedStatement = {
  name: "credit_notifications_park_due",
  text: `update credit_event set next_attempt_at = $1
          where id in (select e.id from credit_event e where e.delivery_status = 'pending' and (e.next_attempt_at is null or e.next_attempt_at <= now())
                         and not ${hasEnabledTarget("e")} for update of e skip locked)`,
};

/** The sweep's two statements ({@link RELEASE_PARKED}, then {@link PARK_DUE}), each autocommit on `sql`. */
export async function sweepParked(sql: Sql, parkedAt: Date): Promise<void> {
  await sql.run(RELEASE_PARKED, [parkedAt]);
  await sql.run(PARK_DUE, [parkedAt]);
}

/**
 * A small credit notification receiver, the consumer of the credit notification message pact
 * (credit-notifications.test.ts): what a tenant's `creditNotificationsURL` handler does with a
 * `CreditNotification` body (spec/credit/notifications.tsp). It depends on nothing of the service:
 * it reads the body as a tenant would, from the published contract only.
 *
 * It keeps, per wallet, the latest `walletDetails_after` and the `sequence` it came with. The spec
 * asks a receiver to "order by `sequence`" and lets it "spot a gap": a notification whose sequence
 * is not the next one is refused ({@link SequenceGapError}, so the sender retries it later, after
 * the missing one), and one already applied (delivery is at least once) is acknowledged without
 * changing anything. A body that does not have the contract's shape is refused
 * ({@link MalformedNotificationError}).
 *
 * The card authorization types (spec/credit/notifications.tsp; docs/decisions/credit.md
 * "Authorizations") are applied to the record as holds: `Autorizacion Aprobada` raises `amountHeld`
 * by its amount (the available amount falls by it, the debt does not move), `Autorizacion Capturada`
 * moves its amount from `amountHeld` to `principal_outstanding`, `Autorizacion Liberada` lowers
 * `amountHeld` by its amount (the available amount rises by it), `Autorizacion Rechazada` changes
 * nothing. A notification whose `walletDetails_after` does not follow from the record that way is
 * refused ({@link InconsistentNotificationError}). `Reembolso` (a merchant's refund,
 * docs/decisions/cards.md "Refunds") is taken as it comes, like the cycle types.
 */

/** The notification types the receiver handles (spec `CreditNotificationType`). */
export const NOTIFICATION_TYPES = [
  "Interes Nominal Calculado",
  "Interes Nominal Aplicado",
  "Interes Moroso Calculado",
  "Interes Moroso Aplicado",
  "Reporte de Pago",
  "Cambio de Limite",
  "Interes cancelado",
  "Credito Reintegrado",
  "Cambio Interest ejecutado",
  "Interes moroso ejecutado",
  "Autorizacion Aprobada",
  "Autorizacion Rechazada",
  "Autorizacion Capturada",
  "Autorizacion Liberada",
  "Reembolso",
] as const;

export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** The wallet state carried by a notification (`walletDetails_after`), amounts in cents. */
export interface WalletDetails {
  principal_outstanding: number;
  interest_accrued: number;
  totalDebt: number;
  limit: number;
  amountOverdraft: number;
  /** Sum of the open card authorizations (holds). */
  amountHeld: number;
  interestSpecs: { interestRateNominal: number; interestRateMoroso: number; fixedInterestNominal: number; fixedInterestMoroso: number };
  minimumPaymentSpecs: { minimumPaymentRate: number; fixedMinimumPayment: number };
}

/** A credit notification as the receiver understands it. */
export interface CreditNotification {
  walletId: string;
  type: NotificationType;
  amount: number;
  direction: "debit" | "credit";
  affectsBalance: boolean;
  walletDetails_after: WalletDetails;
  sequence: number;
}

/** The receiver's record of one wallet. */
export interface WalletRecord {
  /** Sequence of the last notification applied. */
  sequence: number;
  /** The wallet state after it. */
  details: WalletDetails;
  /** Its type. */
  lastType: NotificationType;
  /**
   * The available amount those details leave: max(0, `limit` − `totalDebt` − `amountHeld`), cents
   * (what a revolving wallet in good standing has; docs/decisions/credit.md "Payments, charges and the
   * overdraft"). A wallet in default has less: the notifications do not carry its withheld part.
   */
  availableAmount: number;
}

/** The available amount `details` leave (see {@link WalletRecord.availableAmount}). */
export const availableOf = (d: WalletDetails): number => Math.max(0, d.limit - d.totalDebt - d.amountHeld);

/** The record a receiver keeps after applying a notification of `type` with `sequence` that left `details`. */
export const recordOf = (sequence: number, details: WalletDetails, lastType: NotificationType): WalletRecord => ({
  sequence,
  details,
  lastType,
  availableAmount: availableOf(details),
});

/** The body is not a `CreditNotification`; `path` names the offending field. */
export class MalformedNotificationError extends Error {
  constructor(readonly path: string, detail: string) {
    super(`malformed credit notification: ${path} ${detail}`);
    this.name = "MalformedNotificationError";
  }
}

/** The notification is not the next one of its wallet: an earlier one is missing. */
export class SequenceGapError extends Error {
  constructor(readonly walletId: string, readonly expected: number, readonly got: number) {
    super(`wallet ${walletId}: expected sequence ${expected}, got ${got}`);
    this.name = "SequenceGapError";
  }
}

/** An authorization notification whose `walletDetails_after` does not follow from the wallet's record; `field` names what differs. */
export class InconsistentNotificationError extends Error {
  constructor(readonly walletId: string, readonly sequence: number, readonly field: string, expected: number, got: number) {
    super(`wallet ${walletId}, sequence ${sequence}: ${field} should be ${expected}, is ${got}`);
    this.name = "InconsistentNotificationError";
  }
}

type Json = Record<string, unknown>;

function object(value: unknown, path: string): Json {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new MalformedNotificationError(path, "is not an object");
  return value as Json;
}

function cents(o: Json, key: string, path: string, min = 0): number {
  const v = o[key];
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min) throw new MalformedNotificationError(`${path}${key}`, `is not an integer ≥ ${min}`);
  return v;
}

function rate(o: Json, key: string, path: string): number {
  const v = o[key];
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) throw new MalformedNotificationError(`${path}${key}`, "is not a number ≥ 0");
  return v;
}

/**
 * Reads a notification body (parsed JSON, or the raw text of the POST). Unknown keys are ignored,
 * as a tolerant reader should; missing or mistyped ones are refused.
 * @throws MalformedNotificationError
 */
export function parseCreditNotification(body: unknown): CreditNotification {
  let parsed = body;
  if (typeof body === "string") {
    try {
      parsed = JSON.parse(body);
    } catch {
      throw new MalformedNotificationError("(body)", "is not JSON");
    }
  }
  const o = object(parsed, "(body)");
  if (typeof o.walletId !== "string" || o.walletId === "") throw new MalformedNotificationError("walletId", "is not a non-empty string");
  if (!NOTIFICATION_TYPES.includes(o.type as NotificationType)) throw new MalformedNotificationError("type", `is not a known type: ${JSON.stringify(o.type)}`);
  if (o.direction !== "debit" && o.direction !== "credit") throw new MalformedNotificationError("direction", "is neither debit nor credit");
  if (typeof o.affectsBalance !== "boolean") throw new MalformedNotificationError("affectsBalance", "is not a boolean");
  const d = object(o.walletDetails_after, "walletDetails_after");
  const p = "walletDetails_after.";
  const i = object(d.interestSpecs, `${p}interestSpecs`);
  const m = object(d.minimumPaymentSpecs, `${p}minimumPaymentSpecs`);
  const details: WalletDetails = {
    principal_outstanding: cents(d, "principal_outstanding", p),
    interest_accrued: cents(d, "interest_accrued", p),
    totalDebt: cents(d, "totalDebt", p),
    limit: cents(d, "limit", p),
    amountOverdraft: cents(d, "amountOverdraft", p),
    amountHeld: cents(d, "amountHeld", p),
    interestSpecs: {
      interestRateNominal: rate(i, "interestRateNominal", `${p}interestSpecs.`),
      interestRateMoroso: rate(i, "interestRateMoroso", `${p}interestSpecs.`),
      fixedInterestNominal: cents(i, "fixedInterestNominal", `${p}interestSpecs.`),
      fixedInterestMoroso: cents(i, "fixedInterestMoroso", `${p}interestSpecs.`),
    },
    minimumPaymentSpecs: {
      minimumPaymentRate: rate(m, "minimumPaymentRate", `${p}minimumPaymentSpecs.`),
      fixedMinimumPayment: cents(m, "fixedMinimumPayment", `${p}minimumPaymentSpecs.`),
    },
  };
  if (details.totalDebt !== details.principal_outstanding + details.interest_accrued) {
    throw new MalformedNotificationError(`${p}totalDebt`, "is not principal_outstanding + interest_accrued");
  }
  return {
    walletId: o.walletId,
    type: o.type as NotificationType,
    amount: cents(o, "amount", ""),
    direction: o.direction,
    affectsBalance: o.affectsBalance,
    walletDetails_after: details,
    sequence: cents(o, "sequence", "", 1),
  };
}

/** What {@link CreditReceiver.receive} did with a notification. */
export type Outcome = "applied" | "duplicate";

/** The receiver: one record per wallet. */
export class CreditReceiver {
  private readonly wallets = new Map<string, WalletRecord>();

  /**
   * @param known what the receiver has stored from earlier notifications: wallet id → the last
   *   sequence applied and the state it left (a receiver restarting from its own storage).
   */
  constructor(known: Iterable<[string, WalletRecord]> = []) {
    for (const [walletId, r] of known) this.wallets.set(walletId, { ...r });
  }

  /**
   * Applies a notification body: the wallet's record takes its `walletDetails_after`, `sequence`
   * and the available amount they leave when it is the next one (1 for a wallet not seen yet).
   * @returns `applied`, or `duplicate` for a sequence already applied (nothing changes).
   * @throws MalformedNotificationError for a body of another shape; SequenceGapError when an earlier notification is missing;
   *   InconsistentNotificationError when an authorization notification does not follow from the record.
   */
  receive(body: unknown): Outcome {
    const n = parseCreditNotification(body);
    const record = this.wallets.get(n.walletId);
    const last = record?.sequence ?? 0;
    if (n.sequence <= last) return "duplicate";
    if (n.sequence !== last + 1) throw new SequenceGapError(n.walletId, last + 1, n.sequence);
    if (record) checkHolds(record, n);
    this.wallets.set(n.walletId, recordOf(n.sequence, n.walletDetails_after, n.type));
    return "applied";
  }

  /** The record of a wallet, or undefined when no notification of it was applied. */
  wallet(walletId: string): WalletRecord | undefined {
    return this.wallets.get(walletId);
  }
}

/** What an authorization notification of `amount` does to the held amount, the principal and the available amount. */
const HOLD_EFFECTS: Partial<Record<NotificationType, (amount: number) => { held: number; principal: number; available: number }>> = {
  "Autorizacion Aprobada": (a) => ({ held: a, principal: 0, available: -a }),
  "Autorizacion Rechazada": () => ({ held: 0, principal: 0, available: 0 }),
  "Autorizacion Capturada": (a) => ({ held: -a, principal: a, available: 0 }),
  "Autorizacion Liberada": (a) => ({ held: -a, principal: 0, available: a }),
};

/**
 * Checks that an authorization notification follows from the wallet's record (see the module
 * comment); other types are taken as they come.
 * @throws InconsistentNotificationError naming `amountHeld`, `principal_outstanding`, `interest_accrued` or `availableAmount`.
 */
function checkHolds(record: WalletRecord, n: CreditNotification): void {
  const effect = HOLD_EFFECTS[n.type]?.(n.amount);
  if (!effect) return;
  const before = record.details;
  const after = n.walletDetails_after;
  const expected: [string, number, number][] = [
    ["amountHeld", before.amountHeld + effect.held, after.amountHeld],
    ["principal_outstanding", before.principal_outstanding + effect.principal, after.principal_outstanding],
    ["interest_accrued", before.interest_accrued, after.interest_accrued],
    ["availableAmount", record.availableAmount + effect.available, availableOf(after)],
  ];
  for (const [field, want, got] of expected) {
    if (want !== got) throw new InconsistentNotificationError(n.walletId, n.sequence, field, want, got);
  }
}

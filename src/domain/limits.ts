/**
 * Limits on the value a user moves out (docs/decisions/limits-and-allowlist.md): per currency, per
 * user, separately for withdrawals and transfers, each a per-transaction, a daily (UTC day) and a
 * monthly (UTC calendar month) cap. Pure types and rules; the limits module stores a customer's
 * own caps and reads the use of each kind through a {@link UsageReader} its module supplies.
 */

/** The movements that have caps. */
export type MovementKind = "withdrawal" | "transfer";

/** The caps of one kind in one currency: decimal strings in units of the currency. */
export interface CapSet {
  perTransaction: string;
  /** Most per UTC day, PENDING and COMPLETED movements counted. */
  daily: string;
  /** Most per UTC calendar month, PENDING and COMPLETED movements counted. */
  monthly: string;
}

/** What one user moved of one kind and currency in the current windows: decimal strings. */
export interface Usage {
  today: string;
  month: string;
}

/** The windows a movement at `now` counts in (UTC). */
export interface Windows {
  dayStart: Date;
  dayEnd: Date;
  monthStart: Date;
  monthEnd: Date;
}

/**
 * Reads what a user moved of one kind in `currency` since each window start (`dayStart`,
 * `monthStart`), in the transaction or EntityManager `em` it is given (typed `unknown` here: the
 * domain knows no ORM). Supplied by the module that owns the movements (withdrawals, transfers).
 */
export type UsageReader<Em = unknown> = (em: Em, userId: string, currency: string, windows: Windows) => Promise<Usage>;

/**
 * Limits on the value a user moves out (docs/decisions/limits-and-allowlist.md): per currency, per
 * user, separately for withdrawals and transfers, each a per-transaction, a daily (UTC day) and a
 * monthly (UTC calendar month) cap. Pure types and rules; the limits module stores a customer's
 * own caps and reads the use of each kind through a {@link UsageReader} its module supplies.
 */
import { clip, DomainError, quote } from "./errors.js";
import { format8, money, type Money } from "./money.js";

/** The movements that have caps. */
export type MovementKind = "withdrawal" | "transfer";

/** Both kinds, in the order answers list them. */
export const MOVEMENT_KINDS: readonly MovementKind[] = ["withdrawal", "transfer"];

/** The caps of one kind in one currency: decimal strings in units of the currency. */
export interface CapSet {
  perTransaction: string;
  /** Most per UTC day, PENDING and COMPLETED movements counted. */
  daily: string;
  /** Most per UTC calendar month, PENDING and COMPLETED movements counted. */
  monthly: string;
}

/** Caps by lowercase currency code; a currency without an entry has no caps. */
export type CapTable = Readonly<Record<string, CapSet>>;

/**
 * Default withdrawal caps per user by currency code, decimal strings in the currency's units
 * (docs/decisions/limits-and-allowlist.md "Limits"); a currency without an entry has no caps.
 * Override with `WITHDRAWAL_CAPS` (src/config.ts); a customer overrides them with Set Limits.
 */
export const DEFAULT_WITHDRAWAL_CAPS: Readonly<Record<string, CapSet>> = {
  btc: { perTransaction: "2", daily: "5", monthly: "20" },
  eth: { perTransaction: "50", daily: "100", monthly: "500" },
  usdt: { perTransaction: "100000", daily: "250000", monthly: "1000000" },
  usdc: { perTransaction: "100000", daily: "250000", monthly: "1000000" },
  trx: { perTransaction: "1000000", daily: "2500000", monthly: "10000000" },
  sol: { perTransaction: "1000", daily: "2500", monthly: "10000" },
  pol: { perTransaction: "100000", daily: "250000", monthly: "1000000" },
};

/**
 * Default transfer caps per user (sent), the same as the withdrawal defaults: value that leaves a
 * user by transfer is as good as gone (docs/decisions/limits-and-allowlist.md "Transfers").
 * Override with `TRANSFER_CAPS`.
 */
export const DEFAULT_TRANSFER_CAPS: Readonly<Record<string, CapSet>> = DEFAULT_WITHDRAWAL_CAPS;

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

/** Most currencies one kind of Set Limits may name (docs/decisions/limits-and-allowlist.md "Limits"). */
export const MAX_CAP_CURRENCIES = 32;

/**
 * The UTC day and the UTC calendar month that contain `now`: each start inclusive, each end (the
 * next start) exclusive. 23:59:59.999 belongs to its day; 00:00:00.000 starts the next one.
 */
export function windowsAt(now: Date): Windows {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  return {
    dayStart: new Date(Date.UTC(y, m, d)),
    dayEnd: new Date(Date.UTC(y, m, d + 1)),
    monthStart: new Date(Date.UTC(y, m, 1)),
    monthEnd: new Date(Date.UTC(y, m + 1, 1)),
  };
}

/** `instant` as ISO 8601 UTC to the second, e.g. `2026-11-26T00:00:00Z` (window ends in messages). */
export function isoSeconds(instant: Date): string {
  return instant.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The error code of one movement over the per-transaction cap, per kind. */
const PER_TRANSACTION_CODE = { withdrawal: "WITHDRAWAL_LIMIT_EXCEEDED", transfer: "TRANSFER_LIMIT_EXCEEDED" } as const;

/** `a − b`, never below zero. */
const remainder = (a: Money, b: Money): Money => (a.gt(b) ? a.minus(b) : money(0));

/** A movement checked against its caps: its kind, lowercase currency code and amount. */
export interface Movement {
  kind: MovementKind;
  currency: string;
  amount: Money;
}

/**
 * Checks movement `m` against `caps`, given what the user already moved of the kind and currency
 * in the current windows (`usage`: PENDING and COMPLETED movements) and those windows. In this
 * order: the per-transaction cap, the daily cap, the monthly cap; a cap reached exactly passes.
 * Each message names the cap, the amount used and the remainder with the instant the window
 * resets, e.g. "Daily withdrawal limit for btc is 5.00000000; 4.50000000 used today;
 * 0.50000000 remains until 2026-11-26T00:00:00Z" (docs/decisions/limits-and-allowlist.md "Limits").
 * No caps (`undefined`): anything passes.
 * @throws DomainError (400, field `amount`) WITHDRAWAL_LIMIT_EXCEEDED / TRANSFER_LIMIT_EXCEEDED
 *   (one movement over `perTransaction`), DAILY_LIMIT_EXCEEDED, MONTHLY_LIMIT_EXCEEDED.
 */
export function assertWithinCaps(m: Movement, caps: CapSet | undefined, usage: Usage, windows: Windows): void {
  if (!caps) return;
  const perTransaction = money(caps.perTransaction);
  if (m.amount.gt(perTransaction)) {
    throw new DomainError(
      PER_TRANSACTION_CODE[m.kind],
      `Per-transaction ${m.kind} limit for ${m.currency} is ${format8(perTransaction)}; this ${m.kind} of ${format8(m.amount)} is over it by ${format8(m.amount.minus(perTransaction))}.`,
      "amount",
    );
  }
  const daily = money(caps.daily);
  const today = money(usage.today);
  if (today.plus(m.amount).gt(daily)) {
    throw new DomainError(
      "DAILY_LIMIT_EXCEEDED",
      `Daily ${m.kind} limit for ${m.currency} is ${format8(daily)}; ${format8(today)} used today; ${format8(remainder(daily, today))} remains until ${isoSeconds(windows.dayEnd)}.`,
      "amount",
    );
  }
  const monthly = money(caps.monthly);
  const month = money(usage.month);
  if (month.plus(m.amount).gt(monthly)) {
    throw new DomainError(
      "MONTHLY_LIMIT_EXCEEDED",
      `Monthly ${m.kind} limit for ${m.currency} is ${format8(monthly)}; ${format8(month)} used this month; ${format8(remainder(monthly, month))} remains until ${isoSeconds(windows.monthEnd)}.`,
      "amount",
    );
  }
}

/** Where one cap set stands for a user: what was used and what remains in each window (exact decimals). */
export interface CapStanding {
  usedToday: Money;
  usedThisMonth: Money;
  /** `daily` − today's use, and no more than the month leaves; never below zero. */
  remainingToday: Money;
  /** `monthly` − this month's use; never below zero. */
  remainingThisMonth: Money;
}

/** Where `caps` stand given `usage` (docs/decisions/limits-and-allowlist.md "Limits", Get User Limits). */
export function capStanding(caps: CapSet, usage: Usage): CapStanding {
  const usedToday = money(usage.today);
  const usedThisMonth = money(usage.month);
  const remainingThisMonth = remainder(money(caps.monthly), usedThisMonth);
  const leftToday = remainder(money(caps.daily), usedToday);
  return { usedToday, usedThisMonth, remainingThisMonth, remainingToday: leftToday.lt(remainingThisMonth) ? leftToday : remainingThisMonth };
}

/** The caps in force: the customer's own sets (`overrides`) where it has one, the defaults elsewhere. */
export function effectiveCaps(defaults: CapTable, overrides: CapTable): Record<string, CapSet> {
  return { ...defaults, ...overrides };
}

/** A cap set as Set Limits receives it (decimal strings that passed the contract's `DecimalAmount` pattern). */
export interface CapSetInput {
  per_transaction: string;
  daily: string;
  monthly: string;
}

/**
 * The caps of one kind of a Set Limits body, checked and keyed by lowercase currency code. Codes
 * are case-insensitive; each must be a currency of `known` (lowercase codes). `kind` names the
 * body's field in errors.
 * @throws DomainError BAD_REQUEST (400) for more than {@link MAX_CAP_CURRENCIES} currencies, a code
 *   given twice (in two spellings), or caps out of order (`per_transaction` ≤ `daily` ≤ `monthly`);
 *   INVALID_CURRENCY (400) for a code not in `known`.
 */
export function checkCapInputs(kind: MovementKind, input: Readonly<Record<string, CapSetInput>> | undefined, known: ReadonlySet<string>): Record<string, CapSet> {
  const entries = Object.entries(input ?? {});
  if (entries.length > MAX_CAP_CURRENCIES) {
    throw new DomainError("BAD_REQUEST", `${kind} caps may name at most ${MAX_CAP_CURRENCIES} currencies; ${entries.length} were given.`, kind);
  }
  const caps: Record<string, CapSet> = {};
  for (const [raw, set] of entries) {
    const code = raw.toLowerCase();
    if (!known.has(code)) throw new DomainError("INVALID_CURRENCY", `Unknown currency ${quote(raw)}.`, `${kind}.${clip(raw)}`);
    if (caps[code]) throw new DomainError("BAD_REQUEST", `${kind} caps name ${code} twice.`, `${kind}.${clip(raw)}`);
    const [perTransaction, daily, monthly] = [money(set.per_transaction), money(set.daily), money(set.monthly)];
    if (perTransaction.gt(daily) || daily.gt(monthly)) {
      throw new DomainError(
        "BAD_REQUEST",
        `${kind} caps of ${code} must be in order per_transaction ≤ daily ≤ monthly (got ${set.per_transaction}, ${set.daily}, ${set.monthly}).`,
        `${kind}.${clip(raw)}`,
      );
    }
    caps[code] = { perTransaction: perTransaction.toFixed(), daily: daily.toFixed(), monthly: monthly.toFixed() };
  }
  return caps;
}

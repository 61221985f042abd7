/**
 * The credit wallet state machine (reference "States and transitions › Credit wallet"; docs/decisions/credit.md
 * "Wallets" and "Default and cure"; spec/credit/wallets.tsp `CreditWalletStatus` and the block/unblock/dissolve
 * operations). Pure decisions; simulate.ts applies them and emits the events.
 *
 * | from | trigger | condition | to |
 * |---|---|---|---|
 * | active | block | | blocked |
 * | blocked | unblock | | active |
 * | active, blocked, in_default | dissolve | | dissolved (final) |
 * | active, blocked | grace end | payments since the cut < minimum payment | in_default |
 * | in_default | payment | every uncured defaulted statement: payments since its cut ≥ its minimum + its penal interest | the state before the default |
 *
 * Engine choices where the sources are silent: a blocked wallet defaults too (default is a financial
 * fact; charges are declined in both states) and returns to `blocked` at the cure — a cure never lifts
 * a block the tenant set; an `in_default` wallet cannot be blocked (block is "active → blocked" only).
 */
import { accept, refuse, type Outcome } from "./outcome.js";
import type { Statement, WalletStatus } from "./wallet.js";

/** Block: active → blocked (reference table). Refusal `INVALID_TRANSITION` (409) from any other state. */
export function block(status: WalletStatus): Outcome<WalletStatus> {
  return status === "active" ? accept("blocked") : refuse("INVALID_TRANSITION", `A ${status} wallet cannot be blocked; only an active one can.`);
}

/** Unblock: blocked → active (reference table). Refusal `INVALID_TRANSITION` (409) from any other state. */
export function unblock(status: WalletStatus): Outcome<WalletStatus> {
  return status === "blocked" ? accept("active") : refuse("INVALID_TRANSITION", `A ${status} wallet cannot be unblocked; only a blocked one can.`);
}

/**
 * Dissolve: any state → dissolved, final (reference table: "no new transactions or interest;
 * outstanding AO and IO must still be cleared by payment reports"). Refusal `WALLET_DISSOLVED` (409)
 * when already dissolved (spec: "An already dissolved wallet answers 409").
 */
export function dissolve(status: WalletStatus): Outcome<WalletStatus> {
  return status === "dissolved" ? refuse("WALLET_DISSOLVED", "The wallet is already dissolved.") : accept("dissolved");
}

/**
 * Whether a charge may be made at `at` (reference table: blocked → "all card authorizations … are
 * declined"; docs/decisions/credit.md "Default and cure": an `in_default` wallet refuses charges; dissolved → "no new
 * transactions"; "A wallet created with `time` stops accepting new transactions after that many days").
 * Refusals (409): `WALLET_BLOCKED`, `WALLET_IN_DEFAULT`, `WALLET_DISSOLVED`, `WALLET_EXPIRED` (at ≥ expiresAt).
 */
export function chargeAllowed(status: WalletStatus, expiresAt: Date | null, at: Date): Outcome<true> {
  if (status === "blocked") return refuse("WALLET_BLOCKED", "The wallet is blocked: charges are declined.");
  if (status === "in_default") return refuse("WALLET_IN_DEFAULT", "The wallet is in default: charges are declined until it is cured.");
  if (status === "dissolved") return refuse("WALLET_DISSOLVED", "The wallet is dissolved: no new transactions.");
  if (expiresAt !== null && at.getTime() >= expiresAt.getTime()) return refuse("WALLET_EXPIRED", "The credit line's time has ended: no new charges.");
  return accept(true);
}

/**
 * Whether a limit raise or an interest override is allowed (spec wallets.tsp: "A dissolved wallet
 * answers 409"). Refusal `WALLET_DISSOLVED`.
 */
export function settingsChangeAllowed(status: WalletStatus): Outcome<true> {
  return status === "dissolved" ? refuse("WALLET_DISSOLVED", "The wallet is dissolved: its settings cannot change.") : accept(true);
}

/**
 * Whether a statement defaults at its grace end (docs/decisions/credit.md "Default and cure": what was paid
 * since its cut is compared with its minimum payment; less makes the statement `defaulted`): true when
 * `paidInCycle` < `minimumPayment`.
 */
export function defaultsAtGraceEnd(statement: Pick<Statement, "paidInCycle" | "minimumPayment">): boolean {
  return statement.paidInCycle < statement.minimumPayment;
}

/**
 * Whether a defaulted statement is covered (docs/decisions/credit.md "Default and cure": cured when the
 * payments since the defaulted statement's cut reach its minimum payment plus its penal interest).
 * Example: 3000 + 1800 ≥ 4000 + 800.
 */
export function defaultCovered(statement: Pick<Statement, "paidInCycle" | "minimumPayment" | "penalInterest">): boolean {
  return statement.paidInCycle >= statement.minimumPayment + statement.penalInterest;
}

/**
 * Whether an `in_default` wallet is cured: every defaulted, not yet cured statement is covered
 * (`defaultCovered`). This is docs/decisions/credit.md "Default and cure" (and its state table in "Wallets": every
 * defaulted statement not yet cured is covered), which also covers several defaulted statements (a
 * second grace end falling short while in default).
 */
export function cured(status: WalletStatus, statements: readonly Statement[]): boolean {
  if (status !== "in_default") return false;
  const open = statements.filter((s) => s.status === "defaulted" && s.curedAt === null);
  return open.length > 0 && open.every(defaultCovered);
}

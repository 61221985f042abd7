/**
 * The pure interest-cycle engine of the credit core (docs/credit-engine.md; docs/decisions/credit.md;
 * reference "Credit product", "Credit wallet", "States and transitions › Credit wallet", "Credit
 * notifications"). No I/O: no database, no clock — every instant is passed in.
 *
 * Modules:
 * - outcome.ts — typed refusals (`Outcome`, `Refusal`, `RefusalCode` with its HTTP mapping) and `cents`;
 * - schedule.ts — cut dates (firstCutDate + n × cutFrequency, month/year clamped), next cut, grace end,
 *   UTC days, days in a cycle;
 * - interest.ts — daily close basis, ADB/BAC and penal interest, minimum payment, compound bucket;
 * - payments.ts — balances, payment split, overdraft, reinstatement, charges, limit raises;
 * - states.ts — block/unblock/dissolve, charge permission, default and cure conditions;
 * - events.ts — the notification types, direction, affectsBalance, `walletDetails_after`, sequence;
 * - wallet.ts — product rules, wallet state, statements, creation;
 * - holds.ts — holds of approved authorizations on the balances (place, settle);
 * - authorizations.ts — authorize, capture, void, and a hold's expiry instant;
 * - refunds.ts — refunds of captured authorizations (principal, then interest; `Reembolso`);
 * - work.ts — the working copy of one call (state, events, touched statements, closed holds);
 * - simulate.ts — the reference model (`advance`, `charge`, `pay`, `changeLimit`, `overrideSpecs`,
 *   `blockWallet`, `unblockWallet`, `dissolveWallet`) and the order of the steps.
 *
 * Money: integer cents in JS numbers (safe integers, checked by `cents`; the spec's `int64`); rates:
 * percent as given by the product (decimal.js for every product, one half-even rounding per formula).
 *
 * How the set-based batches mirror the steps (one statement per batch over all due wallets; the
 * names are the spec's; `rhe(x)` is a half-even rounding to an integer, e.g.
 * `CASE WHEN x - floor(x) = 0.5 THEN 2 * round(x / 2) ELSE round(x) END` on `numeric`, since PostgreSQL's
 * `round(numeric)` rounds half away from zero):
 * - daily close at 00:00 UTC instant T, for wallets not dissolved whose last close is before T:
 *   `sum_of_daily_balance += principal_outstanding + CASE WHEN compound THEN interest_accrued ELSE 0 END`;
 * - grace ends due at T (before the cut of the same instant), per statement whose `payment_due_date` = T
 *   and `interest_applied_at` is null: book `interest_generated` into principal (the statement's
 *   `compound`) or interest, AA = greatest(0, AA − interest); when `paid_in_cycle < minimum_payment`: status `defaulted`, wallet
 *   `in_default`, penal = rhe(morosidadRate/100/divisor × interest_basis) + fixedInterestMoroso into
 *   interest, AA = greatest(0, AA − penal);
 * - cut at T for wallets whose next cut (schedule.ts `nextCutAfter`) is T: take the product's interest and
 *   minimum payment settings unless the wallet's override has activated; insert the statement with
 *   days = (T AT TIME ZONE 'UTC')::date − (cycle_start AT TIME ZONE 'UTC')::date, basis = ADB ? sum : days × (principal [+ interest if compound]),
 *   interest = rhe(rate/100/divisor × basis) + fixed, minimum = least(rhe(minRate/100 × principal) +
 *   fixedMin, principal + interest_accrued), due = date_trunc('day', T) + gracePeriod days; then reset
 *   the sum and set cycle_start = T; activate a pending override. A unique (wallet, cut_date) makes a
 *   rerun charge nothing twice;
 * - events get `sequence` = the wallet's last sequence + row_number() over the batch's order of steps.
 */
export * from "./outcome.js";
export * from "./schedule.js";
export * from "./interest.js";
export * from "./payments.js";
export * from "./states.js";
export * from "./events.js";
export * from "./wallet.js";
export * from "./simulate.js";
export * from "./holds.js";
export * from "./authorizations.js";
export * from "./refunds.js";

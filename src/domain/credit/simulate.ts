/**
 * The pure reference model of the credit core: `advance` runs every scheduled step of a wallet up to an
 * instant, and `charge`, `pay`, `changeLimit`, `overrideSpecs`, `blockWallet`, `unblockWallet`,
 * `dissolveWallet` apply one operation at an instant (after advancing to it). Each returns the new state,
 * the events emitted (in `sequence` order) and the statements created or changed. The SQL batches and the
 * sandbox test clock are checked against this model (docs/credit-engine.md).
 *
 * Order of the steps (docs/decisions/credit.md "The cycle", plus the engine's choices where it is silent):
 * 1. Steps run in time order (the next cut is the first cut of the product's current schedule after
 *    the wallet's clock, so a `cutFrequency` update applies from the next cut and never reaches back).
 *    At one instant: the daily close (00:00 UTC) first, then the grace ends due at that instant (oldest
 *    cut first), then the cut; an operation at that instant (charge, payment, …) runs after all three. The close comes first so that the
 *    cycle's last day counts, and the grace end before the cut so that a statement's interest, default
 *    and penal interest are booked before the next statement reads the balances (docs/decisions/credit.md
 *    "The cycle").
 * 2. Daily close: `sumOfDailyBalance` += principal (+ outstanding interest on compound products);
 *    then every hold whose `expiresAt` is this close is released (`Autorizacion Liberada`, oldest
 *    hold first; docs/decisions/credit.md "Authorizations"), before the grace ends and the cut.
 * 3. Cut: the wallet's interest and minimum payment settings are refreshed from the product unless an
 *    override has activated (so a product update applies from the next cut); the statement is computed
 *    and `Interes Nominal Calculado` emitted (amount = interest generated, provisional); then, when an override
 *    is pending, it takes effect and `Cambio Interest ejecutado` (amount 0) is emitted (spec: "that cut is
 *    still computed with the previous settings"); the next cycle starts at the cut with a zero sum.
 * 4. Grace end: `Interes Nominal Aplicado` (into principal on compound products, else into interest;
 *    applied whatever was paid — docs/decisions/credit.md "The golden vector" applies it to a defaulted statement, and the
 *    reference has no interest-free grace);
 *    if the payments since the cut fall short of the minimum: the statement defaults, the wallet goes
 *    `in_default`, then `Interes Moroso Calculado`, `Interes Moroso Aplicado`, `Interes moroso ejecutado`
 *    (docs/decisions/credit.md "Default and cure").
 * 5. Payment: `Reporte de Pago`; when it cures the wallet: `Interes cancelado`, then on revolving
 *    products `Credito Reintegrado` (emitted even when it restores 0, so the order is always the same).
 * A dissolved wallet runs no step at all (reference: "no new transactions or interest"): interest
 * calculated at a cut before the dissolution is never applied, and no default is assessed.
 * Zero amounts are still emitted for cycle events (every cut and grace end is notified).
 *
 * Operations check the state after advancing to their instant; a refused operation returns only the
 * refusal (the caller keeps its state; `advance` alone moves the clock).
 */
import { interestBasis, dailyBalanceBasis, interestOn, minimumPayment, nominalInterestBucket, penalInterest, type InterestSpecs, type MinimumPaymentSpecs } from "./interest.js";
import { accept, refuse, type Outcome } from "./outcome.js";
import { applyCharge, applyPayment, bookInterest, raiseLimit, reinstate, type PaymentSplit } from "./payments.js";
import { daysInCycle, graceEnd, nextCutAfter, nextDailyClose } from "./schedule.js";
import { block, chargeAllowed, cured, defaultsAtGraceEnd, dissolve, settingsChangeAllowed, unblock } from "./states.js";
import { productSpecs, type CreditProductRules, type Statement, type WalletState } from "./wallet.js";
import { balancesOf, begin, closeHold, emit, finish, holdsInOrder, setBalances, type StepResult, type Work } from "./work.js";

export type { HoldClosure, StepResult } from "./work.js";

/**
 * Daily close at `at` (00:00 UTC): adds the day's end balance (interest.ts `dailyBalanceBasis`; holds
 * are not debt and add nothing), then releases every hold whose `expiresAt` has come, oldest first
 * (`Autorizacion Liberada` each; docs/decisions/credit.md "Authorizations").
 */
function runDailyClose(w: Work, product: CreditProductRules, at: Date): void {
  w.s.sumOfDailyBalance += dailyBalanceBasis(w.s.principalOutstanding, w.s.interestOutstanding, product.compound);
  for (const hold of holdsInOrder(w.s.holds)) if (hold.expiresAt.getTime() <= at.getTime()) closeHold(w, hold, "expired", 0, at);
}

/** The cut at `at`: the product's specs refreshed, a statement, `Interes Nominal Calculado`, then a pending override (step 3). */
function runCut(w: Work, product: CreditProductRules, at: Date): void {
  const s = w.s;
  if (!s.specsOverridden) Object.assign(s, productSpecs(product));
  const days = daysInCycle(s.cycleStart, at);
  const balanceAtCut = dailyBalanceBasis(s.principalOutstanding, s.interestOutstanding, product.compound);
  const basis = interestBasis(product.interestAccrualMethod, s.sumOfDailyBalance, days, balanceAtCut);
  const { interestSpecs: i, minimumPaymentSpecs: m } = s;
  const interest = interestOn(basis, i.interestRateNominal, product.dailyRateDivisor, i.fixedInterestNominal);
  const minimum = minimumPayment(m, s.principalOutstanding, s.principalOutstanding + s.interestOutstanding);
  const statement: Statement = {
    index: s.statements.length,
    cutDate: at,
    cycleStart: s.cycleStart,
    cycleEnd: at,
    daysInCycle: days,
    sumOfDailyBalance: s.sumOfDailyBalance,
    principalAtCut: s.principalOutstanding,
    interestOutstandingAtCut: s.interestOutstanding,
    interestAccrualMethod: product.interestAccrualMethod,
    compound: product.compound,
    interestBasis: basis,
    interestRateNominal: i.interestRateNominal,
    dailyRateDivisor: product.dailyRateDivisor,
    fixedInterestNominal: i.fixedInterestNominal,
    minimumPaymentRate: m.minimumPaymentRate,
    fixedMinimumPayment: m.fixedMinimumPayment,
    interestGenerated: interest,
    minimumPayment: minimum,
    paymentDueDate: graceEnd(at, product.gracePeriod),
    paidInCycle: 0,
    status: minimum === 0 ? "paid" : "pending",
    interestApplied: 0,
    interestAppliedAt: null,
    penalInterest: 0,
    interestRateMoroso: null,
    fixedInterestMoroso: null,
    curedAt: null,
  };
  s.statements.push(statement);
  w.touched.add(statement.index);
  emit(w, "Interes Nominal Calculado", interest, at, at);
  if (s.pendingSpecs !== null) {
    s.interestSpecs = s.pendingSpecs.interestSpecs;
    s.minimumPaymentSpecs = s.pendingSpecs.minimumPaymentSpecs;
    s.pendingSpecs = null;
    s.specsOverridden = true;
    emit(w, "Cambio Interest ejecutado", 0, at, at);
  }
  s.sumOfDailyBalance = 0;
  s.cycleStart = at;
}

/**
 * The grace end of `st` at `at`: applied interest (capitalised when the product was compound at the
 * cut), then the default and its penal interest with the wallet's specs in force (step 4).
 */
function runGraceEnd(w: Work, st: Statement, at: Date): void {
  const s = w.s;
  setBalances(s, bookInterest(balancesOf(s), st.interestGenerated, nominalInterestBucket(st.compound)).balances);
  st.interestApplied = st.interestGenerated;
  st.interestAppliedAt = at;
  w.touched.add(st.index);
  emit(w, "Interes Nominal Aplicado", st.interestGenerated, at, st.cutDate);
  if (!defaultsAtGraceEnd(st)) return;
  st.status = "defaulted";
  if (s.status === "active" || s.status === "blocked") {
    s.statusBeforeDefault = s.status;
    s.status = "in_default";
  }
  const penal = penalInterest(st.interestBasis, st.dailyRateDivisor, s.interestSpecs);
  st.penalInterest = penal;
  st.interestRateMoroso = s.interestSpecs.interestRateMoroso;
  st.fixedInterestMoroso = s.interestSpecs.fixedInterestMoroso;
  emit(w, "Interes Moroso Calculado", penal, at, st.cutDate);
  setBalances(s, bookInterest(balancesOf(s), penal, "interest").balances);
  emit(w, "Interes Moroso Aplicado", penal, at, st.cutDate);
  emit(w, "Interes moroso ejecutado", penal, at, st.cutDate);
}

function runUntil(w: Work, product: CreditProductRules, to: Date): void {
  const s = w.s;
  for (;;) {
    if (s.status === "dissolved") break;
    const close = nextDailyClose(s.asOf).getTime();
    const cut = nextCutAfter(s.firstCutDate, product.cutFrequency, s.asOf).date.getTime();
    let grace = Infinity;
    for (const st of s.statements) if (st.interestAppliedAt === null) grace = Math.min(grace, st.paymentDueDate.getTime());
    const t = Math.min(close, cut, grace);
    if (t > to.getTime()) break;
    const at = new Date(t);
    if (t === close) runDailyClose(w, product, at);
    for (const st of s.statements) if (st.interestAppliedAt === null && st.paymentDueDate.getTime() === t) runGraceEnd(w, st, at);
    if (t === cut) runCut(w, product, at);
    s.asOf = at;
  }
  if (to.getTime() > s.asOf.getTime()) s.asOf = new Date(to.getTime());
}

/**
 * Runs every scheduled step of the wallet (daily closes, cuts, grace ends; module note for their order)
 * due in (state.asOf, to] and sets the wallet's clock to `to`. `product` is the wallet's product as it
 * is now (its settings apply from the next step). Refusal `CLOCK_BACKWARDS` when `to` < `state.asOf`.
 */
export function advance(state: WalletState, product: CreditProductRules, to: Date): Outcome<StepResult> {
  if (to.getTime() < state.asOf.getTime()) return refuse("CLOCK_BACKWARDS", "The instant is before the wallet's clock.");
  const w = begin(state);
  runUntil(w, product, to);
  return accept(finish(w));
}

/** Advances to `at` and returns the working copy, or the refusal (./authorizations.ts starts its operations with it too). */
export function startAt(state: WalletState, product: CreditProductRules, at: Date): Outcome<Work> {
  if (at.getTime() < state.asOf.getTime()) return refuse("CLOCK_BACKWARDS", "The instant is before the wallet's clock.");
  const w = begin(state);
  runUntil(w, product, at);
  return accept(w);
}

/**
 * PayOutCredit at `at`, `amount` cents: advances, then AA − amount, AO + amount. No event (the
 * reference defines none for a charge; spec/credit/charges.tsp). Refusals: `CLOCK_BACKWARDS`,
 * `AMOUNT_NOT_POSITIVE`, `WALLET_BLOCKED`, `WALLET_IN_DEFAULT`, `WALLET_DISSOLVED`, `WALLET_EXPIRED`
 * (states.ts `chargeAllowed`), `CHARGE_EXCEEDS_AVAILABLE`.
 * @throws RangeError when `amount` is not a safe integer (the HTTP schema admits integers only).
 */
export function charge(state: WalletState, product: CreditProductRules, at: Date, amount: number): Outcome<StepResult> {
  const started = startAt(state, product, at);
  if (!started.ok) return started;
  const w = started.value;
  if (!(amount > 0)) return refuse("AMOUNT_NOT_POSITIVE", "The charge amount must be a positive number of cents.", "amount");
  const allowed = chargeAllowed(w.s.status, w.s.expiresAt, at);
  if (!allowed.ok) return allowed;
  const booked = applyCharge(balancesOf(w.s), amount);
  if (!booked.ok) return booked;
  setBalances(w.s, booked.value);
  return accept(finish(w));
}

/**
 * ReportPayCredit at `at`, `amount` cents (accepted in every state, dissolved included): advances, splits
 * the payment (payments.ts `applyPayment`; AA restored only on revolving products of an active or blocked
 * wallet), counts it toward every statement in its grace period and every uncured defaulted statement,
 * emits `Reporte de Pago`, then cures the wallet when states.ts `cured` says so (`Interes cancelado` with
 * the covered penal interest, then on revolving products `Credito Reintegrado` with the AA restored).
 * Returns the split too. Refusals: `CLOCK_BACKWARDS`, `AMOUNT_NOT_POSITIVE`, `PAYMENT_EXCEEDS_DEBT`.
 * @throws RangeError when `amount` is not a safe integer (the HTTP schema admits integers only).
 */
export function pay(state: WalletState, product: CreditProductRules, at: Date, amount: number): Outcome<StepResult & { split: PaymentSplit }> {
  const started = startAt(state, product, at);
  if (!started.ok) return started;
  const w = started.value;
  const s = w.s;
  const restore = product.revolving && (s.status === "active" || s.status === "blocked");
  const applied = applyPayment(balancesOf(s), amount, product.capitalInterestSplit, restore);
  if (!applied.ok) return applied;
  setBalances(s, applied.value.balances);
  for (const st of s.statements) {
    if (st.interestAppliedAt === null || (st.status === "defaulted" && st.curedAt === null)) {
      st.paidInCycle += amount;
      if (st.status === "pending" && st.paidInCycle >= st.minimumPayment) st.status = "paid";
      w.touched.add(st.index);
    }
  }
  emit(w, "Reporte de Pago", amount, at);
  if (cured(s.status, s.statements)) {
    let penal = 0;
    for (const st of s.statements) {
      if (st.status === "defaulted" && st.curedAt === null) {
        st.curedAt = at;
        penal += st.penalInterest;
        w.touched.add(st.index);
      }
    }
    s.status = s.statusBeforeDefault ?? "active";
    s.statusBeforeDefault = null;
    emit(w, "Interes cancelado", penal, at);
    if (product.revolving) {
      const r = reinstate(balancesOf(s));
      setBalances(s, r.balances);
      emit(w, "Credito Reintegrado", r.restored, at);
    }
  }
  return accept({ ...finish(w), split: applied.value.split });
}

/**
 * ChangeWalletLimit at `at` to `newLimit` cents: advances, raises the limit (payments.ts `raiseLimit`),
 * emits `Cambio de Limite` (amount = new − old limit). Refusals: `CLOCK_BACKWARDS`, `WALLET_DISSOLVED`,
 * `LIMIT_NOT_RAISED`.
 */
export function changeLimit(state: WalletState, product: CreditProductRules, at: Date, newLimit: number): Outcome<StepResult> {
  const started = startAt(state, product, at);
  if (!started.ok) return started;
  const w = started.value;
  const allowed = settingsChangeAllowed(w.s.status);
  if (!allowed.ok) return allowed;
  const raised = raiseLimit(balancesOf(w.s), newLimit);
  if (!raised.ok) return raised;
  setBalances(w.s, raised.value.balances);
  emit(w, "Cambio de Limite", raised.value.delta, at);
  return accept(finish(w));
}

/** Fields of ChangeInterestCreditCapital (spec `ChangeInterestCreditCapitalRequest`): percent rates, cent amounts; absent fields keep the wallet's current values. */
export type SpecsOverride = Partial<InterestSpecs & MinimumPaymentSpecs>;

/**
 * ChangeInterestCreditCapital at `at`: advances; on a product without `variableSpecs` answers
 * `ignored` and changes nothing (reference: "when `variableSpecs` is false the overrides are ignored");
 * otherwise stores the override (the wallet's current values for absent fields, replacing any pending
 * one) as `pending`, to take effect at the next cut (`Cambio Interest ejecutado`). Refusals:
 * `CLOCK_BACKWARDS`, `WALLET_DISSOLVED`.
 */
export function overrideSpecs(state: WalletState, product: CreditProductRules, at: Date, override: SpecsOverride): Outcome<StepResult & { outcome: "pending" | "ignored" }> {
  const started = startAt(state, product, at);
  if (!started.ok) return started;
  const w = started.value;
  const allowed = settingsChangeAllowed(w.s.status);
  if (!allowed.ok) return allowed;
  if (!product.variableSpecs) return accept({ ...finish(w), outcome: "ignored" });
  const i = w.s.interestSpecs;
  const m = w.s.minimumPaymentSpecs;
  w.s.pendingSpecs = {
    interestSpecs: {
      interestRateNominal: override.interestRateNominal ?? i.interestRateNominal,
      interestRateMoroso: override.interestRateMoroso ?? i.interestRateMoroso,
      fixedInterestNominal: override.fixedInterestNominal ?? i.fixedInterestNominal,
      fixedInterestMoroso: override.fixedInterestMoroso ?? i.fixedInterestMoroso,
    },
    minimumPaymentSpecs: {
      minimumPaymentRate: override.minimumPaymentRate ?? m.minimumPaymentRate,
      fixedMinimumPayment: override.fixedMinimumPayment ?? m.fixedMinimumPayment,
    },
  };
  return accept({ ...finish(w), outcome: "pending" });
}

function transition(state: WalletState, product: CreditProductRules, at: Date, rule: (s: WalletState["status"]) => Outcome<WalletState["status"]>): Outcome<StepResult> {
  const started = startAt(state, product, at);
  if (!started.ok) return started;
  const w = started.value;
  const next = rule(w.s.status);
  if (!next.ok) return next;
  w.s.status = next.value;
  if (next.value === "dissolved") {
    w.s.statusBeforeDefault = null;
    for (const hold of holdsInOrder(w.s.holds)) closeHold(w, hold, "voided", 0, at);
  }
  return accept(finish(w));
}

/** Block at `at` (states.ts `block`; no event: the reference names none). Refusals: `CLOCK_BACKWARDS`, `INVALID_TRANSITION`. */
export function blockWallet(state: WalletState, product: CreditProductRules, at: Date): Outcome<StepResult> {
  return transition(state, product, at, block);
}

/** Unblock at `at` (states.ts `unblock`; no event). Refusals: `CLOCK_BACKWARDS`, `INVALID_TRANSITION`. */
export function unblockWallet(state: WalletState, product: CreditProductRules, at: Date): Outcome<StepResult> {
  return transition(state, product, at, unblock);
}

/**
 * Dissolve at `at` (states.ts `dissolve`; no later step runs). Every open hold is released
 * (`Autorizacion Liberada` each, closed as `voided`; docs/decisions/credit.md "Authorizations"), the
 * only events of a dissolution. Refusals: `CLOCK_BACKWARDS`, `WALLET_DISSOLVED`.
 */
export function dissolveWallet(state: WalletState, product: CreditProductRules, at: Date): Outcome<StepResult> {
  return transition(state, product, at, dissolve);
}

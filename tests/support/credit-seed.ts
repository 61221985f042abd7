/**
 * Seeding and reading credit wallets directly in the database, as the engine's state maps onto the
 * rows (src/modules/credit/accounts/entities.ts), for the tests of the set-based cycle batches: a
 * tenant (customer and user rows), products, a wallet persisted from a `WalletState` (wallet row,
 * statements, events), and the state read back.
 */
import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { CreditEvent, CreditProductRules, HoldClosure, Statement, WalletState } from "../../src/domain/credit/index.js";
import { nextCutDate, notificationPayload, startOfUtcDay } from "../../src/domain/credit/index.js";

/** Inserts a customer and one user of it; returns the user id. */
export async function seedTenant(em: EntityManager, customerId: string): Promise<string> {
  const now = new Date();
  await em.execute(
    `insert into customer (customer_id, email, account_type, account_role, account_purpose, first_name, last_name, phone_country_code,
       phone_number, business, status, is_active, created_at, updated_at)
     values (?, ?, 'business', 'owner', 'credit', 'Test', 'Tenant', 'US', '2025550143', '{}', 'active', true, ?, ?)`,
    [customerId, `ops@${customerId}.example`, now, now],
  );
  const userId = randomUUID();
  await em.execute(
    `insert into app_user (user_id, customer_id, account_type, account_role, account_purpose, first_name, last_name, email, email_normalized,
       phone_country_code, phone_number, phone_e164, status, verification_status, is_active, individual, created_at, updated_at)
     values (?, ?, 'individual', 'third', 'credit', 'Jane', 'Doe', ?, ?, 'US', '2025550143', '+12025550143', 'active', 'verified', true, '{}', ?, ?)`,
    [userId, customerId, `jane@${customerId}.example`, `jane@${customerId}.example`, now, now],
  );
  return userId;
}

/** Inserts a credit product with the engine's rules; returns its id. */
export async function insertProduct(em: EntityManager, customerId: string, code: string, r: CreditProductRules): Promise<string> {
  const id = randomUUID();
  const now = new Date();
  await em.execute(
    `insert into credit_product (id, customer_id, code, revolving, compound, cut_frequency, fixed_interest_amount, base_interest_rate,
       base_minimum_payment_rate, fixed_minimum_payment_amount, capital_interest_split, grace_period, variable_specs, morosidad_rate,
       base_interest_morosidad, interest_accrual_method, daily_rate_divisor, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [id, customerId, code, r.revolving, r.compound, r.cutFrequency, r.fixedInterestAmount, String(r.baseInterestRate), String(r.baseMinimumPaymentRate),
      r.fixedMinimumPaymentAmount, String(r.capitalInterestSplit), r.gracePeriod, r.variableSpecs, String(r.morosidadRate), r.baseInterestMorosidad,
      r.interestAccrualMethod, r.dailyRateDivisor, now, now],
  );
  return id;
}

/** The last daily close (00:00 UTC) in (createdAt, asOf], or null. */
export function lastCloseOf(s: Pick<WalletState, "createdAt" | "asOf">): Date | null {
  const close = startOfUtcDay(s.asOf);
  return close.getTime() > s.createdAt.getTime() ? close : null;
}

/** Where a wallet lives: its tenant, user, product (with the rules the engine reads). */
export interface WalletHome {
  customerId: string;
  userId: string;
  productId: string;
  product: CreditProductRules;
}

/**
 * Writes `state` as the wallet's row (insert or overwrite, `amount_held` included), its statements
 * (insert or overwrite by (wallet, cut)), its open holds (`credit_authorization` rows `approved`,
 * merchant `seed`, idempotency key = the authorization id; inserted once), the holds `closed` by the
 * step (status, amounts and `closed_at` of the engine's closure) and `events` (inserted), as an
 * operation endpoint persisting the engine's result would (docs/decisions/credit.md "Authorizations").
 */
export async function persistWallet(
  em: EntityManager,
  home: WalletHome,
  state: WalletState,
  events: readonly CreditEvent[] = [],
  closed: readonly HoldClosure[] = [],
): Promise<void> {
  const s = state;
  const pending = s.pendingSpecs === null ? null : JSON.stringify({ ...s.pendingSpecs, requestedAt: s.asOf.toISOString() });
  const now = new Date();
  await em.execute(
    `insert into credit_wallet (wallet_id, customer_id, user_id, product_id, currency, description, status, status_before_default, credit_limit,
       available_amount, principal_outstanding, interest_outstanding, first_cut_date, time, expires_at, cycle_start, sum_of_daily_balance,
       last_close_at, next_cut_at, interest_rate_nominal, interest_rate_moroso, fixed_interest_nominal, fixed_interest_moroso,
       minimum_payment_rate, fixed_minimum_payment, specs_overridden, pending_specs, sequence, as_of, created_at, updated_at, amount_held)
     values (?, ?, ?, ?, 'USD', null, ?, ?, ?, ?, ?, ?, ?, null, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (wallet_id) do update set status = excluded.status, status_before_default = excluded.status_before_default,
       credit_limit = excluded.credit_limit, available_amount = excluded.available_amount, principal_outstanding = excluded.principal_outstanding,
       interest_outstanding = excluded.interest_outstanding, cycle_start = excluded.cycle_start, sum_of_daily_balance = excluded.sum_of_daily_balance,
       last_close_at = excluded.last_close_at, next_cut_at = excluded.next_cut_at, interest_rate_nominal = excluded.interest_rate_nominal,
       interest_rate_moroso = excluded.interest_rate_moroso, fixed_interest_nominal = excluded.fixed_interest_nominal,
       fixed_interest_moroso = excluded.fixed_interest_moroso, minimum_payment_rate = excluded.minimum_payment_rate,
       fixed_minimum_payment = excluded.fixed_minimum_payment, specs_overridden = excluded.specs_overridden, pending_specs = excluded.pending_specs,
       sequence = excluded.sequence, as_of = excluded.as_of, updated_at = excluded.updated_at, amount_held = excluded.amount_held`,
    [s.walletId, home.customerId, home.userId, home.productId, s.status, s.statusBeforeDefault, s.limit, s.availableAmount, s.principalOutstanding,
      s.interestOutstanding, s.firstCutDate, s.expiresAt, s.cycleStart, s.sumOfDailyBalance, lastCloseOf(s), nextCutDate(s, home.product.cutFrequency),
      String(s.interestSpecs.interestRateNominal), String(s.interestSpecs.interestRateMoroso), s.interestSpecs.fixedInterestNominal,
      s.interestSpecs.fixedInterestMoroso, String(s.minimumPaymentSpecs.minimumPaymentRate), s.minimumPaymentSpecs.fixedMinimumPayment,
      s.specsOverridden, pending, s.sequence, s.asOf, s.createdAt, now, s.amountHeld],
  );
  for (const st of s.statements) await persistStatement(em, s.walletId, st);
  for (const h of s.holds) {
    await em.execute(
      `insert into credit_authorization (authorization_id, wallet_id, customer_id, status, amount, merchant_name, idempotency_key, expires_at, created_at)
       values (?, ?, ?, 'approved', ?, 'seed', ?, ?, ?) on conflict (authorization_id) do nothing`,
      [h.authorizationId, s.walletId, home.customerId, h.amount, h.authorizationId, h.expiresAt, h.createdAt],
    );
  }
  for (const c of closed) {
    await em.execute(
      `update credit_authorization set status = ?, captured_amount = ?, released_amount = ?, closed_at = ? where authorization_id = ? and status = 'approved'`,
      [c.kind, c.capturedAmount, c.releasedAmount, c.at, c.authorizationId],
    );
  }
  for (const e of events) {
    await em.execute(
      `insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, unapplied_amount, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [randomUUID(), e.walletId, home.customerId, e.sequence, e.type, e.amount, e.direction, e.affectsBalance, JSON.stringify(e.walletDetails_after), e.unappliedAmount ?? null, e.at],
    );
  }
}

async function persistStatement(em: EntityManager, walletId: string, st: Statement): Promise<void> {
  await em.execute(
    `insert into credit_statement (id, wallet_id, ordinal, cut_date, cycle_start, days_in_cycle, sum_of_daily_balance, principal_at_cut,
       interest_outstanding_at_cut, interest_accrual_method, compound, interest_basis, interest_rate_nominal, daily_rate_divisor,
       fixed_interest_nominal, minimum_payment_rate, fixed_minimum_payment, interest_generated, minimum_payment, payment_due_date,
       paid_in_cycle, status, interest_applied, interest_applied_at, penal_interest, interest_rate_moroso, fixed_interest_moroso, cured_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (wallet_id, cut_date) do update set paid_in_cycle = excluded.paid_in_cycle, status = excluded.status,
       interest_applied = excluded.interest_applied, interest_applied_at = excluded.interest_applied_at, penal_interest = excluded.penal_interest,
       interest_rate_moroso = excluded.interest_rate_moroso, fixed_interest_moroso = excluded.fixed_interest_moroso, cured_at = excluded.cured_at`,
    [randomUUID(), walletId, st.index, st.cutDate, st.cycleStart, st.daysInCycle, st.sumOfDailyBalance, st.principalAtCut, st.interestOutstandingAtCut,
      st.interestAccrualMethod, st.compound, st.interestBasis, String(st.interestRateNominal), st.dailyRateDivisor, st.fixedInterestNominal,
      String(st.minimumPaymentRate), st.fixedMinimumPayment, st.interestGenerated, st.minimumPayment, st.paymentDueDate, st.paidInCycle, st.status,
      st.interestApplied, st.interestAppliedAt, st.penalInterest, st.interestRateMoroso === null ? null : String(st.interestRateMoroso),
      st.fixedInterestMoroso, st.curedAt],
  );
}

type Row = Record<string, unknown>;
const num = (v: unknown): number => Number(v);
const date = (v: unknown): Date => new Date(v as string);
const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(v as string));

/** A wallet read back from the database: the engine state plus the stored-only columns. */
export interface StoredWallet {
  state: WalletState;
  lastCloseAt: Date | null;
  nextCutAt: Date | null;
}

/** Reads the wallet row and its statements back into an engine `WalletState`. @throws when the wallet does not exist. */
export async function loadWallet(em: EntityManager, walletId: string): Promise<StoredWallet> {
  const [w] = await em.execute<Row[]>(`select * from credit_wallet where wallet_id = ?`, [walletId]);
  if (!w) throw new Error(`no wallet ${walletId}`);
  const rows = await em.execute<Row[]>(`select * from credit_statement where wallet_id = ? order by ordinal`, [walletId]);
  const holdRows = await em.execute<Row[]>(`select * from credit_authorization where wallet_id = ? and status = 'approved' order by created_at, authorization_id`, [walletId]);
  const pending = w.pending_specs as { interestSpecs: WalletState["interestSpecs"]; minimumPaymentSpecs: WalletState["minimumPaymentSpecs"] } | null;
  const statements: Statement[] = rows.map((r) => ({
    index: num(r.ordinal),
    cutDate: date(r.cut_date),
    cycleStart: date(r.cycle_start),
    cycleEnd: date(r.cut_date),
    daysInCycle: num(r.days_in_cycle),
    sumOfDailyBalance: num(r.sum_of_daily_balance),
    principalAtCut: num(r.principal_at_cut),
    interestOutstandingAtCut: num(r.interest_outstanding_at_cut),
    interestAccrualMethod: r.interest_accrual_method as "ADB" | "BAC",
    compound: r.compound as boolean,
    interestBasis: num(r.interest_basis),
    interestRateNominal: num(r.interest_rate_nominal),
    dailyRateDivisor: num(r.daily_rate_divisor) as 360 | 365,
    fixedInterestNominal: num(r.fixed_interest_nominal),
    minimumPaymentRate: num(r.minimum_payment_rate),
    fixedMinimumPayment: num(r.fixed_minimum_payment),
    interestGenerated: num(r.interest_generated),
    minimumPayment: num(r.minimum_payment),
    paymentDueDate: date(r.payment_due_date),
    paidInCycle: num(r.paid_in_cycle),
    status: r.status as Statement["status"],
    interestApplied: num(r.interest_applied),
    interestAppliedAt: dateOrNull(r.interest_applied_at),
    penalInterest: num(r.penal_interest),
    interestRateMoroso: r.interest_rate_moroso === null ? null : num(r.interest_rate_moroso),
    fixedInterestMoroso: r.fixed_interest_moroso === null ? null : num(r.fixed_interest_moroso),
    curedAt: dateOrNull(r.cured_at),
  }));
  const state: WalletState = {
    walletId,
    status: w.status as WalletState["status"],
    statusBeforeDefault: (w.status_before_default ?? null) as WalletState["statusBeforeDefault"],
    limit: num(w.credit_limit),
    availableAmount: num(w.available_amount),
    principalOutstanding: num(w.principal_outstanding),
    interestOutstanding: num(w.interest_outstanding),
    amountHeld: num(w.amount_held),
    createdAt: date(w.created_at),
    firstCutDate: date(w.first_cut_date),
    expiresAt: dateOrNull(w.expires_at),
    cycleStart: date(w.cycle_start),
    sumOfDailyBalance: num(w.sum_of_daily_balance),
    interestSpecs: {
      interestRateNominal: num(w.interest_rate_nominal),
      interestRateMoroso: num(w.interest_rate_moroso),
      fixedInterestNominal: num(w.fixed_interest_nominal),
      fixedInterestMoroso: num(w.fixed_interest_moroso),
    },
    minimumPaymentSpecs: { minimumPaymentRate: num(w.minimum_payment_rate), fixedMinimumPayment: num(w.fixed_minimum_payment) },
    specsOverridden: w.specs_overridden as boolean,
    pendingSpecs: pending === null ? null : { interestSpecs: pending.interestSpecs, minimumPaymentSpecs: pending.minimumPaymentSpecs },
    sequence: num(w.sequence),
    asOf: date(w.as_of),
    statements,
    holds: holdRows.map((h) => ({ authorizationId: h.authorization_id as string, amount: num(h.amount), createdAt: date(h.created_at), expiresAt: date(h.expires_at) })),
  };
  return { state, lastCloseAt: dateOrNull(w.last_close_at), nextCutAt: dateOrNull(w.next_cut_at) };
}

/** The wallet's events in sequence order, as notification payloads plus the instant `at`. */
export async function loadEvents(em: EntityManager, walletId: string): Promise<(ReturnType<typeof notificationPayload> & { at: Date })[]> {
  const rows = await em.execute<Row[]>(`select * from credit_event where wallet_id = ? order by sequence`, [walletId]);
  return rows.map((r) => ({
    walletId: r.wallet_id as string,
    type: r.type as CreditEvent["type"],
    amount: num(r.amount),
    direction: r.direction as CreditEvent["direction"],
    affectsBalance: r.affects_balance as boolean,
    walletDetails_after: (typeof r.wallet_details_after === "string" ? JSON.parse(r.wallet_details_after) : r.wallet_details_after) as CreditEvent["walletDetails_after"],
    sequence: num(r.sequence),
    // only `Reembolso` has it (docs/decisions/cards.md "Refunds")
    ...(r.unapplied_amount === null || r.unapplied_amount === undefined ? {} : { unappliedAmount: num(r.unapplied_amount) }),
    at: date(r.created_at),
  }));
}

/** An engine event as `loadEvents` returns a stored one. */
export function eventView(e: CreditEvent): ReturnType<typeof notificationPayload> & { at: Date } {
  return { ...notificationPayload(e), at: e.at };
}

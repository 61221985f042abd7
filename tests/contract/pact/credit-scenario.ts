/**
 * The example scenario of the credit notification message pact (credit-notifications.test.ts) and
 * of the receiver's own tests (credit-receiver.test.ts): a wallet of the golden product through a
 * cut with an interest change, default, cure and a limit raise, then card authorizations: one
 * approved and partially captured (the rest released), one declined for want of credit, one approved
 * and voided (docs/decisions/credit.md, "Authorizations"), as the notifications it yields, with the
 * Pact templates (matchers) and the plain bodies of each.
 */
import { MatchersV3 } from "@pact-foundation/pact";
import type { NotificationType, WalletDetails } from "./credit-receiver.js";

const { like, integer, number, equal } = MatchersV3;

/** The wallet id of the consumer's examples. */
export const EXAMPLE_WALLET = "5b1e7c2a-8d3f-4a6b-9c0d-1e2f3a4b5c6d";

/** The interest specs before the override (36 %) and after it (24 %); the minimum payment specs. */
export const SPECS_36 = { interestRateNominal: 36, interestRateMoroso: 12, fixedInterestNominal: 0, fixedInterestMoroso: 500 };
export const SPECS_24 = { ...SPECS_36, interestRateNominal: 24 };
export const MINIMUM = { minimumPaymentRate: 10, fixedMinimumPayment: 1000 };
/** `walletDetails_after` of principal `ao`, interest `io` and open holds `held` (cents); the overdraft is max(0, debt + holds − limit) (spec/credit/notifications.tsp). */
export const details = (ao: number, io: number, limit = 100000, interestSpecs = SPECS_24, held = 0): WalletDetails => ({
  principal_outstanding: ao,
  interest_accrued: io,
  totalDebt: ao + io,
  limit,
  amountOverdraft: Math.max(0, ao + io + held - limit),
  amountHeld: held,
  interestSpecs,
  minimumPaymentSpecs: MINIMUM,
});

/** One notification of the example: the values the consumer's examples use. */
export interface Step {
  type: NotificationType;
  amount: number;
  direction: "debit" | "credit";
  affectsBalance: boolean;
  sequence: number;
  after: WalletDetails;
}

/**
 * The card authorizations of the scenario, after the limit raise (the wallet is back in good
 * standing: limit 150000, principal 26900, available 123100): {@link AUTH_APPROVED} approved, then
 * captured in part ({@link AUTH_CAPTURED}; the rest released), {@link AUTH_DECLINED} requested
 * above the available amount (declined `INSUFFICIENT_CREDIT`), {@link AUTH_VOIDED} approved then voided.
 */
export const AUTH_APPROVED = 20000;
export const AUTH_CAPTURED = 15000;
export const AUTH_DECLINED = 150000;
export const AUTH_VOIDED = 10000;
const CAPTURED_PRINCIPAL = 26900 + AUTH_CAPTURED;

/** The scenario's notifications in sequence order; each type's first one is a message of the pact. */
export const STEPS: Step[] = [
  { type: "Interes Nominal Calculado", amount: 900, direction: "debit", affectsBalance: false, sequence: 1, after: details(30000, 0, 100000, SPECS_36) },
  { type: "Cambio Interest ejecutado", amount: 0, direction: "credit", affectsBalance: false, sequence: 2, after: details(30000, 0) },
  { type: "Interes Nominal Aplicado", amount: 900, direction: "debit", affectsBalance: true, sequence: 3, after: details(30000, 900) },
  { type: "Interes Moroso Calculado", amount: 800, direction: "debit", affectsBalance: false, sequence: 4, after: details(30000, 900) },
  { type: "Interes Moroso Aplicado", amount: 800, direction: "debit", affectsBalance: true, sequence: 5, after: details(30000, 1700) },
  { type: "Interes moroso ejecutado", amount: 800, direction: "debit", affectsBalance: false, sequence: 6, after: details(30000, 1700) },
  { type: "Reporte de Pago", amount: 3000, direction: "credit", affectsBalance: true, sequence: 7, after: details(28500, 200) },
  { type: "Interes cancelado", amount: 800, direction: "credit", affectsBalance: false, sequence: 9, after: details(26900, 0) },
  { type: "Credito Reintegrado", amount: 4800, direction: "credit", affectsBalance: true, sequence: 10, after: details(26900, 0) },
  { type: "Cambio de Limite", amount: 50000, direction: "credit", affectsBalance: true, sequence: 11, after: details(26900, 0, 150000) },
  { type: "Autorizacion Aprobada", amount: AUTH_APPROVED, direction: "debit", affectsBalance: false, sequence: 12, after: details(26900, 0, 150000, SPECS_24, AUTH_APPROVED) },
  { type: "Autorizacion Capturada", amount: AUTH_CAPTURED, direction: "debit", affectsBalance: true, sequence: 13, after: details(CAPTURED_PRINCIPAL, 0, 150000, SPECS_24, AUTH_APPROVED - AUTH_CAPTURED) },
  { type: "Autorizacion Liberada", amount: AUTH_APPROVED - AUTH_CAPTURED, direction: "credit", affectsBalance: false, sequence: 14, after: details(CAPTURED_PRINCIPAL, 0, 150000) },
  { type: "Autorizacion Rechazada", amount: AUTH_DECLINED, direction: "debit", affectsBalance: false, sequence: 15, after: details(CAPTURED_PRINCIPAL, 0, 150000) },
];

/**
 * The wallet's last two notifications, not messages of the pact (their types came earlier): the
 * approval of {@link AUTH_VOIDED} and its release by the void. The wallet's stream ends with the last.
 */
export const LATER_STEPS: Step[] = [
  { type: "Autorizacion Aprobada", amount: AUTH_VOIDED, direction: "debit", affectsBalance: false, sequence: 16, after: details(CAPTURED_PRINCIPAL, 0, 150000, SPECS_24, AUTH_VOIDED) },
  { type: "Autorizacion Liberada", amount: AUTH_VOIDED, direction: "credit", affectsBalance: false, sequence: 17, after: details(CAPTURED_PRINCIPAL, 0, 150000) },
];

export const description = (type: NotificationType) => `a '${type}' credit notification`;

/** `walletDetails_after` with matchers: integer cents, numeric rates; every field required. */
export const detailsTemplate = (d: WalletDetails) => ({
  principal_outstanding: integer(d.principal_outstanding),
  interest_accrued: integer(d.interest_accrued),
  totalDebt: integer(d.totalDebt),
  limit: integer(d.limit),
  amountOverdraft: integer(d.amountOverdraft),
  amountHeld: integer(d.amountHeld),
  interestSpecs: {
    interestRateNominal: number(d.interestSpecs.interestRateNominal),
    interestRateMoroso: number(d.interestSpecs.interestRateMoroso),
    fixedInterestNominal: integer(d.interestSpecs.fixedInterestNominal),
    fixedInterestMoroso: integer(d.interestSpecs.fixedInterestMoroso),
  },
  minimumPaymentSpecs: {
    minimumPaymentRate: number(d.minimumPaymentSpecs.minimumPaymentRate),
    fixedMinimumPayment: integer(d.minimumPaymentSpecs.fixedMinimumPayment),
  },
});

/**
 * The message of a step. `type`, `direction` and `affectsBalance` are fixed per type by the spec
 * (spec/credit/notifications.tsp table), so `equal` pins them; amounts, `sequence` and the
 * details are integers (cents) and numbers (rates) of any value; `walletId` any string.
 * `Cambio Interest ejecutado` always carries amount 0.
 */
export const messageTemplate = (s: Step) => ({
  walletId: like(EXAMPLE_WALLET),
  type: equal(s.type),
  amount: s.type === "Cambio Interest ejecutado" ? equal(0) : integer(s.amount),
  direction: equal(s.direction),
  affectsBalance: equal(s.affectsBalance),
  walletDetails_after: detailsTemplate(s.after),
  sequence: integer(s.sequence),
});

/** The example body of a step, without matchers. */
export const exampleBody = (s: Step) => ({
  walletId: EXAMPLE_WALLET,
  type: s.type,
  amount: s.amount,
  direction: s.direction,
  affectsBalance: s.affectsBalance,
  walletDetails_after: s.after,
  sequence: s.sequence,
});

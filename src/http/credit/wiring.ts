/**
 * Credit core wiring (docs/decisions/credit.md "Operations and who calls them"): who may call each operation, and the handlers. Tenant
 * operations take the owner API key in `x-api-key`; operator operations (credit products) the
 * master key (a credential of the other kind answers 403). An operation left out of the implemented
 * list answers 501 (`creditNotImplemented`; docs/contract.md "What the documents declare besides the
 * operations").
 */
import type { operations } from "../../../generated/types/credit.js";
import type { Access } from "../surface.js";
import { creditHandlers } from "./handlers.js";

export { creditHandlers };

const TENANT = ["owner"] as const;
const OPERATOR = ["master"] as const;

/** Access of every credit core operation. */
export const creditAccess: { [K in keyof operations]: Access } = {
  createCreditProduct: OPERATOR,
  updateCreditProductSettings: OPERATOR,
  listCreditProducts: TENANT,
  getCreditProduct: TENANT,
  notificationsEnlist: TENANT,
  getNotificationsSettings: TENANT,
  recoverCreditNotifications: TENANT,
  listCreditNotificationDeliveries: TENANT,
  createCreditWallet: TENANT,
  listCreditWallets: TENANT,
  getCreditWallet: TENANT,
  reportPayCredit: TENANT,
  payOutCredit: TENANT,
  changeWalletLimit: TENANT,
  changeInterestCreditCapital: TENANT,
  blockCreditWallet: TENANT,
  unblockCreditWallet: TENANT,
  dissolveCreditWallet: TENANT,
  listCreditWalletStatements: TENANT,
  listCreditWalletEvents: TENANT,
  authorizeCredit: TENANT,
  captureCreditAuthorization: TENANT,
  voidCreditAuthorization: TENANT,
  refundCreditAuthorization: TENANT,
  getCreditAuthorization: TENANT,
  listCreditAuthorizations: TENANT,
  issueCard: TENANT,
  getCard: TENANT,
  listWalletCards: TENANT,
  updateCard: TENANT,
  authorizeCard: TENANT,
  getSandboxClock: TENANT,
  setSandboxClock: TENANT,
  advanceSandboxClock: TENANT,
};

/** Credit operations built (src/http/credit/handlers.ts, wallet-handlers.ts, authorization-handlers.ts, card-handlers.ts). */
const IMPLEMENTED: readonly (keyof operations)[] = [
  "createCreditProduct",
  "updateCreditProductSettings",
  "listCreditProducts",
  "getCreditProduct",
  "notificationsEnlist",
  "getNotificationsSettings",
  "recoverCreditNotifications",
  "listCreditNotificationDeliveries",
  "getSandboxClock",
  "setSandboxClock",
  "advanceSandboxClock",
  "createCreditWallet",
  "getCreditWallet",
  "listCreditWallets",
  "payOutCredit",
  "reportPayCredit",
  "changeWalletLimit",
  "changeInterestCreditCapital",
  "blockCreditWallet",
  "unblockCreditWallet",
  "dissolveCreditWallet",
  "listCreditWalletStatements",
  "listCreditWalletEvents",
  "authorizeCredit",
  "captureCreditAuthorization",
  "voidCreditAuthorization",
  "refundCreditAuthorization",
  "getCreditAuthorization",
  "listCreditAuthorizations",
  "issueCard",
  "getCard",
  "listWalletCards",
  "updateCard",
  "authorizeCard",
];

/** The other credit operations answer 501 `NOT_IMPLEMENTED` (docs/contract.md "What the documents declare besides the operations"). */
export const creditNotImplemented = (Object.keys(creditAccess) as (keyof operations)[]).filter((id) => !IMPLEMENTED.includes(id));

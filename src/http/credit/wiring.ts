/**
 * Credit core wiring (decisions.md §6): who may call each operation, and the handlers. Tenant
 * operations take the owner API key in `x-api-key`; operator operations (credit products) the
 * master key. The credit operations are built by the credit issue; until then they answer 501.
 */
import type { operations } from "../../../generated/types/credit.js";
import type { Access } from "../surface.js";
import type { HandlerMap } from "../types.js";

const TENANT = ["owner"] as const;
const OPERATOR = ["master"] as const;

/** Access of every credit core operation. */
export const creditAccess: { [K in keyof operations]: Access } = {
  createCreditProduct: OPERATOR,
  updateCreditProductSettings: OPERATOR,
  listCreditProducts: ["owner", "master"],
  getCreditProduct: ["owner", "master"],
  notificationsEnlist: TENANT,
  getNotificationsSettings: TENANT,
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
  getSandboxClock: TENANT,
  setSandboxClock: TENANT,
  advanceSandboxClock: TENANT,
};

/** Implemented credit handlers (none yet). */
export const creditHandlers: HandlerMap<operations> = {};

/** Every credit operation answers 501 `NOT_IMPLEMENTED` until the credit issue lands. */
export const creditNotImplemented = Object.keys(creditAccess) as (keyof operations)[];

/**
 * Who may call each platform operation (reference: "Authentication"; docs/decisions/credentials-and-tokens.md
 * "401 or 403"). A valid
 * credential of another kind answers 403 `FORBIDDEN`; a missing or bad one 401 `UNAUTHORIZED`.
 */
import type { operations } from "../../../generated/types/platform.js";
import { DomainError } from "../../domain/errors.js";
import type { Principal } from "../../modules/identity/auth.js";
import type { Access } from "../surface.js";
import type { Call } from "../types.js";

const SESSION = ["operator-session", "customer-session"] as const;
const OWNER = ["owner"] as const;
const OWNER_OR_USER = ["owner", "user"] as const;

/** Access of every platform operation. */
export const platformAccess: { [K in keyof operations]: Access } = {
  createSession: "anyone",
  createCustomer: ["operator-session"],
  listCustomers: ["master"],
  getCustomer: SESSION,
  updateCustomer: SESSION,
  deleteCustomer: SESSION,
  generateCredentials: SESSION,
  listCredentials: SESSION,
  deleteCredential: SESSION,
  createEmailPoller: SESSION,
  getEmailPoller: SESSION,
  updateEmailPoller: SESSION,
  deleteEmailPoller: SESSION,
  verifyEmailPoller: SESSION,
  enableEmailPoller: SESSION,
  disableEmailPoller: SESSION,
  createWebhook: SESSION,
  getWebhook: SESSION,
  updateWebhook: SESSION,
  deleteWebhook: SESSION,
  verifyWebhook: SESSION,
  rotateWebhookSecret: SESSION,
  listWebhookDeliveries: SESSION,
  retryWebhookDelivery: SESSION,
  recoverWebhookDeliveries: SESSION,
  createInboundWebhook: SESSION,
  getInboundWebhook: SESSION,
  deleteInboundWebhook: SESSION,
  receiveInboundPin: "signature",
  createUser: OWNER,
  listUsers: OWNER,
  getUser: OWNER,
  updateUser: OWNER,
  deleteUser: OWNER,
  activateUser: OWNER,
  deactivateUser: OWNER,
  createUserToken: OWNER,
  createWallet: OWNER_OR_USER,
  listWallets: OWNER_OR_USER,
  getWalletBalance: OWNER_OR_USER,
  listWalletTransactions: OWNER_OR_USER,
  lockWallet: OWNER,
  unlockWallet: OWNER,
  deactivateWallet: OWNER,
  suspendWallet: ["operator-session"],
  reinstateWallet: ["operator-session"],
  initiateWithdrawal: OWNER_OR_USER,
  confirmWithdrawal: OWNER_OR_USER,
  resendWithdrawalCode: OWNER_OR_USER,
  cancelWithdrawal: OWNER_OR_USER,
  getWithdrawal: OWNER_OR_USER,
  listWithdrawals: OWNER_OR_USER,
  initiateFiatWithdrawal: OWNER_OR_USER,
  confirmFiatWithdrawal: OWNER_OR_USER,
  resendFiatWithdrawalCode: OWNER_OR_USER,
  cancelFiatWithdrawal: OWNER_OR_USER,
  getFiatWithdrawal: OWNER_OR_USER,
  listFiatWithdrawals: OWNER_OR_USER,
  createTransfer: OWNER_OR_USER,
  getTransfer: OWNER_OR_USER,
  listWalletTransfers: OWNER_OR_USER,
  createQuote: OWNER_OR_USER,
  createOrder: OWNER_OR_USER,
  getOrder: OWNER_OR_USER,
  listOrders: OWNER_OR_USER,
  getLimits: SESSION,
  setLimits: SESSION,
  getUserLimits: OWNER_OR_USER,
  addAddress: OWNER_OR_USER,
  listAddresses: OWNER_OR_USER,
  deleteAddress: OWNER_OR_USER,
  addBankAccount: OWNER_OR_USER,
  listBankAccounts: OWNER_OR_USER,
  deleteBankAccount: OWNER_OR_USER,
  listCurrencies: OWNER,
  updateCurrency: ["operator-session", "master"],
  getSepaPayoutFile: SESSION,
  listChains: ["operator-session"],
  listTradingPairs: OWNER,
  createSandboxDeposit: OWNER,
  listSandboxMail: OWNER,
  setSandboxPrice: OWNER,
};

/**
 * Path scope checks: a customer session acts only on its own `{customer_id}`; a user token only on
 * its own `{user_id}` (docs/decisions/credentials-and-tokens.md "The four credentials", reference: "a user token can act only on its own…").
 * @throws DomainError FORBIDDEN (403).
 */
export function platformScope(_operationId: string, params: Record<string, string>, call: Call<unknown>): void {
  const principal = call.principal as Principal | null;
  if (principal?.kind === "customer-session" && params.customer_id !== undefined && params.customer_id !== principal.customerId) {
    throw new DomainError("FORBIDDEN", "A customer session can only act on its own customer.");
  }
  if (principal?.kind === "user" && params.user_id !== undefined && params.user_id.toLowerCase() !== principal.userId) {
    throw new DomainError("FORBIDDEN", "A user token can only act on its own user.");
  }
}

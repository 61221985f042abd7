/**
 * What differs between the two paths of a withdrawal (docs/decisions/withdrawals.md,
 * docs/decisions/fiat.md "Fiat withdrawals"); everything else (the code, the lockout, the
 * Idempotency-Key, the caps, the hold, cancel) is the service's one path.
 * - crypto: an address on one of the currency's networks; confirm sends it through the provider.
 * - fiat: one of the user's bank accounts on the currency's rail (its network, `networks/sepa`,
 *   `networks/ach`); confirm submits a payout to the rail (src/modules/payouts/rail.ts), which
 *   settles or is returned later (./payouts.ts).
 */
import { DomainError } from "../../domain/errors.js";
import { format8, money, type Money } from "../../domain/money.js";
import { FIAT_DECIMALS, type WithdrawalType } from "../../domain/withdrawals.js";
import type { Db, Tx } from "../../db/sql.js";
import type { CustodyProvider } from "../../providers/provider.js";
import type { SendQueue } from "../chains/send-queue.js";
import type { BankAccountService } from "../bank-accounts/service.js";
import type { LedgerService } from "../ledger/service.js";
import type { PayoutRail } from "../payouts/rail.js";
import { checkAmount, type LiveNetworks, type WalletService } from "../wallets/service.js";
import { destinationNetworks, pathCurrency } from "./destination.js";
import { completeWithdrawal, withdrawalTransaction, type LockedWithdrawal, type WithdrawalUser } from "./repository.js";
import type { WithdrawalGuards } from "./types.js";
import type { FiatInitiateInput, InitiateInput } from "./views.js";

/** What the fiat path needs besides the crypto path's: the user's bank accounts and the rail. */
export interface FiatPath {
  bankAccounts: Pick<BankAccountService, "usableBankAccount">;
  rail: PayoutRail;
}

/** The services both paths ask. */
export interface PathDeps {
  /** The queue of sends on the live networks (src/modules/chains/send-queue.ts); none without a live network. */
  sends: Pick<SendQueue, "isLive" | "queue"> | undefined;
  /** Where the bank account is read (the pool, before the initiate's transaction). */
  db: Db;
  provider: CustodyProvider;
  ledger: LedgerService;
  wallets: WalletService;
  guards: WithdrawalGuards;
  fiat: FiatPath;
}

/** An Initiate body with its path. */
export type InitiateBody = { type: "crypto"; input: InitiateInput } | { type: "fiat"; input: FiatInitiateInput };

/** Where a withdrawal goes, once its path's checks passed. */
export interface Destination {
  type: WithdrawalType;
  /** Lower-case currency code. */
  currency: string;
  amount: Money;
  /** The networks the money may leave on: those of the currency where the address is valid, or the fiat rail. */
  networks: string[];
  /** The address, or the bank account's mask. */
  address: string;
  /** The bank account (fiat), else null. */
  bankAccountId: string | null;
}

/**
 * The checks of an initiate that depend on its path, in the order of docs/decisions/withdrawals.md
 * "Initiate" and docs/decisions/fiat.md "Fiat withdrawals":
 * - crypto: currency (a crypto one, withdrawable, switched on); amount positive, within the
 *   currency's precision, at least the minimum; address valid on one of the currency's networks
 *   that can hold it (a live network holds its native coin and configured tokens only:
 *   docs/decisions/live-chains.md "Deposit addresses"); the allowlist.
 * - fiat: currency (a fiat one, withdrawable, switched on); amount positive, at least the minimum,
 *   at most 2 decimals; the bank account (BankAccountService.usableBankAccount).
 * @throws DomainError INVALID_CURRENCY, UNSUPPORTED_CURRENCY, CURRENCY_NOT_ACTIVE, AMOUNT_MUST_BE_POSITIVE,
 *   INVALID_AMOUNT, MINIMUM_AMOUNT_NOT_MET, INVALID_CRYPTO_ADDRESS, UNSUPPORTED_CURRENCY (the address
 *   is valid only on live networks that do not hold the currency), INVALID_ADDRESS (allowlist),
 *   BANK_ACCOUNT_REQUIRED, INVALID_BANK_ACCOUNT (all 400).
 */
export async function checkDestination(d: PathDeps, user: WithdrawalUser, body: InitiateBody): Promise<Destination> {
  const currency = await pathCurrency(d.wallets, body.input.currency, body.type);
  await d.wallets.switches.assertOn(currency.code, "canWithdraw");
  const amount = money(body.input.amount);
  const minimum = (): void => {
    if (amount.lt(money(currency.minWithdrawal))) {
      throw new DomainError("MINIMUM_AMOUNT_NOT_MET", `The minimum ${currency.code} withdrawal is ${currency.minWithdrawal}.`, "amount");
    }
  };
  if (body.type === "crypto") {
    checkAmount(amount, currency);
    minimum();
    const networks = heldOn(d.wallets.live, currency.code, destinationNetworks(d.provider, currency, body.input.address));
    await d.guards.destinations.assertDestinationAllowed({ customerId: user.customerId, userId: user.userId, currency: currency.code, address: body.input.address, now: new Date() });
    return { type: "crypto", currency: currency.code, amount, networks, address: body.input.address, bankAccountId: null };
  }
  if (!amount.isFinite() || amount.lte(0)) throw new DomainError("AMOUNT_MUST_BE_POSITIVE", "The amount must be greater than zero.", "amount");
  minimum();
  if (amount.decimalPlaces() > FIAT_DECIMALS) throw new DomainError("INVALID_AMOUNT", `${currency.code} withdrawals have at most ${FIAT_DECIMALS} decimals.`, "amount");
  checkAmount(amount, currency);
  const account = await d.fiat.bankAccounts.usableBankAccount(d.db, {
    customerId: user.customerId,
    userId: user.userId,
    bankAccountId: body.input.bank_account_id,
    currency: currency.code,
  });
  const rail = currency.networks[0] as string; // withdrawable: it has one (pathCurrency)
  return { type: "fiat", currency: currency.code, amount, networks: [rail], address: account.accountMask, bankAccountId: account.bankAccountId };
}

/**
 * `networks` that can hold `currency`: a live network holds its native coin and configured tokens
 * only (docs/decisions/live-chains.md "Deposit addresses"), so the service could not send another.
 * @throws DomainError UNSUPPORTED_CURRENCY (400, field `currency`) when none of them can.
 */
function heldOn(live: LiveNetworks, currency: string, networks: string[]): string[] {
  const left = networks.filter((n) => live.holds(n, currency));
  if (left.length === 0) {
    throw new DomainError("UNSUPPORTED_CURRENCY", `${currency} is not held on ${networks.join(" or ")}, the live network${networks.length === 1 ? "" : "s"} of this address: only the native coin and the configured tokens are.`, "currency");
  }
  return left;
}

/**
 * PENDING → COMPLETED in `tx` (the row locked, the code right): sends the withdrawal on its path,
 * debits the held amount (held → the network's or rail's external account), and writes the
 * withdrawal's change with its `withdrawal` wallet transaction (the code voided). A fiat payout
 * is submitted to the rail first: a refusal throws, so the transaction rolls back and nothing is
 * debited, the code not used up, no attempt counted; accepted, `payout.state` is `submitted`.
 * A crypto withdrawal on a live network is not sent here: its send is queued in `tx`
 * (src/modules/chains/send-queue.ts), the node is not asked, and the sender job sends it
 * afterwards (docs/decisions/live-chains.md "Sends"); its wallet transaction's hash stays empty.
 * @throws DomainError CRYPTO_WITHDRAWAL_FAILED (the provider refused), FIAT_WITHDRAWAL_FAILED (the rail refused),
 *   UNSUPPORTED_CURRENCY, INVALID_AMOUNT (a live network that cannot send it; all 400);
 *   Error when a crypto withdrawal's wallet or address is missing (never deleted: a broken invariant, 500).
 */
export async function completeOnPath(d: PathDeps, tx: Tx, { withdrawal: w, source }: LockedWithdrawal): Promise<void> {
  const now = new Date();
  let hash: string;
  if (w.withdrawalType === "fiat") {
    const submission = await d.fiat.rail.submit({ withdrawalId: w.id, rail: w.network, currency: w.currency, amount: money(w.amount).toFixed(), bankAccountId: w.bankAccountId as string, memo: w.memo ?? null }, now);
    if (!submission.accepted) throw new DomainError("FIAT_WITHDRAWAL_FAILED", `The ${w.network} rail refused the payout (${submission.reason}); nothing was debited and the withdrawal is still PENDING.`);
    hash = submission.reference;
    w.payoutRail = w.network;
    w.payoutReference = submission.reference;
    w.payoutState = "submitted";
    w.payoutDueAt = submission.checkAt;
  } else {
    if (!source) throw new Error(`wallet ${w.walletId} or its ${w.currency} address on ${w.network} is missing`);
    if (d.sends?.isLive(w.network)) {
      await d.sends.queue(tx, { id: w.id, customerId: w.customerId, network: w.network, currency: w.currency, amount: money(w.amount).toFixed(), address: w.address }, now);
      hash = "";
    } else {
      ({ hash } = await d.provider.executeWithdrawal(tx, { vaultWalletId: source.vaultWalletId, network: w.network, currency: w.currency, amount: w.amount, address: w.address }));
    }
  }
  const amount = money(w.amount);
  const { entryId, after } = await d.ledger.post(tx, { kind: "debit", walletId: w.walletId, network: w.network, currency: w.currency, amount, reference: `withdrawal:${w.id}` });
  w.status = "COMPLETED";
  w.completedAt = now;
  w.txHash = hash;
  w.codeHash = null;
  const description = `Withdrawal of ${format8(amount)} ${w.currency.toUpperCase()} to ${w.address} on ${w.network}`;
  await completeWithdrawal(tx, w, withdrawalTransaction({ withdrawal: w, source }, { entryId, balanceAfter: after.balance.toFixed() }, { hash, description }, now));
}

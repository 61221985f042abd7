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
import type { BankAccountService } from "../bank-accounts/service.js";
import type { LedgerService } from "../ledger/service.js";
import type { PayoutRail } from "../payouts/rail.js";
import { checkAmount, type LiveNetworks, type WalletService } from "../wallets/service.js";
import { destinationNetworks, pathCurrency } from "./destination.js";
import { completeWithdrawal, type LockedWithdrawal, type WithdrawalUser } from "./repository.js";
import type { WithdrawalGuards } from "./types.js";
import type { FiatInitiateInput, InitiateInput } from "./views.js";

/** What the fiat path needs besides the crypto path's: the user's bank accounts and the rail. */
export interface FiatPath {
  bankAccounts: Pick<BankAccountService, "usableBankAccount">;
  rail: PayoutRail;
}

/** The services both paths ask. */
export interface PathDeps {
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
 *   currency's precision, at least the minimum; address valid on a network that is not live
 *   (sends on live networks are not built yet: docs/decisions/live-chains.md "Not built yet"); the allowlist.
 * - fiat: currency (a fiat one, withdrawable, switched on); amount positive, at least the minimum,
 *   at most 2 decimals; the bank account (BankAccountService.usableBankAccount).
 * @throws DomainError INVALID_CURRENCY, UNSUPPORTED_CURRENCY, CURRENCY_NOT_ACTIVE, AMOUNT_MUST_BE_POSITIVE,
 *   INVALID_AMOUNT, MINIMUM_AMOUNT_NOT_MET, INVALID_CRYPTO_ADDRESS, BAD_REQUEST (the address is
 *   valid on live networks only), INVALID_ADDRESS (allowlist), BANK_ACCOUNT_REQUIRED, INVALID_BANK_ACCOUNT (all 400).
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
    const networks = notLive(d.wallets.live, destinationNetworks(d.provider, currency, body.input.address));
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
 * `networks` without the live ones: the service does not send on a live network yet
 * (docs/decisions/live-chains.md "Not built yet"), and the sandbox must not pretend to.
 * @throws DomainError BAD_REQUEST (400, field `address`) when every one of them is live.
 */
function notLive(live: LiveNetworks, networks: string[]): string[] {
  const left = networks.filter((n) => !live.isLive(n));
  if (left.length === 0) {
    throw new DomainError("BAD_REQUEST", `On-chain sends on live networks are not built yet: this address is on ${networks.join(" or ")}, which ${networks.length === 1 ? "is" : "are"} live.`, "address");
  }
  return left;
}

/**
 * PENDING → COMPLETED in `tx` (the row locked, the code right): sends the withdrawal on its path,
 * debits the held amount (held → the network's or rail's external account), and writes the
 * withdrawal's change with its `withdrawal` wallet transaction (the code voided). A fiat payout
 * is submitted to the rail first: a refusal throws, so the transaction rolls back and nothing is
 * debited, the code not used up, no attempt counted; accepted, `payout.state` is `submitted`.
 * A crypto withdrawal on a network that became live after its initiate is refused the same way
 * (BAD_REQUEST; it stays PENDING until cancelled): the sandbox must not pretend to send there.
 * @throws DomainError CRYPTO_WITHDRAWAL_FAILED (the provider refused), FIAT_WITHDRAWAL_FAILED (the rail refused),
 *   BAD_REQUEST (a live network; all 400);
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
    if (d.wallets.live.isLive(w.network)) throw new DomainError("BAD_REQUEST", `On-chain sends on live networks are not built yet: ${w.network} became live after this withdrawal was initiated; cancel it.`);
    ({ hash } = await d.provider.executeWithdrawal(tx, { vaultWalletId: source.vaultWalletId, network: w.network, currency: w.currency, amount: w.amount, address: w.address }));
  }
  const amount = money(w.amount);
  const { entryId, after } = await d.ledger.post(tx, { kind: "debit", walletId: w.walletId, network: w.network, currency: w.currency, amount, reference: `withdrawal:${w.id}` });
  w.status = "COMPLETED";
  w.completedAt = now;
  w.txHash = hash;
  w.codeHash = null;
  await completeWithdrawal(tx, w, {
    walletId: w.walletId,
    customerId: w.customerId,
    network: w.network,
    address: source?.address ?? w.address,
    amount: amount.toFixed(),
    balanceAfter: after.balance.toFixed(),
    hash,
    memo: w.memo ?? "",
    description: `Withdrawal of ${format8(amount)} ${w.currency.toUpperCase()} to ${w.address} on ${w.network}`,
    orderId: w.id,
    idempotencyId: w.idempotencyKey,
    journalEntryId: entryId,
    createdAt: now,
  });
}

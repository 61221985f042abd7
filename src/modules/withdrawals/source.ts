/**
 * The wallet an initiate takes the money from (docs/decisions/withdrawals.md "Initiate";
 * docs/decisions/customers-users-and-wallets.md "Wallet states": without `wallet_id`, only the
 * user's `ACTIVE` wallets are candidates).
 */
import { DomainError, quote } from "../../domain/errors.js";
import type { Money } from "../../domain/money.js";
import type { Tx } from "../../db/sql.js";
import { walletsWithBalances, type CandidateWallet, type WithdrawalUser } from "./repository.js";

/**
 * The wallet to withdraw from (docs/decisions/withdrawals.md "Initiate"), in `tx`: `walletId` when given (it must be the user's and
 * hold the currency on a network of the address), else the user's oldest such wallet whose
 * available balance covers the amount (the user's wallets and their balances of the currency
 * read in one statement).
 * @throws DomainError WALLET_NOT_FOUND (404), INSUFFICIENT_BALANCE (400).
 */
export async function chooseSourceWallet(tx: Tx, user: WithdrawalUser, currency: string, networks: readonly string[], amount: Money, walletId: string | undefined, given: CandidateWallet | Error | undefined): Promise<{ walletId: string; network: string }> {
  if (given instanceof Error) throw given;
  const candidates: CandidateWallet[] = given ? [given] : await walletsWithBalances(tx, user.customerId, user.userId, currency);
  let holdsCurrency = false;
  for (const wallet of candidates) {
    const network = wallet.networks.find((n) => n.currency === currency && networks.includes(n.name))?.name;
    if (!network) continue;
    holdsCurrency = true;
    if (walletId || (wallet.balance && wallet.balance.available.gte(amount))) return { walletId: wallet.walletId, network };
  }
  if (walletId && !holdsCurrency) {
    throw new DomainError("INSUFFICIENT_BALANCE", `Wallet ${quote(walletId)} holds no ${currency} on ${networks.join(" or ")}.`, "wallet_id");
  }
  throw new DomainError("INSUFFICIENT_BALANCE", `No wallet of the user has enough available ${currency} for this withdrawal.`, "amount");
}

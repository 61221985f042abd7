/**
 * The wallets module's hot-path statement (docs/performance.md "What keeps the request path cheap"): a wallet's balances in one prepared statement,
 * run on the ORM's pool with bound parameters (src/db/statements.ts).
 */
import type { Db, PreparedStatement } from "../../db/sql.js";
import type { BalanceCacheRow } from "../ledger/service.js";

/** A row of {@link walletBalanceRows}: the wallet, and one of its balance-cache accounts (null columns when it has none). */
export interface WalletBalanceRow extends BalanceCacheRow {
  wallet_id: string;
  user_id: string;
}

/**
 * A wallet of a customer (`$1` wallet id, `$2` customer id) with its balance-cache accounts
 * (`ledger_account` rows of buckets `available` and `held`), in currency order.
 */
const WALLET_BALANCE: PreparedStatement = {
  name: "wallet_balance",
  text: `select w.wallet_id, w.user_id, a.currency, a.bucket, a.balance::text as balance
           from wallet w left join ledger_account a on a.wallet_id = w.wallet_id and a.bucket in ('available', 'held')
          where w.wallet_id = $1::uuid and w.customer_id = $2
          order by a.currency, a.bucket`,
};

/**
 * Wallet `walletId` (a UUID, lower-case) of `customerId` with its balance-cache rows, in currency
 * then bucket order; no row when the customer has no such wallet. @throws the driver's error.
 */
export function walletBalanceRows(statements: Db, walletId: string, customerId: string): Promise<WalletBalanceRow[]> {
  return statements.rows<WalletBalanceRow>(WALLET_BALANCE, [walletId, customerId]);
}

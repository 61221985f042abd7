/**
 * The credit wallets' figure on `/metrics` (src/http/business-metrics.ts), read at scrape time:
 * wallets set aside because their next cycle step would take an amount beyond ±(2^53 − 1) cents
 * (docs/security.md "Money stays exact"); above 0 needs an operator's look. The count is the
 * repository's (./repository/wallets.ts `countSetAsideWallets`).
 */
import type { Db } from "../../../db/sql.js";
import { countSetAsideWallets } from "./repository/wallets.js";

/** How many credit wallets are set aside. @throws the driver's error. */
export async function setAsideWalletCount(statements: Db): Promise<number> {
  return countSetAsideWallets(statements);
}

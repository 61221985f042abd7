/**
 * The credit wallets' figure on `/metrics` (src/http/business-metrics.ts), read at scrape time:
 * wallets set aside because their next cycle step would take an amount beyond ±(2^53 − 1) cents
 * (docs/security.md "Money stays exact"); above 0 needs an operator's look.
 */
import type { Db, PreparedStatement } from "../../../db/sql.js";

/** Counted on the partial index of `set_aside_at`. */
const SET_ASIDE_WALLETS: PreparedStatement = {
  name: "metrics_credit_set_aside",
  text: `select count(*)::int as count from credit_wallet where set_aside_at is not null`,
};

/** How many credit wallets are set aside. @throws the driver's error. */
export async function setAsideWalletCount(statements: Db): Promise<number> {
  const [row] = await statements.rows<{ count: number }>(SET_ASIDE_WALLETS, []);
  return row?.count ?? 0;
}

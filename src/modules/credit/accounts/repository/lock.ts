/**
 * The wallet lock of a credit wallet change (docs/decisions/credit.md "Wallets"; docs/performance.md
 * "Authorizations and credit changes"): locks one wallet row for the transaction of a change and
 * loads it with its product, the tenant's clock, its open statements and holds into the engine's
 * `WalletState` (../mapping.ts) in one prepared statement. The statement reads, besides the
 * wallet's tables (`credit_wallet`, `credit_statement`), `credit_product` (../../products/),
 * `credit_clock` (../../clock/) and `credit_authorization` (../../authorizations/) in the same round
 * trip. Money in integer cents; instants UTC.
 */
import type { PreparedStatement } from "../../../../db/sql.js";
import type { CreditProductRules, WalletState } from "../../../../domain/credit/index.js";
import type { CreditAuthorization } from "../../authorizations/entities.js";
import type { CreditStatement, CreditWallet } from "../entities.js";
import { stateOf } from "../mapping.js";
import type { Tx } from "../../../../db/sql.js";
import { authorizationOfJson, productRulesOfJson, statementOfJson, walletOfJson, type JsonRow } from "./rows.js";

/** A wallet row locked for the transaction (`select … for update` on its own row only), with its product and open statements. */
export interface LockedWallet {
  row: CreditWallet;
  product: CreditProductRules;
  productCode: string;
  /** Open statements (grace not ended, or defaulted and not cured), oldest cut first; engine index = position. */
  open: CreditStatement[];
  /** Open authorizations (`approved`: the engine's holds), oldest first; loaded only when the wallet holds an amount. */
  holds: CreditAuthorization[];
  state: WalletState;
  /** The tenant's credit core instant read with the wallet (its sandbox clock), or null: real time. */
  clock: Date | null;
}

/** UUID shape of a wallet id: anything else cannot name a wallet (and would not cast to `uuid`). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `walletId` has the shape of a wallet id (a UUID). */
export function isWalletId(walletId: string): boolean {
  return UUID.test(walletId);
}

/**
 * Locks wallet `$1` of tenant `$2` (its own row only, `for update`) and reads, as JSON: the row,
 * its product (unlocked: products are shared rows), the tenant's `credit_clock` instant, its open
 * statements (oldest cut first) and, when it holds an amount, its open authorizations (oldest
 * first). No row when the tenant has no such wallet.
 *
 * `seen_version` is the `xmin` of the wallet row in the statement's snapshot, `row_version` the
 * locked row's: the snapshot is taken when the statement starts, before it waits for the lock, so
 * when a change committed in between (every change updates the wallet row) they differ, and the
 * other reads may be stale: {@link lockWallet} then reads again, under the lock. The bench's
 * authorization baseline (scripts/bench/baseline-authorizations.ts) runs this same text.
 */
export const LOCK_WALLET: PreparedStatement = {
  name: "credit_wallet_lock",
  text: `with locked as (
           select w.*, w.xmin::text as row_version from credit_wallet w where w.wallet_id = $1 and w.customer_id = $2 for update of w
         )
         select row_to_json(l) as wallet,
                (select s.xmin::text from credit_wallet s where s.wallet_id = $1) as seen_version,
                row_to_json(p) as product,
                (select to_json(c."now") from credit_clock c where c.customer_id = $2) as clock,
                coalesce((select json_agg(st order by st.cut_date) from credit_statement st
                           where st.wallet_id = $1 and (st.interest_applied_at is null or (st.status = 'defaulted' and st.cured_at is null))), '[]'::json) as statements,
                case when l.amount_held > 0
                     then coalesce((select json_agg(a order by a.created_at, a.authorization_id) from credit_authorization a
                                     where a.wallet_id = $1 and a.status = 'approved'), '[]'::json)
                     else '[]'::json end as holds
           from locked l join credit_product p on p.id = l.product_id`,
};

/** A row of {@link LOCK_WALLET}. */
interface LockRow {
  wallet: JsonRow & { row_version: string };
  seen_version: string | null;
  product: JsonRow;
  clock: string | null;
  statements: JsonRow[];
  holds: JsonRow[];
}

/**
 * Locks wallet `walletId` of tenant `customerId` (its own row only, `for update`) and loads its
 * product, the tenant's clock, its open statements and, when it holds an amount, its open
 * authorizations into an engine state ({@link LOCK_WALLET}: one statement; a second, under the lock,
 * when a change committed while it waited for the lock). Call inside the transaction of the change.
 * @returns null when the tenant has no such wallet (another tenant's wallet included).
 */
export async function lockWallet(tx: Tx, customerId: string, walletId: string): Promise<LockedWallet | null> {
  if (!isWalletId(walletId)) return null;
  const id = walletId.toLowerCase();
  let [read] = await tx.rows<LockRow>(LOCK_WALLET, [id, customerId]);
  if (!read) return null;
  if (read.seen_version !== read.wallet.row_version) [read] = await tx.rows<LockRow>(LOCK_WALLET, [id, customerId]);
  if (!read) return null;
  const row = walletOfJson(read.wallet);
  const open = read.statements.map(statementOfJson);
  const holds = read.holds.map(authorizationOfJson);
  const product = productRulesOfJson(read.product);
  return { row, product, productCode: read.product.code as string, open, holds, state: stateOf(row, open, holds), clock: read.clock === null ? null : new Date(read.clock) };
}

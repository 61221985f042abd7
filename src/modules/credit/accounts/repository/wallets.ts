/**
 * The statements of the credit wallets' own rows outside a change's step (docs/decisions/credit.md
 * "Wallets"): a wallet created, a wallet set aside by a change and its stored reason
 * (docs/security.md "Money stays exact"), the count of wallets set aside (`/metrics`), and whether a
 * tenant has a wallet (the sandbox clock's rule). Table `credit_wallet`. Money in integer cents;
 * instants UTC.
 */
import type { PreparedStatement, Sql } from "../../../../db/sql.js";
import type { CreditWallet } from "../entities.js";
import { columnsOf } from "./rows.js";
import { WALLET_COLUMNS } from "./write.js";

/** The columns of a new wallet: its identity and terms, then those every change sets (./write.ts). */
const NEW_WALLET_COLUMNS = ["wallet_id", "customer_id", "user_id", "product_id", "currency", "description", "first_cut_date", "time", "expires_at", "created_at", ...WALLET_COLUMNS]
  .map((c) => `"${c}"`)
  .join(", ");

/** Inserts the wallet whose columns are the JSON object `$1` (snake_case; `set_aside_…` left null). */
export const WALLET_INSERT: PreparedStatement = {
  name: "credit_wallet_insert",
  text: `insert into credit_wallet (${NEW_WALLET_COLUMNS}) select ${NEW_WALLET_COLUMNS} from json_populate_record(null::credit_wallet, $1::json)`,
};

/** Inserts wallet `row` (entity shape, not set aside) in transaction `tx` ({@link WALLET_INSERT}). @throws the driver's error. */
export async function insertWallet(tx: Sql, row: CreditWallet): Promise<void> {
  const { setAsideAt: _at, setAsideReason: _reason, ...columns } = row;
  await tx.run(WALLET_INSERT, [JSON.stringify(columnsOf(columns))]);
}

/** Sets wallet `$3` of tenant `$4` aside at `$1` with reason `$2`, unless it already is. */
export const WALLET_SET_ASIDE: PreparedStatement = {
  name: "credit_wallet_set_aside",
  text: `update credit_wallet set set_aside_at = $1, set_aside_reason = $2, updated_at = now()
         where wallet_id = $3 and customer_id = $4 and set_aside_at is null returning wallet_id`,
};

/** The reason wallet `$1` is set aside (null while it is not). */
export const WALLET_SET_ASIDE_REASON: PreparedStatement = {
  name: "credit_wallet_set_aside_reason",
  text: `select set_aside_reason from credit_wallet where wallet_id = $1`,
};

/**
 * Sets wallet `walletId` of tenant `customerId` aside at `at` (the tenant's instant, UTC) with
 * `reason`, unless it already is, in the caller's transaction (docs/security.md "Money stays exact";
 * {@link WALLET_SET_ASIDE}, then {@link WALLET_SET_ASIDE_REASON}).
 * @returns whether this call set it aside (`marked`) and the reason stored on the row (`stored`:
 *   the earlier one when it already was; `reason` when the row is gone).
 * @throws the driver's error.
 */
export async function setWalletAside(tx: Sql, customerId: string, walletId: string, at: Date, reason: string): Promise<{ marked: boolean; stored: string }> {
  const marked = await tx.rows(WALLET_SET_ASIDE, [at, reason, walletId, customerId]);
  const [row] = await tx.rows<{ set_aside_reason: string | null }>(WALLET_SET_ASIDE_REASON, [walletId]);
  return { marked: marked.length > 0, stored: row?.set_aside_reason ?? reason };
}

/** How many credit wallets are set aside, counted on the partial index of `set_aside_at`. */
export const WALLETS_SET_ASIDE_COUNT: PreparedStatement = {
  name: "credit_wallets_set_aside_count",
  text: `select count(*)::int as count from credit_wallet where set_aside_at is not null`,
};

/** How many credit wallets are set aside ({@link WALLETS_SET_ASIDE_COUNT}). @throws the driver's error. */
export async function countSetAsideWallets(on: Sql): Promise<number> {
  const [row] = await on.rows<{ count: number }>(WALLETS_SET_ASIDE_COUNT, []);
  return row?.count ?? 0;
}

/** Whether tenant `$1` has a credit wallet (any state). */
export const TENANT_HAS_WALLETS: PreparedStatement = {
  name: "credit_wallet_tenant_has_any",
  text: `select exists (select 1 from credit_wallet where customer_id = $1) as any`,
};

/** Whether tenant `customerId` has a credit wallet, any state ({@link TENANT_HAS_WALLETS}). @throws the driver's error. */
export async function tenantHasWallets(on: Sql, customerId: string): Promise<boolean> {
  const [w] = await on.rows<{ any: boolean }>(TENANT_HAS_WALLETS, [customerId]);
  return w?.any === true;
}

/**
 * The sandbox provider's statements on its own tables (docs/architecture.md "Reaching the
 * database"): `sandbox_vault_wallet`, `sandbox_deposit_address` and `sandbox_price`
 * (src/providers/sandbox-entities.ts). They run in the caller's transaction, so the provider's
 * state commits or rolls back with the wallet or price that needed it.
 */
import type { PreparedStatement, Sql } from "../db/sql.js";

/** A vault wallet: `$1` its id, `$2` the customer, `$3` the service's wallet. */
export const INSERT_VAULT_WALLET: PreparedStatement = {
  name: "sandbox_insert_vault_wallet",
  text: `insert into sandbox_vault_wallet (vault_wallet_id, customer_id, wallet_id, created_at) values ($1, $2, $3, now())`,
};

/** Takes the allocation lock of network `$1` (one derivation index after another per network) until the transaction ends. */
export const LOCK_ADDRESS_ALLOCATION: PreparedStatement = {
  name: "sandbox_lock_address_allocation",
  text: `select pg_advisory_xact_lock(hashtext('sandbox_deposit_address:' || $1)) as locked`,
};

/** The next derivation index of network `$1` (0 for the first address). */
export const NEXT_DERIVATION_INDEX: PreparedStatement = {
  name: "sandbox_next_derivation_index",
  text: `select coalesce(max(derivation_index) + 1, 0) as next from sandbox_deposit_address where network = $1`,
};

/** A deposit address: `$1` network, `$2` derivation index, `$3` path, `$4` address, `$5` vault wallet. */
export const INSERT_DEPOSIT_ADDRESS: PreparedStatement = {
  name: "sandbox_insert_deposit_address",
  text: `insert into sandbox_deposit_address (network, derivation_index, derivation_path, address, vault_wallet_id, created_at) values ($1, $2, $3, $4, $5, now())`,
};

/** Customer `$1`'s own mid price of pair `$2` (key `base/quote`), if it set one. */
export const OWN_PRICE: PreparedStatement = { name: "sandbox_own_price", text: `select price from sandbox_price where customer_id = $1 and pair = $2` };

/** Sets customer `$1`'s mid price of pair `$2` to `$3` (decimal text) at `$4`. */
export const UPSERT_PRICE: PreparedStatement = {
  name: "sandbox_upsert_price",
  text: `insert into sandbox_price (customer_id, pair, price, updated_at) values ($1, $2, $3, $4)
         on conflict (customer_id, pair) do update set price = excluded.price, updated_at = excluded.updated_at`,
};

/** Records vault wallet `vaultWalletId` of `customerId` for wallet `walletId`, in `tx`. */
export async function insertVaultWallet(tx: Sql, vaultWalletId: string, customerId: string, walletId: string): Promise<void> {
  await tx.run(INSERT_VAULT_WALLET, [vaultWalletId, customerId, walletId]);
}

/** In `tx`: takes `network`'s allocation lock and returns its next derivation index. */
export async function nextDerivationIndex(tx: Sql, network: string): Promise<number> {
  await tx.rows(LOCK_ADDRESS_ALLOCATION, [network]);
  const [row] = await tx.rows<{ next: number }>(NEXT_DERIVATION_INDEX, [network]);
  return Number(row?.next ?? 0);
}

/** Records a derived deposit address of the vault wallet, in `tx`. */
export async function insertDepositAddress(tx: Sql, a: { network: string; index: number; path: string; address: string; vaultWalletId: string }): Promise<void> {
  await tx.run(INSERT_DEPOSIT_ADDRESS, [a.network, a.index, a.path, a.address, a.vaultWalletId]);
}

/** `customerId`'s own mid price of `pair` (`base/quote`), decimal text, or undefined. */
export async function ownPrice(sql: Sql, customerId: string, pair: string): Promise<string | undefined> {
  const [row] = await sql.rows<{ price: string }>(OWN_PRICE, [customerId, pair]);
  return row?.price;
}

/** Sets `customerId`'s mid price of `pair` to `price` (decimal text) at `at`. */
export async function upsertPrice(sql: Sql, customerId: string, pair: string, price: string, at: Date): Promise<void> {
  await sql.run(UPSERT_PRICE, [customerId, pair, price, at]);
}

/** The derivation paths of network `$1`'s deposit addresses `$2` (text[], lower case), with their addresses in lower case. */
export const DEPOSIT_ADDRESS_PATHS: PreparedStatement = {
  name: "sandbox_deposit_address_paths",
  text: `select lower(address) as address, derivation_path from sandbox_deposit_address where network = $1 and lower(address) = any($2::text[])`,
};

/**
 * The derivation path of each of `addresses` (lower case) on `network` that the provider derived,
 * by lower-case address: what a sweep signs with (docs/decisions/live-chains.md "Sweeps").
 */
export async function depositAddressPaths(sql: Sql, network: string, addresses: readonly string[]): Promise<Map<string, string>> {
  if (addresses.length === 0) return new Map();
  const rows = await sql.rows<{ address: string; derivation_path: string }>(DEPOSIT_ADDRESS_PATHS, [network, addresses]);
  return new Map(rows.map((r) => [r.address, r.derivation_path]));
}

/**
 * State of the sandbox provider, kept in the service's database (docs/decisions/provider-and-sandbox.md): the vault
 * wallets it opened and the deposit addresses it derived, with their HD derivation index, and the
 * customers' own sandbox prices.
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** A vault wallet the sandbox opened for one of a customer's wallets. */
export const SandboxVaultWallet = defineEntity({
  name: "SandboxVaultWallet",
  tableName: "sandbox_vault_wallet",
  properties: {
    vaultWalletId: p.uuid().primary(),
    customerId: p.string(),
    walletId: p.uuid().unique(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type SandboxVaultWallet = InferEntity<typeof SandboxVaultWallet>;

/**
 * A deposit address the sandbox derived: number `derivationIndex` of its network under
 * `SANDBOX_SEED`, so the same seed always yields the same addresses in the same order.
 */
export const SandboxDepositAddress = defineEntity({
  name: "SandboxDepositAddress",
  tableName: "sandbox_deposit_address",
  uniques: [{ name: "sandbox_deposit_address_network_index_unique", properties: ["network", "derivationIndex"] }],
  properties: {
    id: p.bigint("number").primary(),
    network: p.string(),
    derivationIndex: p.integer(),
    derivationPath: p.string(),
    address: p.string(),
    vaultWalletId: () => p.manyToOne(SandboxVaultWallet).mapToPk().fieldName("vault_wallet_id"),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type SandboxDepositAddress = InferEntity<typeof SandboxDepositAddress>;

/**
 * A customer's own mid price of a pair in the sandbox (Set Sandbox Price; docs/decisions/trading.md
 * "The sandbox"): quote currency per base unit, replacing the catalogue's from then on.
 */
export const SandboxPrice = defineEntity({
  name: "SandboxPrice",
  tableName: "sandbox_price",
  properties: {
    customerId: p.string().length(48).primary(),
    /** `base/quote`, lower case (e.g. `btc/usdt`). */
    pair: p.string().length(33).primary(),
    price: p.decimal("string").precision(38).scale(18),
    updatedAt: p.datetime(),
  },
});
export type SandboxPrice = InferEntity<typeof SandboxPrice>;

/** The sandbox provider's entities, for the ORM's entity list (src/modules/entities.ts). */
export const SANDBOX_ENTITIES = [SandboxVaultWallet, SandboxDepositAddress, SandboxPrice];

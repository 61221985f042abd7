/**
 * State of the sandbox provider, kept in the service's database (docs/decisions/provider-and-sandbox.md): the vault
 * wallets it opened and the deposit addresses it derived, with their HD derivation index.
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

/** The sandbox provider's entities, for the ORM's entity list (src/modules/entities.ts). */
export const SANDBOX_ENTITIES = [SandboxVaultWallet, SandboxDepositAddress];

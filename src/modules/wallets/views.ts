/**
 * How the wallets module renders its records in the contract's shapes (reference: "Wallet",
 * "Wallet balance", "Wallet transaction"); amounts of transactions are JSON numbers, as the
 * reference types them.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import type { components } from "../../../generated/types/platform.js";
import { toNumber } from "../../domain/money.js";
import { WalletAddress, type Wallet, type WalletTransaction } from "./entities.js";

type Schemas = components["schemas"];
/** Wallet as the API shows it (schema `Wallet`). */
export type WalletView = Schemas["Wallet"];
/** Wallet balance as the API shows it (schema `WalletBalance`). */
export type WalletBalanceView = Schemas["WalletBalance"];
/** Wallet transaction as the API shows it (schema `WalletTransaction`). */
export type WalletTransactionView = Schemas["WalletTransaction"];
/** Body of Create Wallet (schema `CreateWalletRequest`). */
export type CreateWalletInput = Schemas["CreateWalletRequest"];

/**
 * Renders a wallet with its deposit addresses, one per network entry, in the entries' order.
 * @throws Error when an entry has no address (an inconsistency: creation writes them together).
 */
export async function walletView(em: EntityManager, wallet: Wallet): Promise<WalletView> {
  const addresses = await em.find(WalletAddress, { walletId: wallet.walletId }, { orderBy: { createdAt: "asc", addressId: "asc" } });
  return {
    wallet_id: wallet.walletId,
    vault_wallet_id: wallet.vaultWalletId,
    user_id: wallet.userId,
    name: wallet.name,
    description: wallet.description ?? null,
    wallet_type: wallet.walletType,
    networks: wallet.networks,
    is_active: wallet.status === "ACTIVE",
    status: wallet.status,
    status_reason: wallet.statusReason ?? null,
    addresses: wallet.networks.map((n) => {
      const a = addresses.find((x) => x.network === n.name && x.currency === n.currency);
      if (!a) throw new Error(`wallet ${wallet.walletId} lacks its ${n.name} ${n.currency} address`);
      return { address_id: a.addressId, currency: a.currency, network: a.network, address: a.address };
    }),
    created_at: wallet.createdAt.toISOString(),
    updated_at: wallet.updatedAt.toISOString(),
  };
}

/**
 * Renders a wallet transaction; amounts as JSON numbers, as the reference types them.
 * `confirmations`: a live deposit's (docs/decisions/live-chains.md "Deposits"), absent for any other.
 */
export function transactionView(t: WalletTransaction, confirmations?: number): WalletTransactionView {
  return {
    id: Number(t.id),
    balance: toNumber(t.balanceAfter),
    transaction: {
      order_id: t.orderId,
      trade_id: t.tradeId,
      client_id: t.customerId,
      idempotency_id: t.idempotencyId ?? null,
      symbol: t.symbol ?? t.currency.toUpperCase(),
      created_at: t.createdAt.toISOString(),
      hash: t.hash,
      action: t.action,
      currency: t.currency,
      memo: t.memo,
      amount: toNumber(t.amount),
      net_proceeds: toNumber(t.netProceeds),
      price: toNumber(t.price),
      fees: toNumber(t.fees),
      status: t.status,
      description: t.description,
      ...(confirmations !== undefined && { confirmations }),
    },
  };
}

/**
 * The transfers module's reads beyond single entities: where each side of a transfer is recorded
 * (the wallet's network and address of the currency), and a wallet's transfers in both directions.
 * Each runs in the caller's transaction or EntityManager.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import type { PageRequest } from "../../domain/paging.js";
import { WalletAddress, type Wallet } from "../wallets/entities.js";
import { Transfer } from "./entities.js";

/** Where one side of a transfer appears in its wallet's history: a network of the currency and the wallet's address on it. */
export interface TransferSide {
  walletId: string;
  network: string;
  address: string;
}

/**
 * The side of `wallet` for `currency`: the first of its `networks[]` entries holding the currency
 * (as the wallet holds it) and its deposit address there. One wallet account per currency carries
 * the money whatever the network; the network and address only place the transaction in the
 * wallet's history (List Wallet Transactions lists a wallet's own addresses).
 * @throws Error when the wallet holds no such entry or lacks its address (checked before, and
 *   written with the wallet: a broken invariant, 500).
 */
export async function sideOf(em: EntityManager, wallet: Wallet, currency: string): Promise<TransferSide> {
  const network = wallet.networks.find((n) => n.currency === currency)?.name;
  if (network === undefined) throw new Error(`wallet ${wallet.walletId} holds no ${currency}`);
  const found = await em.findOne(WalletAddress, { walletId: wallet.walletId, network, currency });
  if (!found) throw new Error(`wallet ${wallet.walletId} lacks its ${network} ${currency} address`);
  return { walletId: wallet.walletId, network, address: found.address };
}

/** The transfers from or to `walletId` (of `customerId`), newest first, one page, and how many there are. */
export function walletTransfers(em: EntityManager, customerId: string, walletId: string, page: PageRequest): Promise<[Transfer[], number]> {
  return em.findAndCount(
    Transfer,
    { customerId, $or: [{ fromWalletId: walletId }, { toWalletId: walletId }] },
    { orderBy: { createdAt: "desc", id: "desc" }, limit: page.limit, offset: page.skip },
  );
}

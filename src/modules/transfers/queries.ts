/**
 * The transfers module's reads beyond single entities: the two parties of a Create Transfer (both
 * wallets, their owners' standing and their addresses of the currency) in one prepared statement,
 * where each side of a transfer is recorded, and a wallet's transfers in both directions.
 *
 * {@link TRANSFER_PARTIES} reads the wallets module's `wallet` and `wallet_address` tables and the
 * users module's `app_user` (with its rule of a user in good standing, src/modules/users/queries.ts)
 * directly: it is Create Transfer's hot path, and one round trip replaces
 * four ORM reads (two `visibleWallet`, two user reads) and the two address reads of the transaction
 * (docs/performance.md "What keeps the request path cheap"). The checks on what it reads stay in
 * src/modules/transfers/service.ts, in the order of the wallets' and users' own services.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Db, PreparedStatement } from "../../db/sql.js";
import type { PageRequest } from "../../domain/paging.js";
import { goodStandingSql, userOfCustomerSql, type UserStanding } from "../users/queries.js";
import type { WalletNetworkEntry } from "../wallets/entities.js";
import { Transfer } from "./entities.js";

/** Where one side of a transfer appears in its wallet's history: a network of the currency and the wallet's address on it. */
export interface TransferSide {
  walletId: string;
  network: string;
  address: string;
}

/** The standing of a {@link TransferParty}'s owner (the users module's rule); null when the customer has no such user. */
export type PartyOwner = UserStanding | null;

/**
 * A wallet named by a Create Transfer, found among the customer's: its id and owner (lower-case
 * UUIDs), its `networks[]`, its owner's standing, and its deposit addresses of the transfer's
 * currency by network (as read before the transaction; addresses are written with the wallet).
 */
export interface TransferParty {
  walletId: string;
  userId: string;
  networks: WalletNetworkEntry[];
  owner: PartyOwner;
  /** Network name → the wallet's address there, for the transfer's currency only. */
  addresses: ReadonlyMap<string, string>;
}

/**
 * A row of {@link TRANSFER_PARTIES}: one wallet with one of its addresses of the currency (null
 * columns when it has none).
 */
interface PartyRow {
  wallet_id: string;
  user_id: string;
  networks: WalletNetworkEntry[];
  user_exists: boolean;
  user_deleted: boolean;
  user_good_standing: boolean;
  network: string | null;
  address: string | null;
}

/**
 * The wallets `$2` (uuid[]) of customer `$1`, each with its owner (matched within the customer) and
 * the owner's standing, by the users module's rule (a user in good standing:
 * src/modules/users/queries.ts), and its deposit addresses of currency `$3` (lower-case code), one
 * row per address (one row of null address columns when it has none). The bench's transfer
 * baseline (scripts/bench/baseline-transfers.ts) runs this same text.
 */
export const TRANSFER_PARTIES: PreparedStatement = {
  name: "transfer_parties",
  text: `select w.wallet_id, w.user_id, w.networks,
                u.user_id is not null as user_exists, u.deleted_at is not null as user_deleted,
                ${goodStandingSql("u")} as user_good_standing, a.network, a.address
           from wallet w
           left join app_user u on ${userOfCustomerSql("u", "w.user_id", "w.customer_id")}
           left join wallet_address a on a.wallet_id = w.wallet_id and a.currency = $3
          where w.customer_id = $1 and w.wallet_id = any($2::uuid[])`,
};

/**
 * The wallets `walletIds` (lower-case UUIDs) of `customerId` with their owners' standing and
 * their addresses of `currency` (lower-case code), in one round trip, by wallet id; a wallet the
 * customer does not have is absent. @throws the driver's error.
 */
export async function transferParties(statements: Db, customerId: string, walletIds: readonly string[], currency: string): Promise<Map<string, TransferParty>> {
  const rows = await statements.rows<PartyRow>(TRANSFER_PARTIES, [customerId, walletIds, currency]);
  const parties = new Map<string, TransferParty>();
  for (const row of rows) {
    let party = parties.get(row.wallet_id);
    if (!party) {
      party = {
        walletId: row.wallet_id,
        userId: row.user_id,
        networks: row.networks,
        owner: row.user_exists ? { deleted: row.user_deleted, goodStanding: row.user_good_standing } : null,
        addresses: new Map(),
      };
      parties.set(row.wallet_id, party);
    }
    if (row.network !== null && row.address !== null) (party.addresses as Map<string, string>).set(row.network, row.address);
  }
  return parties;
}

/**
 * The side of `party` for `currency` (lower-case, the one {@link transferParties} read the
 * addresses of): the first of its `networks[]` entries holding the currency (as the wallet holds
 * it) and its deposit address there. One wallet account per currency carries the money whatever
 * the network; the network and address only place the transaction in the wallet's history (List
 * Wallet Transactions lists a wallet's own addresses).
 * @throws Error when the wallet holds no such entry or lacks its address (checked before, and
 *   written with the wallet: a broken invariant, 500).
 */
export function sideOf(party: TransferParty, currency: string): TransferSide {
  const network = party.networks.find((n) => n.currency === currency)?.name;
  if (network === undefined) throw new Error(`wallet ${party.walletId} holds no ${currency}`);
  const address = party.addresses.get(network);
  if (address === undefined) throw new Error(`wallet ${party.walletId} lacks its ${network} ${currency} address`);
  return { walletId: party.walletId, network, address };
}

/** The transfers from or to `walletId` (of `customerId`), newest first, one page, and how many there are. */
export function walletTransfers(em: EntityManager, customerId: string, walletId: string, page: PageRequest): Promise<[Transfer[], number]> {
  return em.findAndCount(
    Transfer,
    { customerId, $or: [{ fromWalletId: walletId }, { toWalletId: walletId }] },
    { orderBy: { createdAt: "desc", id: "desc" }, limit: page.limit, offset: page.skip },
  );
}

/**
 * The transfers module's reads beyond single entities: the two parties of a Create Transfer (both
 * wallets, their owners' standing and their addresses of the currency) in one prepared statement,
 * where each side of a transfer is recorded, and a wallet's transfers in both directions.
 *
 * {@link TRANSFER_PARTIES} reads the wallets module's `wallet` and `wallet_address` tables and the
 * users module's `app_user` (with its rule of a user in good standing, src/modules/users/repository.ts)
 * directly: it is Create Transfer's hot path, and one round trip replaces
 * four ORM reads (two `visibleWallet`, two user reads) and the two address reads of the transaction
 * (docs/performance.md "What keeps the request path cheap"). The checks on what it reads stay in
 * src/modules/transfers/service.ts, in the order of the wallets' and users' own services.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import type { PreparedStatement, Sql, Tx } from "../../db/sql.js";
import type { Usage, UsageReader, Windows } from "../../domain/limits.js";
import type { PageRequest } from "../../domain/paging.js";
import { goodStandingSql, userOfCustomerSql, type UserStanding } from "../users/repository.js";
import type { WalletStatus } from "../../domain/wallet-states.js";
import type { WalletNetworkEntry } from "../wallets/entities.js";
import { insertTransactionsSql, TRANSACTION_COLUMNS } from "../wallets/repository.js";
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
  /** The wallet's state and its reason (docs/decisions/customers-users-and-wallets.md "Wallet states"). */
  status: WalletStatus;
  statusReason: string | null;
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
  status: WalletStatus;
  status_reason: string | null;
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
 * src/modules/users/repository.ts), and its deposit addresses of currency `$3` (lower-case code), one
 * row per address (one row of null address columns when it has none). The bench's transfer
 * baseline (scripts/bench/baseline-transfers.ts) runs this same text.
 */
export const TRANSFER_PARTIES: PreparedStatement = {
  name: "transfer_parties",
  text: `select w.wallet_id, w.user_id, w.status, w.status_reason, w.networks,
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
export async function transferParties(statements: Sql, customerId: string, walletIds: readonly string[], currency: string): Promise<Map<string, TransferParty>> {
  const rows = await statements.rows<PartyRow>(TRANSFER_PARTIES, [customerId, walletIds, currency]);
  const parties = new Map<string, TransferParty>();
  for (const row of rows) {
    let party = parties.get(row.wallet_id);
    if (!party) {
      party = {
        walletId: row.wallet_id,
        userId: row.user_id,
        status: row.status,
        statusReason: row.status_reason,
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

/** The columns of a `transfer` row, in the order of {@link INSERT_TRANSFER}'s values. */
const TRANSFER_COLUMNS = [
  "id", "customer_id", "from_wallet_id", "to_wallet_id", "from_user_id", "to_user_id", "currency", "amount", "memo", "status", "idempotency_key",
  "journal_entry_id", "created_at",
] as const;

/**
 * A booked transfer (its columns `$1…$13`) and both sides' wallet transactions (the wallets
 * module's `wallet_transaction`, src/modules/wallets/repository.ts `TRANSACTION_COLUMNS`: the
 * sender's `$14…$33`, the receiver's `$34…$53`), in one statement.
 */
export const INSERT_TRANSFER: PreparedStatement = {
  name: "transfer_insert",
  text: `with transfer as (insert into transfer (${TRANSFER_COLUMNS.map((c) => `"${c}"`).join(", ")})
            values (${TRANSFER_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})),
          sides as (${insertTransactionsSql(TRANSFER_COLUMNS.length + 1, 2)})
          select 1 as done`,
};

/** A transfer to write: the `transfer` row's fields (amount as exact decimal text, `createdAt` UTC). */
export interface TransferWrite {
  id: string;
  customerId: string;
  fromWalletId: string;
  toWalletId: string;
  fromUserId: string;
  toUserId: string;
  currency: string;
  amount: string;
  memo: string | null;
  idempotencyKey: string;
  journalEntryId: number;
  createdAt: Date;
}

/** One side's wallet transaction of a transfer: where it appears, its action, the wallet's balance after it and its text. */
export interface TransferLeg {
  side: TransferSide;
  action: "transfer_out" | "transfer_in";
  /** Decimal text. */
  balanceAfter: string;
  description: string;
}

/** Inserts COMPLETED transfer `t` and both legs' wallet transactions (status `done`, `order_id` the transfer's id) in `tx`. */
export async function insertTransfer(tx: Tx, t: TransferWrite, legs: readonly [TransferLeg, TransferLeg], customerId: string): Promise<void> {
  const row = [t.id, t.customerId, t.fromWalletId, t.toWalletId, t.fromUserId, t.toUserId, t.currency, t.amount, t.memo, "COMPLETED", t.idempotencyKey, t.journalEntryId, t.createdAt];
  const leg = (l: TransferLeg): unknown[] => [
    l.side.walletId, customerId, l.side.network, l.side.address, l.action, "done", t.currency, t.amount, "0", t.amount, "0",
    l.balanceAfter, "", t.memo ?? "", l.description, t.id, "", t.idempotencyKey, t.journalEntryId, t.createdAt,
  ];
  const values = [...row, ...leg(legs[0]), ...leg(legs[1])];
  if (values.length !== TRANSFER_COLUMNS.length + 2 * TRANSACTION_COLUMNS.length) throw new Error("transfer_insert: values do not match its columns");
  await tx.run(INSERT_TRANSFER, values);
}

/**
 * What user `$2` sent by transfer in currency `$3`: the sums since `$1` (`today`) and since `$4`
 * (`month`). Every stored transfer is COMPLETED (a transfer is never pending), so all count.
 */
export const TRANSFER_CAPS_USE: PreparedStatement = {
  name: "transfer_caps_use",
  text: `select coalesce(sum(amount) filter (where created_at >= $1), 0)::text as today, coalesce(sum(amount), 0)::text as month
       from transfer where from_user_id = $2 and currency = $3 and created_at >= $4`,
};

/**
 * The transfer caps' use (docs/decisions/limits-and-allowlist.md "Transfers" and "Limits"), the
 * {@link UsageReader} of kind `transfer` the limits module reads under its lock: sums of the
 * amounts user `userId` sent in `currency` since `windows.dayStart` (`today`) and since
 * `windows.monthStart` (`month`), UTC instants, as exact decimal text ("0" when none). One
 * statement, in the caller's transaction or on the pool.
 */
export const transferUsage: UsageReader<Sql> = async (on: Sql, userId: string, currency: string, windows: Windows): Promise<Usage> => {
  const [sums] = await on.rows<{ today: string; month: string }>(TRANSFER_CAPS_USE, [windows.dayStart, userId.toLowerCase(), currency.toLowerCase(), windows.monthStart]);
  return { today: sums?.today ?? "0", month: sums?.month ?? "0" };
};

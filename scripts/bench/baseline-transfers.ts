/**
 * `POST /api/v1/transfers` of the benchmark's baseline (scripts/bench/baseline.ts): NOT a minimum
 * but the very statements Create Transfer runs (src/modules/transfers/service.ts, the ledger's
 * `transfer`, the limits' `checkMovement`, the idempotency claim), in the same order, in the same
 * transaction, taking the same locks, with bound parameters where MikroORM inlines literals
 * ({@link TRANSFER_SQL} and the shared {@link SQL}; `npx tsx scripts/bench/capture-sql.ts` compares
 * them with the service's):
 *
 * jwtVerify; `identity_user_token` (credential, customer and user in one prepared statement); the
 * key's row (scope `transfer`); `transfer_parties` (both wallets, their users' standing and their
 * addresses of the currency in one prepared statement); BEGIN; INSERT of the key row (`on conflict
 * do nothing`); both wallets' states share-locked (the movement guard); `pg_advisory_xact_lock` of `transfer:<sender>:<currency>`; the customer's caps
 * row; the sender's sums of the day and the month; one statement locking both available accounts
 * (`FOR UPDATE`, in id order) and reading both held ones; one statement writing the journal entry,
 * its two postings and both cached balances; INSERT of both wallet transactions (one statement,
 * `transfer_out` then `transfer_in`); INSERT transfer; COMMIT: 14 statements. It answers the
 * service's `Transfer` record.
 *
 * What the service does beyond this: request validation against the OpenAPI document, the exact
 * reading of the amount from the JSON text, the checks of src/domain/transfers.ts for other
 * currencies, express and its middleware, the ORM's entities, identity map, unit of work and change sets.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createHash, randomUUID } from "node:crypto";
import type pg from "pg";
import type { Decimal } from "decimal.js";
import { D, first, ok, readJson, Refusal } from "./baseline-http.js";
import { accountsValues, assertCaps, entryValues, KEY_CALLER, SQL, TRANSFER_SQL, type CapSet, type LimitsRow } from "./baseline-sql.js";

/** What the transfer route borrows from the baseline: its pool, its user-token check and its transaction helper. */
export interface TransferDeps {
  pool: pg.Pool;
  /** The service's user-token authentication (`identity_user_token`). @throws Refusal 401. */
  authenticate: (req: IncomingMessage) => Promise<{ userId: string; customerId: string }>;
  /** BEGIN … COMMIT on one connection (ROLLBACK on any error). */
  transaction: <T>(work: (client: pg.PoolClient) => Promise<T>) => Promise<T>;
  /** The service's default transfer caps by currency (its `TRANSFER_CAPS`). */
  defaultCaps: Readonly<Record<string, CapSet>>;
}

/** A row of `transfer_parties`: a wallet, its owner's standing, one of its addresses of the currency. */
interface PartyRow {
  wallet_id: string;
  user_id: string;
  networks: { name: string; currency: string }[];
  user_exists: boolean;
  user_good_standing: boolean;
  network: string | null;
  address: string | null;
}

/** A wallet named by the transfer: its first row, and its addresses of the currency by network. */
interface Party {
  row: PartyRow;
  addresses: Map<string, string>;
}

/** One side of the transfer: the wallet, its network of the currency and its address there. */
interface Side {
  wallet: PartyRow;
  network: string;
  address: string;
}

/** The sandbox catalogue's btc (src/providers/sandbox-catalogue.ts): the one currency the benchmark moves. */
const BTC = { code: "btc", precision: 8 };

/**
 * Builds the route: `handle(req, res, traceId)` answers 201 with the new transfer, or throws a
 * Refusal (401, 403, 404, 400, 409) for the listener to answer.
 */
export function transferRoute(deps: TransferDeps): (req: IncomingMessage, res: ServerResponse, traceId: string) => Promise<void> {
  const { pool } = deps;

  /** src/modules/transfers/repository.ts `transferParties`: both wallets of the customer, by id. */
  async function parties(customerId: string, walletIds: string[], currency: string): Promise<Map<string, Party>> {
    const { name, text } = TRANSFER_SQL.parties;
    const rows = (await pool.query<PartyRow>({ name, text, values: [customerId, [...new Set(walletIds)], currency] })).rows;
    const byId = new Map<string, Party>();
    for (const row of rows) {
      const party = byId.get(row.wallet_id) ?? { row, addresses: new Map<string, string>() };
      byId.set(row.wallet_id, party);
      if (row.network !== null && row.address !== null) party.addresses.set(row.network, row.address);
    }
    return byId;
  }

  /** WalletService.visibleWallet's answer for the owner key. @throws Refusal 404 WALLET_NOT_FOUND. */
  function wallet(byId: Map<string, Party>, walletId: string): Party {
    const party = byId.get(walletId.toLowerCase());
    if (!party) throw new Refusal(404, "WALLET_NOT_FOUND", "Wallet not found.");
    return party;
  }

  /** The wallet's owner, live and VERIFIED. @throws Refusal 404 USER_NOT_FOUND. */
  function verifiedUser(p: Party): void {
    const u = p.row;
    if (!u.user_good_standing) throw new Refusal(404, "USER_NOT_FOUND", "User not found.");
  }

  /** src/domain/transfers.ts steps 1–6 for btc. @throws Refusal 400. */
  function check(from: PartyRow, to: PartyRow, currency: string, amount: Decimal): void {
    if (from.wallet_id === to.wallet_id) throw new Refusal(400, "SAME_WALLET_TRANSFER", "Same wallet.");
    if (currency !== BTC.code) throw new Refusal(400, "INVALID_CURRENCY", "The benchmark transfers btc.");
    for (const w of [from, to]) if (!w.networks.some((n) => n.currency === BTC.code)) throw new Refusal(400, "UNSUPPORTED_CURRENCY", "No btc.");
    if (!amount.isFinite() || amount.lte(0)) throw new Refusal(400, "AMOUNT_MUST_BE_POSITIVE", "The amount must be greater than zero.");
    if (amount.lt("0.000001")) throw new Refusal(400, "AMOUNT_TOO_SMALL", "The smallest transfer is 0.000001 btc.");
    if (amount.decimalPlaces() > BTC.precision || amount.gt("1e12")) throw new Refusal(400, "INVALID_AMOUNT", "Too many decimals.");
  }

  /** src/modules/transfers/repository.ts `sideOf`: no statement, the addresses came with the parties. */
  function sideOf(p: Party, currency: string): Side {
    const w = p.row;
    const network = w.networks.find((n) => n.currency === currency)?.name;
    if (network === undefined) throw new Error(`wallet ${w.wallet_id} holds no ${currency}`);
    const address = p.addresses.get(network);
    if (address === undefined) throw new Error(`wallet ${w.wallet_id} lacks its ${network} ${currency} address`);
    return { wallet: w, network, address };
  }

  /** LimitsService.checkMovement of kind `transfer`: the lock, the customer's caps, the sender's sums. @throws Refusal 400. */
  async function checkCaps(client: pg.PoolClient, customerId: string, userId: string, currency: string, amount: Decimal, now: Date): Promise<void> {
    await client.query(SQL.userLock, [`transfer:${userId}:${currency}`]);
    const own = (await client.query<LimitsRow>(SQL.customerLimits, [customerId])).rows[0];
    const caps = own ? own.transfer_caps[currency] : deps.defaultCaps[currency];
    if (!caps) return;
    const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const sums = (await client.query<{ today: string; month: string }>(TRANSFER_SQL.usage, [dayStart, userId, currency, monthStart])).rows[0];
    assertCaps("transfer", caps, amount, sums);
  }

  /**
   * LedgerService.transfer: both available accounts locked (in id order) and both held ones read in
   * one statement; the entry, its two postings and both cached balances written in one.
   * @returns the entry's id and each wallet's balance (available + held) after it.
   * @throws Refusal 400 INSUFFICIENT_BALANCE.
   */
  async function ledgerTransfer(
    client: pg.PoolClient,
    from: Side,
    to: Side,
    currency: string,
    amount: Decimal,
    reference: string,
  ): Promise<{ entryId: string; fromAfter: Decimal; toAfter: Decimal }> {
    const code = (w: Side, bucket: string): string => `wallet:${w.wallet.wallet_id}:${bucket}:${currency}`;
    const lock = [code(from, "available"), code(to, "available")].sort();
    const read = [code(from, "held"), code(to, "held")];
    const rows = (await client.query<{ id: string; code: string; balance: string }>(SQL.accountsOfPost(read.length), accountsValues(lock, read))).rows;
    const byCode = new Map(rows.map((r) => [r.code, r]));
    const row = (c: string): { id: string; balance: string } => {
      const found = byCode.get(c);
      if (!found) throw new Error(`ledger account ${c} missing`);
      return found;
    };
    const fromAvailable = new D(row(code(from, "available")).balance).minus(amount);
    if (fromAvailable.lt(0)) throw new Refusal(400, "INSUFFICIENT_BALANCE", `Insufficient available ${currency} balance for this amount.`);
    const toAvailable = new D(row(code(to, "available")).balance).plus(amount);
    const entryId = String(
      (
        await client.query<{ id: string }>(
          SQL.postEntry,
          entryValues(
            ["transfer", from.wallet.wallet_id, from.network, currency, amount.toFixed(), reference],
            [
              [row(code(from, "available")).id, currency, amount.neg().toFixed()],
              [row(code(to, "available")).id, currency, amount.toFixed()],
            ],
            [
              [code(from, "available"), fromAvailable.toFixed()],
              [code(to, "available"), toAvailable.toFixed()],
            ],
          ),
        )
      ).rows[0]?.id,
    );
    return { entryId, fromAfter: fromAvailable.plus(row(code(from, "held")).balance), toAfter: toAvailable.plus(row(code(to, "held")).balance) };
  }

  return async function createTransfer(req, res, traceId) {
    const body = await readJson(req);
    const claims = await deps.authenticate(req);
    const customerId = claims.customerId;
    const key = first(req.headers["idempotency-key"]) ?? randomUUID();
    const fromId = String(body.from_wallet_id);
    const toId = String(body.to_wallet_id);
    const currency = String(body.currency).toLowerCase();
    const amount = new D(String(body.amount));
    const memo = typeof body.memo === "string" ? body.memo : null;
    const fingerprint = createHash("sha256").update(JSON.stringify([fromId.toLowerCase(), toId.toLowerCase(), currency, amount.toFixed(), memo])).digest("hex");
    if ((await pool.query(TRANSFER_SQL.keyByAddress, [customerId, "transfer", KEY_CALLER, key])).rows[0]) throw new Refusal(409, "IDEMPOTENCY_KEY_REUSED", "The benchmark never repeats a key.");
    const byId = await parties(customerId, [fromId.toLowerCase(), toId.toLowerCase()], currency);
    const fromParty = wallet(byId, fromId);
    const from = fromParty.row;
    if (from.user_id !== claims.userId) throw new Refusal(403, "FORBIDDEN", "A user token can only send from its own wallets.");
    const toParty = wallet(byId, toId);
    const to = toParty.row;
    verifiedUser(fromParty);
    verifiedUser(toParty);
    check(from, to, currency, amount);
    const id = randomUUID();
    const createdAt = await deps.transaction(async (client) => {
      if ((await client.query(TRANSFER_SQL.insertKey, [customerId, "transfer", KEY_CALLER, key, fingerprint, id])).rows.length === 0) {
        await client.query(TRANSFER_SQL.keyByAddress, [customerId, "transfer", KEY_CALLER, key]);
        throw new Refusal(409, "IDEMPOTENCY_KEY_REUSED", "Repeated key.");
      }
      const now = new Date();
      await client.query(TRANSFER_SQL.walletStates, [[from.wallet_id, to.wallet_id]]); // the movement guard (every wallet of the bench is ACTIVE)
      await checkCaps(client, customerId, from.user_id, currency, amount, now);
      const source = sideOf(fromParty, currency);
      const destination = sideOf(toParty, currency);
      const { entryId, fromAfter, toAfter } = await ledgerTransfer(client, source, destination, currency, amount, `transfer:${id}`);
      const what = `${amount.toFixed(8)} ${currency.toUpperCase()}`;
      const side = (s: Side, action: string, after: Decimal, description: string): unknown[] => [
        s.wallet.wallet_id, customerId, s.network, s.address, action, "done", currency, amount.toFixed(), "0", amount.toFixed(), "0",
        after.toFixed(), "", memo ?? "", description, id, "", key, entryId, now,
      ];
      await client.query(TRANSFER_SQL.insertTransfer, [
        id, customerId, from.wallet_id, to.wallet_id, from.user_id, to.user_id, currency, amount.toFixed(), memo, "COMPLETED", key, entryId, now,
        ...side(source, "transfer_out", fromAfter, `Transfer of ${what} to wallet ${to.wallet_id}`),
        ...side(destination, "transfer_in", toAfter, `Transfer of ${what} from wallet ${from.wallet_id}`),
      ]);
      return now;
    });
    const view = {
      transfer_id: id,
      from_wallet_id: from.wallet_id,
      to_wallet_id: to.wallet_id,
      from_user_id: from.user_id,
      to_user_id: to.user_id,
      currency,
      amount: amount.toFixed(8),
      memo,
      status: "COMPLETED",
      idempotency_key: key,
      is_duplicate: false,
      created_at: createdAt.toISOString(),
    };
    ok(res, 201, JSON.stringify(view), traceId);
  };
}

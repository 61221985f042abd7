/**
 * The custody ledger on PostgreSQL: posts balanced journal entries, keeps each wallet account's
 * cached balance in the same transaction, derives the external accounts' balances from their
 * postings, and can check and rebuild the cache from the postings.
 *
 * Concurrency: {@link LedgerService.post} locks the entry's wallet accounts (`SELECT … FOR UPDATE`,
 * in id order so two entries never deadlock) before reading their balances, so concurrent holds on
 * one wallet are serialised and available money is never spent twice; a transfer locks the two
 * wallets' available accounts the same way ({@link LedgerService.transfer}). External (network) accounts
 * are append-only (src/domain/ledger.ts `balanceCached`; docs/decisions/customers-users-and-wallets.md "The custody ledger"): a post neither locks nor updates
 * their row, so deposits and withdrawals of different wallets never wait for one another. The
 * posting's foreign key takes only PostgreSQL's `FOR KEY SHARE` lock on the external row, which
 * other postings share; nothing in the service locks that row more strongly.
 */
import { Tx, type Sql } from "../../db/sql.js";
import { DomainError } from "../../domain/errors.js";
import {
  accountCode,
  assertBalanced,
  balanceAllowed,
  balanceCached,
  postingsFor,
  tradePostings,
  transferPostings,
  type AccountRef,
  type EntryKind,
  type Posting,
} from "../../domain/ledger.js";
import { money, type Money } from "../../domain/money.js";
import {
  accountId,
  cacheMismatchRows,
  externalBalanceRows,
  insertAccount,
  lockAndReadAccounts,
  negativeAccountRows,
  rebuildCacheRows,
  unbalancedCurrencyRows,
  unbalancedEntryRows,
  walletAccountRows,
  writeEntry,
  type AccountRow,
} from "./repository.js";
import type { LedgerEntryKind } from "./entities.js";

/** A wallet's balance of one currency; amounts as exact decimal strings. */
export interface WalletCurrencyBalance {
  currency: string;
  available: Money;
  held: Money;
  /** available + held */
  balance: Money;
  /**
   * What the wallet owes in the currency after a reorg reversal its available could not cover
   * (docs/decisions/live-chains.md "Reorgs"; ./deficits.ts): present, and positive, only when the
   * rows read include the wallet's `wallet_deficit` rows (bucket `deficit`) and it owes something.
   */
  deficit?: Money;
}

/** A request to post one ledger operation (src/domain/ledger.ts `postingsFor`). */
export interface PostRequest {
  kind: EntryKind;
  walletId: string;
  network: string;
  currency: string;
  amount: Money;
  /** What caused the entry, e.g. `wallet_transaction:42`. */
  reference?: string;
}

/** What a journal entry records besides its postings. */
type EntryRecord = { kind: LedgerEntryKind; walletId: string; network: string; currency: string; amount: Money; reference?: string | undefined };

/** A request to post a transfer between two wallets (src/domain/ledger.ts `transferPostings`). */
export interface TransferPostRequest {
  fromWalletId: string;
  toWalletId: string;
  /** Recorded on the journal entry (the source wallet's network of the currency); no account of it is posted to. */
  network: string;
  currency: string;
  amount: Money;
  /** What caused the entry, e.g. `transfer:<id>`. */
  reference?: string;
}

/** The balance of an external (network) account, summed from its postings. */
export interface ExternalBalance {
  /** `external:<network>:<currency>` */
  code: string;
  network: string;
  currency: string;
  /**
   * Sum of the account's postings: minus the money of that network and currency in custody
   * (deposits in, confirmed withdrawals out). Zero or negative in a consistent ledger.
   */
  balance: Money;
}

/** What {@link LedgerService.verify} found; every list empty means the ledger is consistent. */
export interface LedgerCheck {
  /** Entries whose postings do not sum to zero in some currency. */
  unbalancedEntries: { entryId: number; currency: string; sum: string }[];
  /**
   * Wallet accounts whose cached balance differs from the sum of their postings (`cached` is
   * `none` if one has no cached balance, which a CHECK constraint forbids), and external accounts
   * holding a cached balance at all (they keep none: the value is stale; `fromPostings` is their
   * balance). Decimal strings.
   */
  cacheMismatches: { code: string; cached: string; fromPostings: string }[];
  /** Wallet accounts below zero. */
  negativeAccounts: { code: string; balance: string }[];
  /** Currencies whose postings, over all accounts, do not sum to zero. */
  unbalancedCurrencies: { currency: string; sum: string }[];
}

/** A balance-cache row of a wallet: one bucket of one currency (columns null on a wallet without accounts). */
export interface BalanceCacheRow {
  currency: string | null;
  bucket: string | null;
  /** numeric, as text */
  balance: string | null;
}

/**
 * A wallet's balance-cache rows grouped per currency, in the rows' order: `available` and `held`
 * from their buckets (0 when absent), `balance` their sum. Rows without a currency or balance are
 * skipped (the left join of a wallet with no accounts). Rows of bucket `deficit` (a wallet's
 * `wallet_deficit` amounts, one per network) sum to its `deficit`.
 */
export function currencyBalances(rows: readonly BalanceCacheRow[]): WalletCurrencyBalance[] {
  const byCurrency = new Map<string, WalletCurrencyBalance>();
  for (const row of rows) {
    if (row.currency === null || row.balance === null) continue;
    const item = byCurrency.get(row.currency) ?? { currency: row.currency, available: money(0), held: money(0), balance: money(0) };
    if (row.bucket === "available") item.available = money(row.balance);
    if (row.bucket === "held") item.held = money(row.balance);
    if (row.bucket === "deficit") item.deficit = (item.deficit ?? money(0)).plus(row.balance);
    item.balance = item.available.plus(item.held);
    byCurrency.set(row.currency, item);
  }
  return [...byCurrency.values()];
}

/** Posts and reads the ledger. A post runs in the caller's transaction (src/db/sql.ts `Tx`), so it commits or rolls back with the caller's other writes; a read runs where it is given. */
export class LedgerService {
  /** Creates the `available` and `held` accounts of `walletId` for each currency (idempotent). */
  async openWalletAccounts(tx: Sql, walletId: string, currencies: readonly string[]): Promise<void> {
    for (const currency of new Set(currencies)) {
      for (const bucket of ["available", "held"] as const) {
        await this.ensureAccount(tx, { bucket, walletId, currency });
      }
    }
  }

  /**
   * Locks the `available` accounts of `pairs` in `tx` in one statement, in id order as every post
   * does, so that a group of entries posted one after another (live deposit credits,
   * docs/decisions/live-chains.md "Deposits") holds them all first and cannot deadlock with a
   * transfer. Accounts that do not exist yet are skipped (the post creates them).
   */
  async lockAvailable(tx: Tx, pairs: readonly { walletId: string; currency: string }[]): Promise<void> {
    const codes = [...new Set(pairs.map(({ walletId, currency }) => accountCode({ bucket: "available", walletId, currency })))];
    if (codes.length > 0) await lockAndReadAccounts(tx, codes, []);
  }

  /**
   * Posts one operation: locks its wallet accounts (in id order), checks that no wallet bucket
   * would go below zero, writes the entry and its postings and updates the wallet accounts' cached
   * balances. The external account of a deposit or debit only gets its posting: its row is neither
   * locked nor updated (docs/decisions/customers-users-and-wallets.md "The custody ledger"). Runs in the caller's transaction
   * `tx`; the caller's other writes commit or roll back with it.
   *
   * Two statements when the accounts exist (docs/performance.md "What keeps the request path cheap": fewer round trips on the withdrawal path):
   * one locks the wallet accounts and reads the entry's other accounts and the wallet's other bucket
   * of the currency (repository.ts `lockAndReadAccounts`); one writes the entry, its postings and the new cached
   * balances (data-modifying CTEs). A missing account is created first (race-safe, in code order).
   * @returns the new entry's id and the wallet's balance of the currency after it (the other bucket
   *   as read at the lock, the posted ones as written).
   * @throws DomainError AMOUNT_MUST_BE_POSITIVE, INVALID_AMOUNT; INSUFFICIENT_BALANCE (400) when the
   *   wallet's available (or, for a debit or release, held) money does not cover the amount;
   *   Error when `tx` is no transaction (its locks would be released at once).
   */
  async post(tx: Tx, request: PostRequest): Promise<{ entryId: number; after: WalletCurrencyBalance }> {
    if (!(tx instanceof Tx)) throw new Error("LedgerService.post must run inside a transaction (src/db/sql.ts Db.transaction)");
    const postings = postingsFor(request.kind, request.walletId, request.network, request.currency, request.amount);
    const { entryId, after } = await this.book(tx, request, postings, [request.walletId]);
    return { entryId, after: after[0] as WalletCurrencyBalance };
  }

  /**
   * Takes `amount` of `currency` out of `walletId`'s available back to the network's external
   * account: one `deposit_reversal` entry, the deposit's postings reversed
   * (docs/decisions/live-chains.md "Reorgs": a credited deposit a reorg removed, or the later
   * credit that covers its deficit; ./deficits.ts). Runs in the caller's transaction, as {@link post}.
   * @returns the entry's id and the wallet's balance of the currency after it.
   * @throws DomainError INSUFFICIENT_BALANCE (400) when available does not cover `amount` (the
   *   caller takes at most what {@link walletBalances} read under lock); AMOUNT_MUST_BE_POSITIVE, INVALID_AMOUNT.
   */
  async reverse(tx: Tx, request: Omit<PostRequest, "kind">): Promise<{ entryId: number; after: WalletCurrencyBalance }> {
    if (!(tx instanceof Tx)) throw new Error("LedgerService.reverse must run inside a transaction (src/db/sql.ts Db.transaction)");
    const postings = postingsFor("deposit", request.walletId, request.network, request.currency, request.amount).map((p) => ({ account: p.account, amount: p.amount.neg() }));
    const { entryId, after } = await this.book(tx, { ...request, kind: "deposit_reversal" }, postings, [request.walletId]);
    return { entryId, after: after[0] as WalletCurrencyBalance };
  }

  /**
   * Posts a transfer (docs/decisions/limits-and-allowlist.md "Transfers"): one entry of kind
   * `transfer` (its `wallet_id` the source, its `reference` e.g. `transfer:<id>`) moves `amount`
   * from the source's available account to the destination's. Locks exactly those two accounts
   * (`FOR UPDATE`, in id order, in one statement, so two opposite transfers never deadlock) and
   * reads both wallets' held accounts; no external account, no other row. Runs in the caller's
   * transaction, as {@link post}.
   * @returns the entry's id and each wallet's balance of the currency after it.
   * @throws DomainError AMOUNT_MUST_BE_POSITIVE, INVALID_AMOUNT; INSUFFICIENT_BALANCE (400) when the
   *   source's available money does not cover the amount; Error when both wallets are one.
   */
  async transfer(tx: Tx, request: TransferPostRequest): Promise<{ entryId: number; from: WalletCurrencyBalance; to: WalletCurrencyBalance }> {
    const postings = transferPostings(request.fromWalletId, request.toWalletId, request.currency, request.amount);
    const entry = { kind: "transfer" as const, walletId: request.fromWalletId, network: request.network, currency: request.currency, amount: request.amount, reference: request.reference };
    const { entryId, after } = await this.book(tx, entry, postings, [request.fromWalletId, request.toWalletId]);
    return { entryId, from: after[0] as WalletCurrencyBalance, to: after[1] as WalletCurrencyBalance };
  }

  /**
   * Posts an order's two entries (docs/decisions/trading.md "The ledger"; src/domain/ledger.ts
   * `tradePostings`), kind `trade`, network `trading`, `reference` e.g. `order:<id>`: one per
   * currency, the wallet's available accounts of both currencies locked together (`FOR UPDATE`, in
   * id order, in one statement, so two opposite orders of one wallet never deadlock), the liquidity
   * and fees accounts only appended to. Runs in the caller's transaction, as {@link post}.
   * @returns the two entries' ids and the wallet's balances of the spent and received currencies after them.
   * @throws DomainError INSUFFICIENT_BALANCE (400) when the wallet's available balance of the spent
   *   currency does not cover it; AMOUNT_MUST_BE_POSITIVE, INVALID_AMOUNT.
   */
  async trade(
    tx: Tx,
    request: { walletId: string; spent: { currency: string; amount: Money }; received: { currency: string; amount: Money }; fees: Money; feeCurrency: string; reference: string },
  ): Promise<{ entryIds: [number, number]; spent: WalletCurrencyBalance; received: WalletCurrencyBalance }> {
    const legs = tradePostings(request.walletId, request.spent, request.received, request.fees, request.feeCurrency);
    const entry = (currency: string, amount: Money) => ({ kind: "trade" as const, walletId: request.walletId, network: "trading", currency, amount, reference: request.reference });
    const { entryIds, after } = await this.bookEntries(
      tx,
      [
        { entry: entry(request.spent.currency, request.spent.amount), postings: legs.spent },
        { entry: entry(request.received.currency, request.received.amount), postings: legs.received },
      ],
      [{ walletId: request.walletId, currency: request.spent.currency }, { walletId: request.walletId, currency: request.received.currency }],
    );
    return { entryIds: [entryIds[0] as number, entryIds[1] as number], spent: after[0] as WalletCurrencyBalance, received: after[1] as WalletCurrencyBalance };
  }

  /** Books `postings` as one entry ({@link bookEntries}); `wallets` are read in the entry's currency. */
  private async book(
    tx: Tx,
    entry: EntryRecord,
    postings: Posting[],
    wallets: readonly string[],
  ): Promise<{ entryId: number; after: WalletCurrencyBalance[] }> {
    const { entryIds, after } = await this.bookEntries(tx, [{ entry, postings }], wallets.map((walletId) => ({ walletId, currency: entry.currency })));
    return { entryId: entryIds[0] as number, after };
  }

  /**
   * Books each of `entries` (in a transaction): locks every wallet account they post to, in one
   * statement and id order, and reads their other accounts and the `available` and `held`
   * accounts of each of `balances`; refuses a wallet bucket going below zero; writes each entry, its
   * postings and the new cached balances. @returns the entries' ids and each of `balances` after them, in order.
   */
  private async bookEntries(
    em: Tx,
    entries: readonly { entry: EntryRecord; postings: Posting[] }[],
    balances: readonly { walletId: string; currency: string }[],
  ): Promise<{ entryIds: number[]; after: WalletCurrencyBalance[] }> {
    for (const e of entries) assertBalanced(e.postings);
    const all = entries.flatMap((e) => e.postings);
    const refs = new Map(all.map((p) => [accountCode(p.account), p.account]));
    const codes = [...refs.keys()].sort();
    // Only the accounts with a cached balance (the wallets') are locked; every kind has at least one.
    const walletCodes = codes.filter((code) => balanceCached((refs.get(code) as AccountRef).bucket));
    if (walletCodes.length === 0) throw new Error(`a ${entries[0]?.entry.kind ?? "?"} entry posts to no wallet account`);
    const buckets = balances.map(({ walletId, currency }) => (["available", "held"] as const).map((bucket) => accountCode({ bucket, walletId, currency })));
    const readCodes = [...new Set([...codes, ...buckets.flat()])].filter((code) => !walletCodes.includes(code));
    let rows = await lockAndReadAccounts(em, walletCodes, readCodes);
    const missing = codes.filter((code) => !rows.some((row) => row.code === code));
    if (missing.length > 0) {
      // Created in code order, as they are locked, so concurrent posts never deadlock.
      for (const code of missing) await this.ensureAccount(em, refs.get(code) as AccountRef);
      rows = await lockAndReadAccounts(em, walletCodes, readCodes);
    }
    const byCode = new Map(rows.map((row) => [row.code, row]));
    const next = new Map<string, Money>();
    const entryIds: number[] = [];
    for (const { entry, postings } of entries) {
      const changed = new Set<string>();
      for (const p of postings) {
        if (!balanceCached(p.account.bucket)) continue; // append-only: derived from its postings
        const row = byCode.get(accountCode(p.account));
        if (!row) throw new Error(`ledger account ${accountCode(p.account)} vanished`);
        if (row.balance === null) throw new Error(`wallet account ${row.code} has no cached balance`);
        const balance = (next.get(row.code) ?? money(row.balance)).plus(p.amount);
        if (!balanceAllowed(row.bucket, balance)) {
          throw new DomainError("INSUFFICIENT_BALANCE", `Insufficient ${row.bucket} ${p.account.currency} balance for this amount.`);
        }
        next.set(row.code, balance);
        changed.add(row.code);
      }
      entryIds.push(await writeEntry(em, {
        kind: entry.kind,
        walletId: entry.walletId,
        network: entry.network,
        currency: entry.currency,
        amount: entry.amount.toFixed(),
        reference: entry.reference ?? null,
        postings: postings.map((p) => ({ accountId: (byCode.get(accountCode(p.account)) as AccountRow).id, currency: p.account.currency, amount: p.amount.toFixed() })),
        balances: [...changed].map((code) => ({ code, balance: (next.get(code) as Money).toFixed() })),
      }));
    }
    const after = buckets.map((pair, i) => {
      const [available, held] = pair.map((code) => next.get(code) ?? money(byCode.get(code)?.balance ?? 0)) as [Money, Money];
      return { currency: (balances[i] as { currency: string }).currency, available, held, balance: available.plus(held) };
    });
    return { entryIds, after };
  }

  /**
   * The cached balances of a wallet, per currency (all its currencies, or those given), read
   * from the balance cache (reference: "Balances are read from an internal balance cache").
   * `lock` (with `currencies`, in a transaction): their accounts are locked `FOR UPDATE` in id
   * order, as a post locks them, until the transaction ends (a reversal reads what available
   * holds before it takes it: ./deficits.ts); a currency without accounts is absent.
   */
  async walletBalances(sql: Sql, walletId: string, currencies?: readonly string[], lock = false): Promise<WalletCurrencyBalance[]> {
    if (lock && currencies) {
      const codes = currencies.flatMap((currency) => (["available", "held"] as const).map((bucket) => accountCode({ bucket, walletId, currency })));
      const locked = await lockAndReadAccounts(sql, codes, []);
      return currencyBalances(locked.map((r) => ({ currency: r.code.slice(r.code.lastIndexOf(":") + 1), bucket: r.bucket, balance: r.balance })));
    }
    const rows = await walletAccountRows(sql, walletId);
    return currencyBalances(currencies ? rows.filter((row) => currencies.includes(row.currency)) : rows);
  }

  /**
   * The balances of the external (network) accounts, each summed from its postings when asked
   * (they keep no cache, docs/decisions/customers-users-and-wallets.md "The custody ledger"), by account code; only those of `network` and `currency` when
   * given. Reads every posting of those accounts: for checks and reports, not for a request path.
   */
  async externalBalances(sql: Sql, filter: { network?: string; currency?: string } = {}): Promise<ExternalBalance[]> {
    const rows = await externalBalanceRows(sql, filter);
    return rows.map((r) => ({ code: r.code, network: r.network, currency: r.currency, balance: money(r.balance) }));
  }

  /** Checks the ledger's invariants from the postings (read-only). */
  async verify(sql: Sql): Promise<LedgerCheck> {
    const unbalancedEntries = await unbalancedEntryRows(sql);
    const cacheMismatches = await cacheMismatchRows(sql);
    const negativeAccounts = await negativeAccountRows(sql);
    const unbalancedCurrencies = await unbalancedCurrencyRows(sql);
    return {
      unbalancedEntries: unbalancedEntries.map((r) => ({ entryId: Number(r.entry_id), currency: r.currency, sum: r.sum })),
      cacheMismatches: cacheMismatches.map((r) => ({ code: r.code, cached: r.cached, fromPostings: r.from_postings })),
      negativeAccounts,
      unbalancedCurrencies,
    };
  }

  /**
   * Rebuilds every wallet account's cached balance from the postings, and clears any value found
   * on an external account (they keep no cache), in the caller's transaction `tx`. Safe while the
   * service runs: every wallet account is locked first (in id order, as posts lock them), so the
   * sums include every committed posting of those accounts and no post runs in between. External
   * rows are not locked `FOR UPDATE`: a post holding its wallet locks takes a `FOR KEY SHARE` lock on
   * its external row (the posting's foreign key), and waiting for it here would deadlock.
   * @returns accounts changed.
   */
  async rebuildBalanceCache(tx: Tx): Promise<number> {
    return rebuildCacheRows(tx);
  }

  /**
   * The id of the account `ref`, creating it if needed (race-safe): a wallet bucket with a zero
   * cached balance, an external account with none.
   */
  private async ensureAccount(em: Sql, ref: AccountRef): Promise<string> {
    const code = accountCode(ref);
    const found = await accountId(em, code);
    if (found !== undefined) return found;
    const inserted = await insertAccount(em, {
      code,
      bucket: ref.bucket,
      walletId: ref.bucket === "available" || ref.bucket === "held" ? ref.walletId : null,
      network: ref.bucket === "external" ? ref.network : null,
      currency: ref.currency,
      balance: balanceCached(ref.bucket) ? "0" : null,
    });
    if (inserted !== undefined) return inserted;
    const existing = await accountId(em, code);
    if (existing === undefined) throw new Error(`ledger account ${code} could not be created`);
    return existing;
  }
}

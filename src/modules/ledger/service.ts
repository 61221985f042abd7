/**
 * The custody ledger on PostgreSQL: posts balanced journal entries, keeps each account's cached
 * balance in the same transaction, and can check and rebuild the cache from the postings.
 *
 * Concurrency: {@link LedgerService.post} locks the entry's accounts (`SELECT … FOR UPDATE`, in id
 * order so two entries never deadlock) before reading their balances, so concurrent holds on one
 * wallet are serialised and available money is never spent twice.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { DomainError } from "../../domain/errors.js";
import { accountCode, assertBalanced, balanceAllowed, postingsFor, type AccountRef, type EntryKind } from "../../domain/ledger.js";
import { money, type Money } from "../../domain/money.js";

/** A wallet's balance of one currency; amounts as exact decimal strings. */
export interface WalletCurrencyBalance {
  currency: string;
  available: Money;
  held: Money;
  /** available + held */
  balance: Money;
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

/** What {@link LedgerService.verify} found; every list empty means the ledger is consistent. */
export interface LedgerCheck {
  /** Entries whose postings do not sum to zero in some currency. */
  unbalancedEntries: { entryId: number; currency: string; sum: string }[];
  /** Accounts whose cached balance differs from the sum of their postings. */
  cacheMismatches: { code: string; cached: string; fromPostings: string }[];
  /** Wallet accounts below zero. */
  negativeAccounts: { code: string; balance: string }[];
  /** Currencies whose postings, over all accounts, do not sum to zero. */
  unbalancedCurrencies: { currency: string; sum: string }[];
}

interface AccountRow {
  id: string;
  code: string;
  bucket: "available" | "held" | "external";
  balance: string;
}

/** Posts and reads the ledger. Every method runs in the transaction of the `em` it is given. */
export class LedgerService {
  /** Creates the `available` and `held` accounts of `walletId` for each currency (idempotent). */
  async openWalletAccounts(em: EntityManager, walletId: string, currencies: readonly string[]): Promise<void> {
    for (const currency of new Set(currencies)) {
      for (const bucket of ["available", "held"] as const) {
        await this.ensureAccount(em, { bucket, walletId, currency });
      }
    }
  }

  /**
   * Posts one operation: locks its accounts, checks that no wallet bucket would go below zero,
   * writes the entry and its postings and updates the cached balances. Must run inside a
   * transaction (`em.transactional`); the caller's other writes commit or roll back with it.
   * @returns the new entry's id and the wallet's balance of the currency after it.
   * @throws DomainError AMOUNT_MUST_BE_POSITIVE, INVALID_AMOUNT; INSUFFICIENT_BALANCE (400) when the
   *   wallet's available (or, for a debit or release, held) money does not cover the amount;
   *   Error when called outside a transaction (the row locks would be released at once).
   */
  async post(em: EntityManager, request: PostRequest): Promise<{ entryId: number; after: WalletCurrencyBalance }> {
    if (!em.isInTransaction()) throw new Error("LedgerService.post must run inside a transaction (em.transactional)");
    const postings = postingsFor(request.kind, request.walletId, request.network, request.currency, request.amount);
    assertBalanced(postings);
    // Accounts are created, like they are locked, in one global order, so concurrent posts never deadlock.
    const refs = new Map(postings.map((p) => [accountCode(p.account), p.account]));
    const ids = new Map<string, string>();
    for (const code of [...refs.keys()].sort()) ids.set(code, await this.ensureAccount(em, refs.get(code) as AccountRef));
    const locked = await em.execute<AccountRow[]>(
      `select id, code, bucket, balance from ledger_account where id in (${[...ids.values()].map(() => "?").join(", ")}) order by id for update`,
      [...ids.values()],
    );
    const byCode = new Map(locked.map((row) => [row.code, row]));
    const next = new Map<string, Money>();
    for (const p of postings) {
      const row = byCode.get(accountCode(p.account));
      if (!row) throw new Error(`ledger account ${accountCode(p.account)} vanished`);
      const balance = (next.get(row.code) ?? money(row.balance)).plus(p.amount);
      if (!balanceAllowed(row.bucket, balance)) {
        throw new DomainError("INSUFFICIENT_BALANCE", `Insufficient ${row.bucket} ${request.currency} balance for this amount.`);
      }
      next.set(row.code, balance);
    }
    const [entry] = await em.execute<{ id: string }[]>(
      `insert into journal_entry (kind, wallet_id, network, currency, amount, reference, created_at) values (?, ?, ?, ?, ?, ?, now()) returning id`,
      [request.kind, request.walletId, request.network, request.currency, request.amount.toFixed(), request.reference ?? null],
    );
    const entryId = Number(entry?.id);
    for (const p of postings) {
      await em.execute(`insert into ledger_posting (entry_id, account_id, currency, amount) values (?, ?, ?, ?)`, [
        entryId,
        ids.get(accountCode(p.account)),
        p.account.currency,
        p.amount.toFixed(),
      ]);
    }
    for (const [code, balance] of next) {
      await em.execute(`update ledger_account set balance = ?, updated_at = now() where code = ?`, [balance.toFixed(), code]);
    }
    const [after] = await this.walletBalances(em, request.walletId, [request.currency]);
    if (!after) throw new Error("wallet balance missing after posting");
    return { entryId, after };
  }

  /**
   * The cached balances of a wallet, per currency (all its currencies, or those given), read
   * from the balance cache (reference: "Balances are read from an internal balance cache").
   */
  async walletBalances(em: EntityManager, walletId: string, currencies?: readonly string[]): Promise<WalletCurrencyBalance[]> {
    const rows = await em.execute<{ currency: string; bucket: string; balance: string }[]>(
      `select currency, bucket, balance from ledger_account where wallet_id = ? order by currency`,
      [walletId],
    );
    const byCurrency = new Map<string, WalletCurrencyBalance>();
    for (const row of rows) {
      if (currencies && !currencies.includes(row.currency)) continue;
      const item = byCurrency.get(row.currency) ?? { currency: row.currency, available: money(0), held: money(0), balance: money(0) };
      if (row.bucket === "available") item.available = money(row.balance);
      if (row.bucket === "held") item.held = money(row.balance);
      item.balance = item.available.plus(item.held);
      byCurrency.set(row.currency, item);
    }
    return [...byCurrency.values()];
  }

  /** Checks the ledger's invariants from the postings (read-only). */
  async verify(em: EntityManager): Promise<LedgerCheck> {
    const unbalancedEntries = await em.execute<{ entry_id: string; currency: string; sum: string }[]>(
      `select entry_id, currency, sum(amount)::text as sum from ledger_posting group by entry_id, currency having sum(amount) <> 0`,
    );
    const cacheMismatches = await em.execute<{ code: string; cached: string; from_postings: string }[]>(
      `select a.code, a.balance::text as cached, coalesce(s.total, 0)::text as from_postings
         from ledger_account a left join (select account_id, sum(amount) as total from ledger_posting group by account_id) s on s.account_id = a.id
        where a.balance <> coalesce(s.total, 0)`,
    );
    const negativeAccounts = await em.execute<{ code: string; balance: string }[]>(
      `select a.code, least(a.balance, coalesce(s.total, 0))::text as balance
         from ledger_account a left join (select account_id, sum(amount) as total from ledger_posting group by account_id) s on s.account_id = a.id
        where a.bucket <> 'external' and (a.balance < 0 or coalesce(s.total, 0) < 0)`,
    );
    const unbalancedCurrencies = await em.execute<{ currency: string; sum: string }[]>(
      `select currency, sum(amount)::text as sum from ledger_posting group by currency having sum(amount) <> 0`,
    );
    return {
      unbalancedEntries: unbalancedEntries.map((r) => ({ entryId: Number(r.entry_id), currency: r.currency, sum: r.sum })),
      cacheMismatches: cacheMismatches.map((r) => ({ code: r.code, cached: r.cached, fromPostings: r.from_postings })),
      negativeAccounts,
      unbalancedCurrencies,
    };
  }

  /**
   * Rebuilds every cached balance from the postings (in the caller's transaction; safe while the
   * service runs: every account is locked first, so the sums include every committed posting and
   * no post runs in between). @returns accounts changed.
   */
  async rebuildBalanceCache(em: EntityManager): Promise<number> {
    if (!em.isInTransaction()) throw new Error("LedgerService.rebuildBalanceCache must run inside a transaction");
    await em.execute(`select id from ledger_account order by id for update`);
    const result = await em.execute<{ affectedRows?: number; rowCount?: number }>(
      `update ledger_account a set balance = coalesce(s.total, 0), updated_at = now()
         from ledger_account a2 left join (select account_id, sum(amount) as total from ledger_posting group by account_id) s on s.account_id = a2.id
        where a.id = a2.id and a.balance <> coalesce(s.total, 0)`,
      [],
      "run",
    );
    return Number(result.affectedRows ?? result.rowCount ?? 0);
  }

  /** The id of the account `ref`, creating it with a zero balance if needed (race-safe). */
  private async ensureAccount(em: EntityManager, ref: AccountRef): Promise<string> {
    const code = accountCode(ref);
    const [found] = await em.execute<{ id: string }[]>(`select id from ledger_account where code = ?`, [code]);
    if (found) return String(found.id);
    const inserted = await em.execute<{ id: string }[]>(
      `insert into ledger_account (code, bucket, wallet_id, network, currency, balance, created_at, updated_at)
       values (?, ?, ?, ?, ?, 0, now(), now()) on conflict (code) do nothing returning id`,
      [code, ref.bucket, ref.bucket === "external" ? null : ref.walletId, ref.bucket === "external" ? ref.network : null, ref.currency],
    );
    if (inserted[0]) return String(inserted[0].id);
    const [existing] = await em.execute<{ id: string }[]>(`select id from ledger_account where code = ?`, [code]);
    if (!existing) throw new Error(`ledger account ${code} could not be created`);
    return String(existing.id);
  }
}

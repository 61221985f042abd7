/**
 * Custodial wallets (reference: "Wallets"; docs/decisions/customers-users-and-wallets.md "Wallets"): creation with one deposit address per
 * network, listing, balances from the ledger's cache, transaction history, and the deposit path.
 *
 * Visibility: the owner API key sees every wallet of its customer; a user token only its own
 * user's wallets. Another customer's or user's wallet id answers 404 `WALLET_NOT_FOUND`.
 */
import { randomUUID } from "node:crypto";
import type { FilterQuery } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import { DomainError, assertNoProblems, quote } from "../../domain/errors.js";
import { nameKey, unsafeNameProblems } from "../../domain/text.js";
import { decimalsOf, format8, money, type Money } from "../../domain/money.js";
import type { PageRequest } from "../../domain/paging.js";
import type { CatalogueCurrency, CustodyProvider } from "../../providers/provider.js";
import { currencyBalances, type LedgerService } from "../ledger/service.js";
import type { UserService } from "../users/service.js";
import { Wallet, WalletAddress, WalletTransaction, type WalletNetworkEntry } from "./entities.js";
import { walletIdOf } from "../../domain/ids.js";
import type { Db, Tx } from "../../db/sql.js";
import { keyCaller, priorResult, runOnce, type KeyCaller } from "../idempotency/service.js";
import { firstDeposit, repeatedDeposit, sandboxDepositRequest, type SandboxDepositInput, type SandboxDepositView } from "./sandbox-deposits.js";
import { assertMovable } from "../../domain/wallet-states.js";
import type { CurrencySwitches } from "../currencies/service.js";
import { guardMovements } from "./states.js";
import { addressHolder, insertTransaction, insertWallet, insertWalletAddress, transactionConfirmations, walletBalanceRows, type TransactionWrite, type WalletWrite } from "./repository.js";
import { transactionView, walletView, type CreateWalletInput, type WalletBalanceView, type WalletTransactionView, type WalletView } from "./views.js";

/** Who is asking: the customer, and for a user token the user it is limited to. */
export interface WalletCaller {
  customerId: string;
  /** Set for user tokens: only this user's wallets are visible. */
  userId?: string;
}

/** Maximum wallet name length (reference: Limits). */
export const WALLET_NAME_MAX = 100;
/** Largest amount the ledger accepts in one operation (numeric(38,18) holds 20 integer digits). */
export const MAX_AMOUNT = money("1e15");

/** Filters of List Wallet Transactions (reference: "Transaction query parameters"). */
export interface TransactionFilter {
  types?: string[];
  currency?: string;
  status?: string;
  /** Unix ms, inclusive. */
  from?: number;
  /** Unix ms, inclusive. */
  to?: number;
  amountGte?: string;
  amountLte?: string;
  sort: "ASC" | "DESC";
}

/** A confirmed on-chain deposit as a provider reports it (docs/decisions/provider-and-sandbox.md "One provider interface, one built-in provider"). */
export interface DepositNotification {
  network: string;
  /** The wallet's deposit address that received the funds. */
  address: string;
  currency: string;
  /** Positive decimal amount in the currency's units. */
  amount: Money;
  /** Transaction hash in the network's format. */
  hash: string;
}

/**
 * Which networks are live EVM networks (docs/decisions/live-chains.md): their value arrives on chain
 * only (no sandbox deposit), and sends on them are the service's own (src/modules/chains/sender.ts).
 * Built from the configuration by src/domain/live-chains.ts `liveNetworkSet`.
 */
export interface LiveNetworks {
  isLive(network: string): boolean;
  /** Whether `network` can hold `currency`: a live network its native coin and configured tokens only (src/domain/live-chains.ts). */
  holds(network: string, currency: string): boolean;
}

/** No live network: every network is the sandbox's. */
export const NO_LIVE_NETWORKS: LiveNetworks = { isLive: () => false, holds: () => true };

/** Wallets, balances, transactions and deposits. */
export class WalletService {
  constructor(
    private readonly provider: CustodyProvider,
    private readonly ledger: LedgerService,
    private readonly users: UserService,
    /** Where the hot reads ({@link balance}) and the changes (a new wallet, a deposit) run (src/db/sql.ts). */
    private readonly statements: Db,
    /** The operator's currency switches (src/modules/currencies/service.ts). */
    readonly switches: CurrencySwitches,
    /** The live EVM networks (the withdrawals ask them too). */
    readonly live: LiveNetworks = NO_LIVE_NETWORKS,
  ) {}

  /**
   * Opens a wallet for an active user: a vault wallet upstream, one deposit address per network,
   * and the ledger accounts of its currencies, in one transaction.
   * @throws DomainError USER_NOT_FOUND / RESOURCE_NOT_FOUND (404, deleted or not active),
   *   WALLET_NAME_REQUIRED / WALLET_NAME_MAX_LENGTH (400), BAD_REQUEST (unknown network or a
   *   repeated network/currency pair), INVALID_CURRENCY (unknown code), UNSUPPORTED_CURRENCY (not
   *   depositable on that network), CURRENCY_NOT_ACTIVE (custody switched off by the operator), RESOURCE_CONFLICT (409, name taken by another wallet of the
   *   user: names are compared by their NFKC, case-folded `nameKey`, so "main" and "Ｍａｉｎ" take
   *   "Main"; a unique index holds it under concurrency), CLIENT_NO_SUPPLIER_ID (400, no custody
   *   vault); ValidationFailed (422) for a name holding a zero-width or bidirectional-control
   *   character or a word mixing Latin, Cyrillic or Greek letters (src/domain/text.ts;
   *   docs/security.md "Names people compare").
   */
  async create(em: EntityManager, customerId: string, userId: string, input: CreateWalletInput): Promise<WalletView> {
    const user = await this.users.findLive(em, customerId, userId);
    if (!user.isActive) throw new DomainError("RESOURCE_NOT_FOUND", `User ${quote(userId)} is not active; activate the user first.`);
    const name = input.name.trim();
    if (name === "") throw new DomainError("WALLET_NAME_REQUIRED", "The wallet name is required.", "name");
    if ([...name].length > WALLET_NAME_MAX) {
      throw new DomainError("WALLET_NAME_MAX_LENGTH", `The wallet name must be at most ${WALLET_NAME_MAX} characters.`, "name");
    }
    assertNoProblems(unsafeNameProblems({ name: input.name })); // as sent: trim() would drop a U+FEFF at either end
    const networks = await this.checkNetworks(input.networks);
    const key = nameKey(name);
    if (await em.count(Wallet, { userId: user.userId, nameKey: key })) {
      throw new DomainError("RESOURCE_CONFLICT", `The user already has a wallet named ${quote(name)}.`, "name");
    }
    const walletId = randomUUID();
    try {
      const wallet = await this.statements.transaction(async (tx) => {
        const vaultWalletId = await this.provider.createVaultWallet(tx, customerId, walletId);
        const createdAt = new Date();
        const written: WalletWrite = {
          walletId,
          customerId,
          userId: user.userId,
          vaultWalletId,
          name,
          nameKey: key,
          description: input.description ?? null,
          walletType: input.wallet_type ?? "virtual",
          networks,
          status: "ACTIVE",
          createdAt,
        };
        await insertWallet(tx, written);
        // One address per network, allocated in network-name order: each allocation holds its
        // network's lock until commit, so two creates naming networks in opposite orders never deadlock.
        const byNetwork = new Map<string, string>();
        for (const name of [...new Set(networks.map((n) => n.name))].sort()) {
          byNetwork.set(name, await this.provider.createDepositAddress(tx, vaultWalletId, name));
        }
        for (const entry of networks) {
          const address = byNetwork.get(entry.name) as string;
          await insertWalletAddress(tx, { addressId: randomUUID(), walletId, network: entry.name, currency: entry.currency, address, createdAt: new Date() });
        }
        await this.ledger.openWalletAccounts(tx, walletId, networks.map((n) => n.currency));
        return { ...written, updatedAt: createdAt, statusReason: null, suspendedStatus: null, suspendedReason: null } as Wallet;
      });
      return await walletView(em, wallet);
    } catch (error) {
      // the driver's unique violation (SQLSTATE 23505) on the user's name keys
      if ((error as { code?: string }).code === "23505" && (error as { constraint?: string }).constraint === "wallet_user_name_key_unique") {
        throw new DomainError("RESOURCE_CONFLICT", `The user already has a wallet named ${quote(name)}.`, "name");
      }
      throw error;
    }
  }

  /**
   * A user's wallets, newest first.
   * @throws DomainError USER_NOT_FOUND / RESOURCE_NOT_FOUND, WALLET_NOT_FOUND (404, the user has no wallets; reference).
   */
  async list(em: EntityManager, customerId: string, userId: string, page: PageRequest): Promise<{ items: WalletView[]; total: number }> {
    const user = await this.users.findLive(em, customerId, userId);
    const [rows, total] = await em.findAndCount(
      Wallet,
      { userId: user.userId, customerId },
      { orderBy: { createdAt: "desc", walletId: "asc" }, limit: page.limit, offset: page.skip },
    );
    if (total === 0) throw new DomainError("WALLET_NOT_FOUND", `User ${quote(userId)} has no wallets.`);
    const items: WalletView[] = [];
    for (const wallet of rows) items.push(await walletView(em, wallet));
    return { items, total };
  }

  /**
   * The wallet `walletId` if the caller may see it.
   * @param field the body field that carried the id, for INVALID_WALLET_ID; absent for a path.
   * @throws DomainError INVALID_WALLET_ID (400, not a UUID: src/domain/ids.ts `walletIdOf`);
   *   WALLET_NOT_FOUND (404).
   */
  async visibleWallet(em: EntityManager, caller: WalletCaller, walletId: string, field?: string): Promise<Wallet> {
    const wallet = await em.findOne(Wallet, { walletId: walletIdOf(walletId, field), customerId: caller.customerId });
    if (!wallet || (caller.userId !== undefined && wallet.userId !== caller.userId)) {
      throw new DomainError("WALLET_NOT_FOUND", `Wallet ${quote(walletId)} not found.`);
    }
    return wallet;
  }

  /**
   * Balances of every currency of the wallet, from the balance cache (reference: "Balances are read
   * from an internal balance cache"), as 8-decimal strings: `balance` = `available` + `held`, in
   * currency order. One prepared statement checks the wallet's visibility and reads its balance
   * rows (docs/performance.md "What keeps the request path cheap").
   * @throws DomainError INVALID_WALLET_ID (400, not a UUID); WALLET_NOT_FOUND (404) when the caller
   *   may not see the wallet.
   */
  async balance(caller: WalletCaller, walletId: string): Promise<WalletBalanceView> {
    const rows = await walletBalanceRows(this.statements, walletIdOf(walletId), caller.customerId);
    const first = rows[0];
    if (!first || (caller.userId !== undefined && first.user_id !== caller.userId)) {
      throw new DomainError("WALLET_NOT_FOUND", `Wallet ${quote(walletId)} not found.`);
    }
    return {
      wallet_id: first.wallet_id,
      user_id: first.user_id,
      status: first.status,
      status_reason: first.status_reason,
      balance: currencyBalances(rows).map((b) => ({
        currency: b.currency,
        balance: format8(b.balance),
        available: format8(b.available),
        held: format8(b.held),
        ...(b.deficit && { deficit: format8(b.deficit) }),
      })),
    };
  }

  /**
   * The wallet's transactions on its own addresses, filtered and sorted by date.
   * @throws DomainError WALLET_NOT_FOUND.
   */
  async transactions(
    em: EntityManager,
    caller: WalletCaller,
    walletId: string,
    page: PageRequest,
    filter: TransactionFilter,
  ): Promise<{ items: WalletTransactionView[]; total: number }> {
    const wallet = await this.visibleWallet(em, caller, walletId);
    const addresses = (await em.find(WalletAddress, { walletId: wallet.walletId })).map((a) => a.address);
    const where: FilterQuery<WalletTransaction> = { walletId: wallet.walletId, address: { $in: [...new Set(addresses)] } };
    if (filter.types && filter.types.length > 0) where.action = { $in: filter.types };
    if (filter.currency) where.currency = filter.currency.toLowerCase();
    if (filter.status) where.status = filter.status;
    if (filter.from !== undefined || filter.to !== undefined) {
      where.createdAt = {
        ...(filter.from !== undefined && { $gte: new Date(filter.from) }),
        ...(filter.to !== undefined && { $lte: new Date(filter.to) }),
      };
    }
    if (filter.amountGte !== undefined || filter.amountLte !== undefined) {
      where.amount = {
        ...(filter.amountGte !== undefined && { $gte: filter.amountGte }),
        ...(filter.amountLte !== undefined && { $lte: filter.amountLte }),
      };
    }
    const direction = filter.sort === "ASC" ? "asc" : "desc";
    const [rows, total] = await em.findAndCount(WalletTransaction, where, {
      orderBy: { createdAt: direction, id: direction },
      limit: page.limit,
      offset: page.skip,
    });
    const deposits = rows.filter((t) => t.action === "deposit").map((t) => Number(t.id));
    const confirmations = await transactionConfirmations(this.statements, deposits); // live deposits only (docs/decisions/live-chains.md "Deposits")
    return { items: rows.map((t) => transactionView(t, confirmations.get(Number(t.id)))), total };
  }

  /**
   * Books a confirmed on-chain deposit: finds the wallet by its address, credits its available
   * balance through the ledger and records a `deposit` transaction with status `done`, in one
   * transaction. This is the path a provider's deposit notification takes.
   * @throws DomainError ADDRESS_NOT_FOUND (404, no wallet holds this address and currency),
   *   AMOUNT_MUST_BE_POSITIVE, INVALID_AMOUNT (more decimals than the currency's precision, or too large).
   */
  async recordConfirmedDeposit(em: EntityManager, deposit: DepositNotification): Promise<WalletTransactionView> {
    const book = await this.depositBooking(deposit, false, null);
    return this.statements.transaction((tx) => book(tx, randomUUID()));
  }

  /**
   * The booking of {@link recordConfirmedDeposit} once the currency and amount are checked: run in a
   * transaction with the deposit's `order_id`. `byRequest` (a sandbox deposit, `idempotencyId` its
   * key) also passes the movement guard (./states.ts `guardMovements`: a suspended or deactivated wallet refuses it).
   */
  private async depositBooking(deposit: DepositNotification, byRequest: boolean, idempotencyId: string | null): Promise<(tx: Tx, orderId: string) => Promise<WalletTransactionView>> {
    const currency = await this.currency(deposit.currency);
    checkAmount(deposit.amount, currency);
    return async (tx, orderId) => {
      const wallet = await addressHolder(tx, deposit.network, deposit.address, currency.code);
      if (!wallet) throw new DomainError("ADDRESS_NOT_FOUND", `No wallet holds ${currency.code} at ${quote(deposit.address)} on ${quote(deposit.network)}.`);
      if (byRequest) await guardMovements(tx, [{ walletId: wallet.walletId, direction: "in", field: "wallet_id" }]);
      const { entryId, after } = await this.ledger.post(tx, {
        kind: "deposit",
        walletId: wallet.walletId,
        network: deposit.network,
        currency: currency.code,
        amount: deposit.amount,
        reference: `deposit:${deposit.network}:${deposit.hash}`,
      });
      const amount = deposit.amount.toFixed();
      const transaction: TransactionWrite = {
        walletId: wallet.walletId,
        customerId: wallet.customerId,
        network: deposit.network,
        address: deposit.address,
        action: "deposit",
        status: "done",
        currency: currency.code,
        amount,
        fees: "0",
        netProceeds: amount,
        price: "0",
        balanceAfter: after.balance.toFixed(),
        hash: deposit.hash,
        memo: "",
        description: `Deposit of ${format8(deposit.amount)} ${currency.symbol} on ${deposit.network}`,
        orderId,
        tradeId: "",
        idempotencyId,
        journalEntryId: entryId,
        createdAt: new Date(),
      };
      const id = await insertTransaction(tx, transaction);
      return transactionView({ ...transaction, id, symbol: null } as WalletTransaction);
    };
  }

  /**
   * Sandbox test helper (docs/decisions/provider-and-sandbox.md "Test helpers"): credits `walletId` as a confirmed deposit (on a
   * chain, or an incoming bank transfer on a rail: docs/decisions/fiat.md) with a made-up transaction hash or rail reference, as {@link recordConfirmedDeposit} books one,
   * once per `Idempotency-Key` of caller `by` (generated when absent: ./sandbox-deposits.ts, docs/idempotency.md): a repeat is answered first, with the first deposit. Then, in order: the
   * wallet (found, then its state: docs/decisions/customers-users-and-wallets.md "Wallet states"),
   * the currency and its deposit switch, the address, the amount. On a live network it answers
   * before it looks at the wallet: value there arrives on chain only (docs/decisions/live-chains.md).
   * @throws DomainError IDEMPOTENCY_KEY_REUSED (409); BAD_REQUEST (400, a live network); INVALID_WALLET_ID (400); WALLET_NOT_FOUND (404); WALLET_SUSPENDED,
   *   WALLET_INACTIVE, INVALID_CURRENCY, CURRENCY_NOT_ACTIVE (deposits switched off), ADDRESS_NOT_FOUND
   *   (the wallet has no address for this network and currency), AMOUNT_MUST_BE_POSITIVE,
   *   INVALID_AMOUNT (400).
   */
  async sandboxDeposit(em: EntityManager, customerId: string, input: SandboxDepositInput, idempotencyKey?: string, by?: KeyCaller | null): Promise<SandboxDepositView> {
    const once = sandboxDepositRequest(customerId, input, idempotencyKey ?? randomUUID(), keyCaller(by));
    const prior = await priorResult(this.statements, once);
    if (prior) return repeatedDeposit(em, customerId, input.wallet_id, once.key, prior);
    if (this.live.isLive(input.network)) {
      throw new DomainError("BAD_REQUEST", `${quote(input.network)} is a live network: deposits on it arrive on chain only, at the wallet's deposit address.`, "network");
    }
    const wallet = await this.visibleWallet(em, { customerId }, input.wallet_id, "wallet_id");
    assertMovable(wallet, "in", "wallet_id");
    const currency = (await this.currency(input.currency)).code;
    await this.switches.assertOn(currency, "canDeposit");
    const address = await em.findOne(WalletAddress, { walletId: wallet.walletId, network: input.network, currency });
    if (!address) throw new DomainError("ADDRESS_NOT_FOUND", `Wallet ${quote(input.wallet_id)} has no ${currency} address on ${quote(input.network)}.`);
    const hash = this.provider.newTransactionHash(input.network);
    const book = await this.depositBooking({ network: input.network, address: address.address, currency, amount: money(input.amount), hash }, true, idempotencyKey ?? null);
    const booked = await runOnce(this.statements, once, book);
    return booked.duplicate ? repeatedDeposit(em, customerId, wallet.walletId, once.key, booked.resultId) : firstDeposit(booked.value, once.key);
  }

  /** The catalogue entry of `code` (case-insensitive). @throws DomainError INVALID_CURRENCY (naming `field`). */
  async currency(code: string, field = "currency"): Promise<CatalogueCurrency> {
    const found = (await this.provider.listCurrencies()).find((c) => c.code === code.toLowerCase());
    if (!found) throw new DomainError("INVALID_CURRENCY", `Unknown currency ${quote(code)}.`, field);
    return found;
  }

  private async checkNetworks(entries: readonly WalletNetworkEntry[]): Promise<WalletNetworkEntry[]> {
    const supported = this.provider.supportedNetworks();
    const seen = new Set<string>();
    const result: WalletNetworkEntry[] = [];
    for (const [i, entry] of entries.entries()) {
      if (!supported.includes(entry.name)) {
        throw new DomainError("BAD_REQUEST", `Unknown network ${quote(entry.name)}; supported: ${supported.join(", ")}.`, `networks.${i}.name`);
      }
      const currency = await this.currency(entry.currency, `networks.${i}.currency`);
      if (!currency.canDeposit || !currency.networks.includes(entry.name)) {
        throw new DomainError("UNSUPPORTED_CURRENCY", `${currency.code} cannot be held on ${quote(entry.name)}.`, `networks.${i}.currency`);
      }
      if (!this.live.holds(entry.name, currency.code)) {
        throw new DomainError("UNSUPPORTED_CURRENCY", `${currency.code} is not held on the live network ${quote(entry.name)}: its token contract is not configured (CHAIN_*_TOKENS).`, `networks.${i}.currency`);
      }
      await this.switches.assertOn(currency.code, "isCustodyEnabled", `networks.${i}.currency`);
      const key = `${entry.name} ${currency.code}`;
      if (seen.has(key)) throw new DomainError("BAD_REQUEST", `${currency.code} on ${quote(entry.name)} is listed twice.`, `networks.${i}`);
      seen.add(key);
      result.push({ name: entry.name, currency: currency.code });
    }
    return result;
  }
}

/** @throws DomainError AMOUNT_MUST_BE_POSITIVE, INVALID_AMOUNT (too many decimals for the currency, or too large). */
export function checkAmount(amount: Money, currency: CatalogueCurrency): void {
  if (!amount.isFinite() || amount.lte(0)) throw new DomainError("AMOUNT_MUST_BE_POSITIVE", "The amount must be greater than zero.", "amount");
  if (decimalsOf(amount) > currency.precision) {
    throw new DomainError("INVALID_AMOUNT", `${currency.code} amounts have at most ${currency.precision} decimals.`, "amount");
  }
  if (amount.gte(MAX_AMOUNT)) throw new DomainError("INVALID_AMOUNT", "The amount is too large.", "amount");
}

/**
 * Custodial wallets (reference: "Wallets"; issue 3): creation with one deposit address per
 * network, listing, balances from the ledger's cache, transaction history, and the deposit path.
 *
 * Visibility: the owner API key sees every wallet of its customer; a user token only its own
 * user's wallets. Another customer's or user's wallet id answers 404 `WALLET_NOT_FOUND`.
 */
import { randomUUID } from "node:crypto";
import { UniqueConstraintViolationException, type FilterQuery } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { components } from "../../../generated/types/platform.js";
import { DomainError, assertNoProblems, quote } from "../../domain/errors.js";
import { nameKey, unsafeNameProblems } from "../../domain/text.js";
import { decimalsOf, format8, money, toNumber, type Money } from "../../domain/money.js";
import type { PageRequest } from "../../http/envelope.js";
import type { CatalogueCurrency, CustodyProvider } from "../../providers/provider.js";
import { currencyBalances, type BalanceCacheRow, type LedgerService } from "../ledger/service.js";
import type { UserService } from "../users/service.js";
import { Wallet, WalletAddress, WalletTransaction, type WalletNetworkEntry } from "./entities.js";
import { isUuid } from "../../domain/ids.js";
import type { PreparedStatement, Statements } from "../../db/statements.js";

type Schemas = components["schemas"];
/** Wallet as the API shows it (schema `Wallet`). */
export type WalletView = Schemas["Wallet"];
/** Wallet balance as the API shows it (schema `WalletBalance`). */
export type WalletBalanceView = Schemas["WalletBalance"];
/** Wallet transaction as the API shows it (schema `WalletTransaction`). */
export type WalletTransactionView = Schemas["WalletTransaction"];
/** Body of Create Wallet (schema `CreateWalletRequest`). */
export type CreateWalletInput = Schemas["CreateWalletRequest"];

/** Who is asking: the customer, and for a user token the user it is limited to. */
export interface WalletCaller {
  customerId: string;
  /** Set for user tokens: only this user's wallets are visible. */
  userId?: string;
}

/** A row of {@link WALLET_BALANCE}: the wallet, and one of its balance-cache accounts (null columns when it has none). */
interface WalletBalanceRow extends BalanceCacheRow {
  wallet_id: string;
  user_id: string;
}

/**
 * A wallet of a customer (`$1` wallet id, `$2` customer id) with its balance-cache accounts
 * (`ledger_account` rows of buckets `available` and `held`), in currency order.
 */
const WALLET_BALANCE: PreparedStatement = {
  name: "wallet_balance",
  text: `select w.wallet_id, w.user_id, a.currency, a.bucket, a.balance::text as balance
           from wallet w left join ledger_account a on a.wallet_id = w.wallet_id and a.bucket in ('available', 'held')
          where w.wallet_id = $1::uuid and w.customer_id = $2
          order by a.currency, a.bucket`,
};

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

/** A confirmed on-chain deposit as a provider reports it (decisions.md §3). */
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


/** Wallets, balances, transactions and deposits. */
export class WalletService {
  constructor(
    private readonly provider: CustodyProvider,
    private readonly ledger: LedgerService,
    private readonly users: UserService,
    /** Prepared statements of the hot reads ({@link balance}). */
    private readonly statements: Statements,
  ) {}

  /**
   * Opens a wallet for an active user: a vault wallet upstream, one deposit address per network,
   * and the ledger accounts of its currencies, in one transaction.
   * @throws DomainError USER_NOT_FOUND / RESOURCE_NOT_FOUND (404, deleted or not active),
   *   WALLET_NAME_REQUIRED / WALLET_NAME_MAX_LENGTH (400), BAD_REQUEST (unknown network or a
   *   repeated network/currency pair), INVALID_CURRENCY (unknown code), UNSUPPORTED_CURRENCY (not
   *   depositable on that network), RESOURCE_CONFLICT (409, name taken by another wallet of the
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
      return await em.transactional(async (tx) => {
        const vaultWalletId = await this.provider.createVaultWallet(tx, customerId, walletId);
        const wallet = tx.create(Wallet, {
          walletId,
          customerId,
          userId: user.userId,
          vaultWalletId,
          name,
          nameKey: key,
          description: input.description ?? null,
          walletType: input.wallet_type ?? "virtual",
          networks,
          isActive: true,
        });
        await tx.flush();
        const byNetwork = new Map<string, string>();
        for (const entry of networks) {
          const address = byNetwork.get(entry.name) ?? (await this.provider.createDepositAddress(tx, vaultWalletId, entry.name));
          byNetwork.set(entry.name, address);
          tx.create(WalletAddress, { addressId: randomUUID(), walletId, network: entry.name, currency: entry.currency, address });
        }
        await tx.flush();
        await this.ledger.openWalletAccounts(tx, walletId, networks.map((n) => n.currency));
        return this.view(tx, wallet);
      });
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException && (error as { constraint?: string }).constraint === "wallet_user_name_key_unique") {
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
    for (const wallet of rows) items.push(await this.view(em, wallet));
    return { items, total };
  }

  /** The wallet `walletId` if the caller may see it. @throws DomainError WALLET_NOT_FOUND (404). */
  async visibleWallet(em: EntityManager, caller: WalletCaller, walletId: string): Promise<Wallet> {
    const wallet = isUuid(walletId) ? await em.findOne(Wallet, { walletId: walletId.toLowerCase(), customerId: caller.customerId }) : null;
    if (!wallet || (caller.userId !== undefined && wallet.userId !== caller.userId)) {
      throw new DomainError("WALLET_NOT_FOUND", `Wallet ${quote(walletId)} not found.`);
    }
    return wallet;
  }

  /**
   * Balances of every currency of the wallet, from the balance cache (reference: "Balances are read
   * from an internal balance cache"), as 8-decimal strings: `balance` = `available` + `held`, in
   * currency order. One prepared statement checks the wallet's visibility and reads its balance
   * rows (issue 10, hot path).
   * @throws DomainError WALLET_NOT_FOUND (404) when the caller may not see the wallet.
   */
  async balance(caller: WalletCaller, walletId: string): Promise<WalletBalanceView> {
    if (!isUuid(walletId)) throw new DomainError("WALLET_NOT_FOUND", `Wallet ${quote(walletId)} not found.`);
    const rows = await this.statements.rows<WalletBalanceRow>(WALLET_BALANCE, [walletId.toLowerCase(), caller.customerId]);
    const first = rows[0];
    if (!first || (caller.userId !== undefined && first.user_id !== caller.userId)) {
      throw new DomainError("WALLET_NOT_FOUND", `Wallet ${quote(walletId)} not found.`);
    }
    return {
      wallet_id: first.wallet_id,
      user_id: first.user_id,
      balance: currencyBalances(rows).map((b) => ({
        currency: b.currency,
        balance: format8(b.balance),
        available: format8(b.available),
        held: format8(b.held),
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
    return { items: rows.map(transactionView), total };
  }

  /**
   * Books a confirmed on-chain deposit: finds the wallet by its address, credits its available
   * balance through the ledger and records a `deposit` transaction with status `done`, in one
   * transaction. This is the path a provider's deposit notification takes.
   * @throws DomainError ADDRESS_NOT_FOUND (404, no wallet holds this address and currency),
   *   AMOUNT_MUST_BE_POSITIVE, INVALID_AMOUNT (more decimals than the currency's precision, or too large).
   */
  async recordConfirmedDeposit(em: EntityManager, deposit: DepositNotification): Promise<WalletTransactionView> {
    const currency = await this.currency(deposit.currency);
    checkAmount(deposit.amount, currency);
    return em.transactional(async (tx) => {
      const target = await tx.findOne(WalletAddress, { network: deposit.network, address: deposit.address, currency: currency.code });
      if (!target) throw new DomainError("ADDRESS_NOT_FOUND", `No wallet holds ${currency.code} at ${quote(deposit.address)} on ${quote(deposit.network)}.`);
      const wallet = await tx.findOneOrFail(Wallet, { walletId: target.walletId });
      const { entryId, after } = await this.ledger.post(tx, {
        kind: "deposit",
        walletId: wallet.walletId,
        network: deposit.network,
        currency: currency.code,
        amount: deposit.amount,
        reference: `deposit:${deposit.network}:${deposit.hash}`,
      });
      const amount = deposit.amount.toFixed();
      const transaction = tx.create(WalletTransaction, {
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
        orderId: randomUUID(),
        tradeId: "",
        idempotencyId: null,
        journalEntryId: entryId,
        createdAt: new Date(),
      });
      await tx.flush();
      return transactionView(transaction);
    });
  }

  /**
   * Sandbox test helper (decisions.md §3): credits `walletId` as a confirmed on-chain deposit with a
   * made-up transaction hash, through {@link recordConfirmedDeposit}.
   * @throws DomainError WALLET_NOT_FOUND, ADDRESS_NOT_FOUND (the wallet has no address for this
   *   network and currency), AMOUNT_MUST_BE_POSITIVE, INVALID_AMOUNT, INVALID_CURRENCY.
   */
  async sandboxDeposit(
    em: EntityManager,
    customerId: string,
    /** `amount`: a number, or the exact decimal text of a JSON number a double cannot hold. */
    input: { wallet_id: string; network: string; currency: string; amount: number | string },
  ): Promise<WalletTransactionView> {
    const wallet = await this.visibleWallet(em, { customerId }, input.wallet_id);
    const currency = (await this.currency(input.currency)).code;
    const address = await em.findOne(WalletAddress, { walletId: wallet.walletId, network: input.network, currency });
    if (!address) throw new DomainError("ADDRESS_NOT_FOUND", `Wallet ${quote(input.wallet_id)} has no ${currency} address on ${quote(input.network)}.`);
    return this.recordConfirmedDeposit(em, {
      network: input.network,
      address: address.address,
      currency,
      amount: money(input.amount),
      hash: this.provider.newTransactionHash(input.network),
    });
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
      const key = `${entry.name} ${currency.code}`;
      if (seen.has(key)) throw new DomainError("BAD_REQUEST", `${currency.code} on ${quote(entry.name)} is listed twice.`, `networks.${i}`);
      seen.add(key);
      result.push({ name: entry.name, currency: currency.code });
    }
    return result;
  }

  private async view(em: EntityManager, wallet: Wallet): Promise<WalletView> {
    const addresses = await em.find(WalletAddress, { walletId: wallet.walletId }, { orderBy: { createdAt: "asc", addressId: "asc" } });
    return {
      wallet_id: wallet.walletId,
      vault_wallet_id: wallet.vaultWalletId,
      user_id: wallet.userId,
      name: wallet.name,
      description: wallet.description ?? null,
      wallet_type: wallet.walletType,
      networks: wallet.networks,
      is_active: wallet.isActive,
      addresses: wallet.networks.map((n) => {
        const a = addresses.find((x) => x.network === n.name && x.currency === n.currency);
        if (!a) throw new Error(`wallet ${wallet.walletId} lacks its ${n.name} ${n.currency} address`);
        return { address_id: a.addressId, currency: a.currency, network: a.network, address: a.address };
      }),
      created_at: wallet.createdAt.toISOString(),
      updated_at: wallet.updatedAt.toISOString(),
    };
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

/** Renders a wallet transaction; amounts as JSON numbers, as the reference types them. */
export function transactionView(t: WalletTransaction): WalletTransactionView {
  return {
    id: Number(t.id),
    balance: toNumber(t.balanceAfter),
    transaction: {
      order_id: t.orderId,
      trade_id: t.tradeId,
      client_id: t.customerId,
      idempotency_id: t.idempotencyId ?? null,
      symbol: t.currency.toUpperCase(),
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
    },
  };
}

/**
 * Two-step crypto withdrawals (reference: "Withdrawals", "States and transitions › Withdrawal";
 * decisions.md §4; issue 4): initiate holds the amount and sends a one-time code; confirm with the
 * right code debits it exactly once; cancel releases it; resend voids the old code.
 *
 * Concurrency: every change of a withdrawal locks its row (`SELECT … FOR UPDATE`), so parallel
 * confirms see one PENDING withdrawal at most once; initiates of one user and currency are
 * serialised by an advisory lock (caps), and the ledger's account locks keep available money from
 * being held twice. The idempotency key is unique per customer in the database.
 */
import { createHash, randomUUID } from "node:crypto";
import { LockMode, UniqueConstraintViolationException, type FilterQuery } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { components } from "../../../generated/types/platform.js";
import type { WithdrawalCap } from "../../config.js";
import { DomainError, quote } from "../../domain/errors.js";
import { format8, money, toNumber, type Money } from "../../domain/money.js";
import {
  assertCancellable,
  assertConfirmable,
  assertResendable,
  assertResendAllowed,
  type CodeLimits,
  assertWithinCaps,
  capPeriods,
  codeError,
  judgeCode,
  newConfirmationCode,
} from "../../domain/withdrawals.js";
import type { PageRequest } from "../../http/envelope.js";
import type { CustodyProvider } from "../../providers/provider.js";
import type { SecretBox } from "../identity/secrets.js";
import type { LedgerService } from "../ledger/service.js";
import type { MailService } from "../mail/service.js";
import type { User } from "../users/entities.js";
import type { UserService } from "../users/service.js";
import { Wallet, WalletTransaction } from "../wallets/entities.js";
import { checkAmount, type WalletService } from "../wallets/service.js";
import { Withdrawal } from "./entities.js";
import { isUuid } from "../../domain/ids.js";

type Schemas = components["schemas"];
/**
 * Body of Initiate Withdrawal (schema `InitiateWithdrawalRequest`), with `amount` as the client
 * wrote it: a number, or the decimal text of a JSON number a double cannot hold (src/http/json-numbers.ts).
 */
export type InitiateInput = Omit<Schemas["InitiateWithdrawalRequest"], "amount"> & { amount: number | string };
/** Initiate response data (schema `InitiatedWithdrawal`). */
export type InitiatedView = Schemas["InitiatedWithdrawal"];
/** Withdrawal record of Get and List (schema `Withdrawal`). */
export type WithdrawalView = Schemas["Withdrawal"];

/** Settings of the withdrawals service (src/config.ts). */
export interface WithdrawalSettings extends CodeLimits {
  codeTtlS: number;
  caps: Readonly<Record<string, WithdrawalCap>>;
}

/** A new confirmation code of a withdrawal, as pushed to the customer's webhook (`withdrawal.pin`). */
export interface PinEvent {
  customerId: string;
  withdrawalId: string;
  userId: string;
  /** 6 digits when issued by the service, 4–8 when read from the mailbox. */
  code: string;
  /** UTC expiry of the code. */
  expiresAt: Date;
}

/**
 * The push channel of new codes (the customer's webhook, decisions.md §4–§5): `enqueuePin` writes
 * the notification to its outbox in the caller's transaction and says whether it did (not when no
 * enabled webhook is configured); `kick` starts its delivery after commit.
 */
export interface PinPush {
  enqueuePin(tx: EntityManager, pin: PinEvent): Promise<boolean>;
  kick(): void;
}

/** Outcome of {@link WithdrawalService.applyMailboxPin}. */
export type MailboxPinOutcome = "applied" | "not-found" | "not-pending";

/** Filters of List Withdrawals. */
export interface WithdrawalFilter {
  status?: "PENDING" | "COMPLETED" | "CANCELLED";
  currency?: string;
  sort: "ASC" | "DESC";
}


/** A code lifetime in words: `45 seconds`, `1 minute`, `10 minutes` (whole minutes from 2 minutes up). */
export function lifetime(seconds: number): string {
  if (seconds < 120) return seconds === 60 ? "1 minute" : `${seconds} seconds`;
  return `${Math.floor(seconds / 60)} minutes`;
}

/** Renders a withdrawal record. */
export function withdrawalView(w: Withdrawal): WithdrawalView {
  return {
    id: w.id,
    withdrawal_type: "crypto",
    currency: w.currency,
    amount: toNumber(w.amount),
    address: w.address,
    status: w.status,
    created_at: w.createdAt.toISOString(),
  };
}

/** Withdrawals of users' custodial wallets. */
export class WithdrawalService {
  constructor(
    private readonly provider: CustodyProvider,
    private readonly ledger: LedgerService,
    private readonly users: UserService,
    private readonly wallets: WalletService,
    private readonly mail: MailService,
    private readonly pins: PinPush,
    private readonly box: SecretBox,
    private readonly settings: WithdrawalSettings,
  ) {}

  /**
   * Initiates a withdrawal (decisions.md §4). A repeat with the same `Idempotency-Key` and body
   * returns the first withdrawal with `is_duplicate: true`. Checks, in this order: user exists and
   * is active; currency supported and withdrawable; amount positive and at least the minimum; address
   * valid for the currency's network; per-withdrawal, daily and monthly caps; available balance.
   * Then holds the amount, issues a code and emails it, in one transaction.
   * @throws DomainError IDEMPOTENCY_KEY_REUSED (409, same key, other body); USER_NOT_FOUND /
   *   RESOURCE_NOT_FOUND (404); INVALID_CURRENCY / UNSUPPORTED_CURRENCY; AMOUNT_MUST_BE_POSITIVE,
   *   INVALID_AMOUNT, MINIMUM_AMOUNT_NOT_MET; INVALID_CRYPTO_ADDRESS; WITHDRAWAL_LIMIT_EXCEEDED,
   *   DAILY_LIMIT_EXCEEDED, MONTHLY_LIMIT_EXCEEDED; WALLET_NOT_FOUND (404, `wallet_id` not the
   *   user's); INSUFFICIENT_BALANCE (all 400 unless noted).
   */
  async initiate(em: EntityManager, customerId: string, userId: string, input: InitiateInput, idempotencyKey?: string): Promise<InitiatedView> {
    const key = idempotencyKey ?? randomUUID();
    const fingerprint = this.fingerprint(userId, input);
    const existing = await em.findOne(Withdrawal, { customerId, idempotencyKey: key });
    if (existing) return this.repeat(existing, fingerprint);

    const user = await this.activeUser(em, customerId, userId);
    const currency = await this.wallets.currency(input.currency);
    if (!currency.canWithdraw || currency.networks.length === 0) {
      throw new DomainError("UNSUPPORTED_CURRENCY", `${currency.code} cannot be withdrawn.`, "currency");
    }
    const amount = money(input.amount);
    checkAmount(amount, currency);
    if (amount.lt(money(currency.minWithdrawal))) {
      throw new DomainError("MINIMUM_AMOUNT_NOT_MET", `The minimum ${currency.code} withdrawal is ${currency.minWithdrawal}.`, "amount");
    }
    const networks = currency.networks.filter((n) => this.provider.isValidAddress(n, input.address));
    if (networks.length === 0) {
      throw new DomainError("INVALID_CRYPTO_ADDRESS", `${quote(input.address)} is not a valid ${currency.code} address on ${currency.networks.join(" or ")}.`, "address");
    }

    let code = "";
    let outcome: { repeat: Withdrawal } | { created: Withdrawal; pushed: boolean };
    try {
      outcome = await em.transactional(async (tx) => {
        // Both locks in one statement and one order, key then user (the rows' order): parallel
        // repeats of one key wait here and then find the first withdrawal, before any cap or balance
        // check could refuse them; initiates of one user and currency are serialised for the caps.
        await tx.execute(`select pg_advisory_xact_lock(v.lock) from (values (1, hashtext(?)), (2, hashtext(?))) as v (n, lock) order by v.n`, [
          `withdrawal-key:${customerId}:${key}`,
          `withdrawal:${user.userId}:${currency.code}`,
        ]);
        const first = await tx.findOne(Withdrawal, { customerId, idempotencyKey: key });
        if (first) return { repeat: first };
        await this.checkCaps(tx, user, currency.code, amount);
        const { wallet, network } = await this.chooseWallet(tx, user, currency.code, networks, amount, input.wallet_id);
        code = newConfirmationCode();
        const withdrawal = tx.create(Withdrawal, {
          id: randomUUID(),
          customerId,
          userId: user.userId,
          walletId: wallet.walletId,
          network,
          currency: currency.code,
          amount: amount.toFixed(),
          address: input.address,
          memo: input.memo ?? null,
          status: "PENDING",
          codeHash: null,
          codeExpiresAt: new Date(),
          codeAttempts: 0,
          idempotencyKey: key,
          requestFingerprint: fingerprint,
          txHash: null,
          completedAt: null,
          cancelledAt: null,
        });
        this.setCode(withdrawal, code);
        await tx.flush();
        await this.ledger.post(tx, { kind: "hold", walletId: wallet.walletId, network, currency: currency.code, amount, reference: `withdrawal:${withdrawal.id}` });
        const pushed = await this.deliverCode(tx, user, withdrawal, code);
        await tx.flush();
        return { created: withdrawal, pushed };
      });
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException && (error as { constraint?: string }).constraint === "withdrawal_customer_idempotency_key_unique") {
        const winner = await em.fork().findOneOrFail(Withdrawal, { customerId, idempotencyKey: key });
        return this.repeat(winner, fingerprint);
      }
      throw error;
    }
    if ("repeat" in outcome) return this.repeat(outcome.repeat, fingerprint);
    this.kickDeliveries(outcome.pushed);
    return this.initiatedView(outcome.created, false);
  }

  /**
   * Confirms with the code: debits the held amount through the provider exactly once. The user
   * must be live and active. A wrong code counts an attempt (kept even though the call fails); the
   * wrong code that makes `WITHDRAWAL_CODE_MAX_TOTAL_ATTEMPTS` over the withdrawal's life cancels it
   * and releases its hold in the same transaction.
   * @throws DomainError USER_NOT_FOUND / RESOURCE_NOT_FOUND (404), WITHDRAWAL_NOT_FOUND (404), ALREADY_CONFIRMED / BAD_REQUEST (400, not
   *   PENDING), WITHDRAWAL_BLOCKED (403, too many wrong codes of this code, or of the withdrawal's life: then cancelled), CONFIRMATION_CODE_EXPIRED,
   *   CONFIRMATION_CODE_INVALID (400), CRYPTO_WITHDRAWAL_FAILED (400, provider refused).
   */
  async confirm(em: EntityManager, customerId: string, userId: string, withdrawalId: string, code: string): Promise<{ id: string; status: "COMPLETED" }> {
    await this.activeUser(em, customerId, userId);
    const failure = await em.transactional(async (tx) => {
      const w = await this.lockOwn(tx, customerId, userId, withdrawalId);
      assertConfirmable(w.status);
      const matches = typeof w.codeHash === "string" && this.box.matches(this.codeMaterial(w.id, code), w.codeHash);
      const verdict = judgeCode(
        { attempts: w.codeAttempts, failuresTotal: w.codeFailuresTotal, expiresAt: w.codeExpiresAt },
        new Date(),
        this.settings,
        matches,
      );
      if (verdict !== "right") {
        if (verdict === "wrong" || verdict === "exhausted") {
          w.codeAttempts += 1;
          w.codeFailuresTotal += 1;
        }
        if (verdict === "exhausted") await this.cancelHeld(tx, w, "too_many_attempts");
        return codeError(verdict, this.settings);
      }
      const source = await this.sourceOf(tx, w);
      const { hash } = await this.provider.executeWithdrawal(tx, {
        vaultWalletId: source.vaultWalletId,
        network: w.network,
        currency: w.currency,
        amount: w.amount,
        address: w.address,
      });
      const amount = money(w.amount);
      const { entryId, after } = await this.ledger.post(tx, {
        kind: "debit",
        walletId: w.walletId,
        network: w.network,
        currency: w.currency,
        amount,
        reference: `withdrawal:${w.id}`,
      });
      tx.create(WalletTransaction, {
        walletId: w.walletId,
        customerId: w.customerId,
        network: w.network,
        address: source.address,
        action: "withdrawal",
        status: "done",
        currency: w.currency,
        amount: amount.toFixed(),
        fees: "0",
        netProceeds: amount.toFixed(),
        price: "0",
        balanceAfter: after.balance.toFixed(),
        hash,
        memo: w.memo ?? "",
        description: `Withdrawal of ${format8(amount)} ${w.currency.toUpperCase()} to ${w.address} on ${w.network}`,
        orderId: w.id,
        tradeId: "",
        idempotencyId: w.idempotencyKey,
        journalEntryId: entryId,
        createdAt: new Date(),
      });
      w.status = "COMPLETED";
      w.completedAt = new Date();
      w.txHash = hash;
      w.codeHash = null;
      return null;
    });
    if (failure) throw failure;
    return { id: withdrawalId.toLowerCase(), status: "COMPLETED" };
  }

  /**
   * Resend Code: voids the old code, resets the attempt counter (not the life-time count of wrong
   * codes) and emails a new code. At most `WITHDRAWAL_CODE_MAX_RESENDS` per withdrawal, each
   * `WITHDRAWAL_CODE_RESEND_INTERVAL_S` after the previous code. The user must be live and active.
   * @throws DomainError USER_NOT_FOUND / RESOURCE_NOT_FOUND (404), WITHDRAWAL_NOT_FOUND, ALREADY_CONFIRMED / BAD_REQUEST (400, not PENDING),
   *   WITHDRAWAL_BLOCKED (403, resends used up), RATE_LIMIT_EXCEEDED (429, too soon; `Retry-After`).
   */
  async resendCode(em: EntityManager, customerId: string, userId: string, withdrawalId: string): Promise<{ message: string }> {
    const user = await this.activeUser(em, customerId, userId);
    const pushed = await em.transactional(async (tx) => {
      const w = await this.lockOwn(tx, customerId, userId, withdrawalId);
      assertResendable(w.status);
      assertResendAllowed({ resends: w.codeResends, issuedAt: w.codeIssuedAt }, new Date(), this.settings);
      const code = newConfirmationCode();
      this.setCode(w, code);
      w.codeResends += 1;
      return this.deliverCode(tx, user, w, code);
    });
    this.kickDeliveries(pushed);
    return { message: "A new confirmation code has been sent; the previous code no longer works." };
  }

  /**
   * A PIN read from the customer's mailbox by the email poller (decisions.md §4): while the
   * withdrawal is `PENDING`, the PIN becomes its code (keyed hash, a fresh `WITHDRAWAL_CODE_TTL_S`,
   * attempt counter reset, the previous code void) and is delivered to the user like an issued code
   * (email, and the customer's webhook), in one transaction. Never throws for a withdrawal that is
   * unknown, of another customer, or no longer pending: it says so in the outcome.
   * @param pin 4–8 digits.
   */
  async applyMailboxPin(em: EntityManager, customerId: string, withdrawalId: string, pin: string): Promise<MailboxPinOutcome> {
    if (!/^\d{4,8}$/.test(pin) || !isUuid(withdrawalId)) return "not-found";
    let pushed = false;
    const outcome = await em.transactional(async (tx): Promise<MailboxPinOutcome> => {
      const w = await tx.findOne(Withdrawal, { id: withdrawalId.toLowerCase(), customerId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!w) return "not-found";
      if (w.status !== "PENDING") return "not-pending";
      const user = await this.users.findLive(tx, customerId, w.userId).catch(() => null);
      if (!user) return "not-found";
      this.setCode(w, pin);
      pushed = await this.deliverCode(tx, user, w, pin);
      return "applied";
    });
    if (outcome === "applied") this.kickDeliveries(pushed);
    return outcome;
  }

  /**
   * Cancels a PENDING withdrawal and returns the held amount to available.
   * @throws DomainError WITHDRAWAL_NOT_FOUND, ALREADY_CONFIRMED (400, completed: cannot be reversed), BAD_REQUEST (already cancelled).
   */
  async cancel(em: EntityManager, customerId: string, userId: string, withdrawalId: string): Promise<void> {
    await this.users.find(em, customerId, userId);
    await em.transactional(async (tx) => {
      const w = await this.lockOwn(tx, customerId, userId, withdrawalId);
      assertCancellable(w.status);
      await this.cancelHeld(tx, w, "user");
    });
  }

  /** PENDING → CANCELLED in `tx`: releases the held amount to available and voids the code. */
  private async cancelHeld(tx: EntityManager, w: Withdrawal, reason: "user" | "too_many_attempts"): Promise<void> {
    await this.ledger.post(tx, {
      kind: "release",
      walletId: w.walletId,
      network: w.network,
      currency: w.currency,
      amount: money(w.amount),
      reference: `withdrawal:${w.id}`,
    });
    w.status = "CANCELLED";
    w.cancelledAt = new Date();
    w.cancelReason = reason;
    w.codeHash = null;
  }

  /** Reads one withdrawal of the user. @throws DomainError USER_NOT_FOUND, WITHDRAWAL_NOT_FOUND. */
  async get(em: EntityManager, customerId: string, userId: string, withdrawalId: string): Promise<WithdrawalView> {
    const user = await this.users.find(em, customerId, userId);
    const w = isUuid(withdrawalId) ? await em.findOne(Withdrawal, { id: withdrawalId.toLowerCase(), userId: user.userId, customerId }) : null;
    if (!w) throw new DomainError("WITHDRAWAL_NOT_FOUND", `Withdrawal ${quote(withdrawalId)} not found.`);
    return withdrawalView(w);
  }

  /** The user's withdrawals, most recent first by default. @throws DomainError USER_NOT_FOUND. */
  async list(em: EntityManager, customerId: string, userId: string, page: PageRequest, filter: WithdrawalFilter): Promise<{ items: WithdrawalView[]; total: number }> {
    const user = await this.users.find(em, customerId, userId);
    const where: FilterQuery<Withdrawal> = { userId: user.userId, customerId };
    if (filter.status) where.status = filter.status;
    if (filter.currency) where.currency = filter.currency.toLowerCase();
    const direction = filter.sort === "ASC" ? "asc" : "desc";
    const [rows, total] = await em.findAndCount(Withdrawal, where, { orderBy: { createdAt: direction, id: direction }, limit: page.limit, offset: page.skip });
    return { items: rows.map(withdrawalView), total };
  }

  /** The user, live and active. @throws DomainError USER_NOT_FOUND, RESOURCE_NOT_FOUND (deleted or not active). */
  private async activeUser(em: EntityManager, customerId: string, userId: string): Promise<User> {
    const user = await this.users.findLive(em, customerId, userId);
    if (!user.isActive) throw new DomainError("RESOURCE_NOT_FOUND", `User ${quote(userId)} is not active.`);
    return user;
  }

  /** SHA-256 of the canonical request: what makes a repeat a repeat. */
  private fingerprint(userId: string, input: InitiateInput): string {
    const canonical = JSON.stringify([
      userId.toLowerCase(),
      input.currency.toLowerCase(),
      money(input.amount).toFixed(),
      input.address,
      input.memo ?? null,
      input.wallet_id?.toLowerCase() ?? null,
    ]);
    return createHash("sha256").update(canonical).digest("hex");
  }

  /** The first result of an idempotency key, or 409 when the key is reused with another request. */
  private repeat(existing: Withdrawal, fingerprint: string): InitiatedView {
    if (existing.requestFingerprint !== fingerprint) {
      throw new DomainError("IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was already used with a different request.");
    }
    return this.initiatedView(existing, true);
  }

  private initiatedView(w: Withdrawal, duplicate: boolean): InitiatedView {
    return {
      id: w.id,
      withdraw: { id: w.id, status: w.status, idempotency_key: w.idempotencyKey, is_duplicate: duplicate },
      currency: w.currency,
      amount: toNumber(w.amount),
      address: w.address,
    };
  }

  /** What the keyed hash covers: the code bound to its withdrawal. */
  private codeMaterial(withdrawalId: string, code: string): string {
    return `withdrawal-code:${withdrawalId}:${code}`;
  }

  private setCode(w: Withdrawal, code: string): void {
    w.codeHash = this.box.hash(this.codeMaterial(w.id, code));
    w.codeIssuedAt = new Date();
    w.codeExpiresAt = new Date(w.codeIssuedAt.getTime() + this.settings.codeTtlS * 1000);
    w.codeAttempts = 0;
  }

  /**
   * Sends a new code to the user by email and, when the customer has a webhook, as `withdrawal.pin`
   * (both in `tx`). @returns whether a webhook notification was written.
   */
  private async deliverCode(tx: EntityManager, user: User, w: Withdrawal, code: string): Promise<boolean> {
    this.mail.enqueue(tx, this.codeEmail(user, w, code));
    return this.pins.enqueuePin(tx, { customerId: w.customerId, withdrawalId: w.id, userId: w.userId, code, expiresAt: w.codeExpiresAt });
  }

  /** Starts the delivery of what {@link deliverCode} wrote, after commit; the webhook job only when a notification was written. */
  private kickDeliveries(pushed: boolean): void {
    this.mail.kick();
    if (pushed) this.pins.kick();
  }

  private codeEmail(user: User, w: Withdrawal, code: string) {
    const expires = w.codeExpiresAt.toISOString();
    return {
      customerId: w.customerId,
      to: user.email,
      subject: `Confirm your withdrawal ${w.id}`,
      text: [
        `Hello ${user.firstName},`,
        "",
        `A withdrawal of ${format8(w.amount)} ${w.currency.toUpperCase()} to ${w.address} (${w.network}) is waiting for your confirmation.`,
        "",
        `Withdrawal: ${w.id}`,
        `Confirmation code: ${code}`,
        `The code expires at ${expires} (in ${lifetime(this.settings.codeTtlS)}) and works once.`,
        "",
        "If you did not ask for this withdrawal, do not share the code and cancel the withdrawal.",
      ].join("\n"),
      reference: `withdrawal:${w.id}`,
    };
  }

  /**
   * Where withdrawal `w` leaves from, in one statement: its wallet's vault at the provider and the
   * wallet's address on the withdrawal's network and currency (no entities loaded; issue 10).
   * @throws Error when the wallet or its address is missing (they are never deleted: a broken invariant, 500).
   */
  private async sourceOf(tx: EntityManager, w: Withdrawal): Promise<{ vaultWalletId: string; address: string }> {
    const [row] = await tx.execute<{ vault_wallet_id: string; address: string }[]>(
      `select w.vault_wallet_id, a.address from wallet w join wallet_address a on a.wallet_id = w.wallet_id and a.network = ? and a.currency = ? where w.wallet_id = ?`,
      [w.network, w.currency, w.walletId],
    );
    if (!row) throw new Error(`wallet ${w.walletId} or its ${w.currency} address on ${w.network} is missing`);
    return { vaultWalletId: row.vault_wallet_id, address: row.address };
  }

  /** The withdrawal, locked for this transaction. @throws DomainError WITHDRAWAL_NOT_FOUND. */
  private async lockOwn(tx: EntityManager, customerId: string, userId: string, withdrawalId: string): Promise<Withdrawal> {
    const w = isUuid(withdrawalId)
      ? await tx.findOne(Withdrawal, { id: withdrawalId.toLowerCase(), userId: userId.toLowerCase(), customerId }, { lockMode: LockMode.PESSIMISTIC_WRITE })
      : null;
    if (!w) throw new DomainError("WITHDRAWAL_NOT_FOUND", `Withdrawal ${quote(withdrawalId)} not found.`);
    return w;
  }

  private async checkCaps(tx: EntityManager, user: User, currency: string, amount: Money): Promise<void> {
    const { dayStart, monthStart } = capPeriods(new Date());
    const [sums] = await tx.execute<{ today: string; month: string }[]>(
      `select coalesce(sum(amount) filter (where created_at >= ?), 0)::text as today, coalesce(sum(amount), 0)::text as month
         from withdrawal where user_id = ? and currency = ? and status in ('PENDING', 'COMPLETED') and created_at >= ?`,
      [dayStart, user.userId, currency, monthStart],
    );
    assertWithinCaps(amount, this.settings.caps[currency], money(sums?.today ?? 0), money(sums?.month ?? 0));
  }

  /**
   * The wallet to withdraw from (decisions.md §4): `walletId` when given (it must be the user's and
   * hold the currency on a network of the address), else the user's oldest such wallet whose
   * available balance covers the amount.
   * @throws DomainError WALLET_NOT_FOUND (404), INSUFFICIENT_BALANCE (400).
   */
  private async chooseWallet(
    tx: EntityManager,
    user: User,
    currency: string,
    networks: readonly string[],
    amount: Money,
    walletId: string | undefined,
  ): Promise<{ wallet: Wallet; network: string }> {
    const candidates = walletId
      ? [await this.wallets.visibleWallet(tx, { customerId: user.customerId, userId: user.userId }, walletId)]
      : await tx.find(Wallet, { userId: user.userId, customerId: user.customerId }, { orderBy: { createdAt: "asc", walletId: "asc" } });
    let holdsCurrency = false;
    for (const wallet of candidates) {
      const network = wallet.networks.find((n) => n.currency === currency && networks.includes(n.name))?.name;
      if (!network) continue;
      holdsCurrency = true;
      const [balance] = await this.ledger.walletBalances(tx, wallet.walletId, [currency]);
      if (walletId || (balance && balance.available.gte(amount))) return { wallet, network };
    }
    if (walletId && !holdsCurrency) {
      throw new DomainError("INSUFFICIENT_BALANCE", `Wallet ${quote(walletId)} holds no ${currency} on ${networks.join(" or ")}.`, "wallet_id");
    }
    throw new DomainError("INSUFFICIENT_BALANCE", `No wallet of the user has enough available ${currency} for this withdrawal.`, "amount");
  }
}

/**
 * Two-step withdrawals, crypto and fiat (reference: "Withdrawals", "States and transitions › Withdrawal";
 * docs/decisions/withdrawals.md, docs/decisions/fiat.md "Fiat withdrawals"): initiate holds the amount and sends a one-time code; confirm with the
 * right code debits it exactly once; cancel releases it; resend voids the old code. Both paths share
 * these six operations; what differs (the destination's checks, how confirm sends the money) is
 * paths.ts. This file orchestrates; the code lifecycle is codes.ts, the email email.ts, the API shapes views.ts, the
 * module's SQL repository.ts, a fiat payout's later fate payouts.ts, and the Idempotency-Key the shared mechanism (docs/idempotency.md).
 *
 * Concurrency: every change of a withdrawal locks its row (`SELECT … FOR UPDATE`), so parallel
 * confirms see one PENDING withdrawal at most once; repeats of one Idempotency-Key wait on the key's
 * row (src/modules/idempotency/service.ts) and initiates of one user and currency on the limits
 * service's advisory lock (caps; src/modules/limits/service.ts), taken in that order; the ledger's
 * account locks keep available money from being held twice.
 *
 * Every change runs in one transaction of the `Db` (src/db/sql.ts) with the module's own statements
 * (src/modules/withdrawals/repository.ts; docs/performance.md "Withdrawals"); the ORM
 * entity serves the read-only routes (docs/architecture.md "Reaching the database").
 */
import type { FilterQuery } from "@mikro-orm/core";
import type { EntityManager } from "@mikro-orm/postgresql";
import { randomUUID } from "node:crypto";
import { DomainError, quote } from "../../domain/errors.js";
import { isUuid, isUuidV4, walletIdOf } from "../../domain/ids.js";
import { money } from "../../domain/money.js";
import { assertCancellable, assertConfirmable, assertResendable, type WithdrawalType } from "../../domain/withdrawals.js";
import type { PageRequest } from "../../domain/paging.js";
import type { CustodyProvider } from "../../providers/provider.js";
import type { Db, Tx } from "../../db/sql.js";
import { keyCaller, priorResult, runOnce, type KeyCaller } from "../idempotency/service.js";
import type { SecretBox } from "../identity/secrets.js";
import type { LedgerService } from "../ledger/service.js";
import type { MailService } from "../mail/service.js";
import { assertGoodStanding } from "../users/repository.js";
import type { UserService } from "../users/service.js";
import type { WalletService } from "../wallets/service.js";
import { guardMovements } from "../wallets/states.js";
import { assertMovable } from "../../domain/wallet-states.js";
import { WithdrawalCodes } from "./codes.js";
import { checkDestination, completeOnPath, type Destination, type FiatPath, type InitiateBody, type PathDeps } from "./paths.js";
import { chooseSourceWallet } from "./source.js";
import { codeEmail } from "./email.js";
import { Withdrawal } from "./entities.js";
import { initiateRequest } from "./initiate-key.js";
import {
  insertWithdrawal,
  lockWithdrawal,
  newWithdrawal,
  readUser,
  saveWithdrawal,
  type CandidateWallet,
  type LockedWithdrawal,
  type OutboxEmailWrite,
  type WithdrawalRecord,
  type WithdrawalUser,
} from "./repository.js";
import type { PinPush, ProviderPinOutcome, WithdrawalFilter, WithdrawalGuards, WithdrawalSettings } from "./types.js";
import { sendViews, type SendView } from "../chains/repository/sends.js";
import type { SendQueue } from "../chains/send-queue.js";
import { initiatedView, withdrawalView, type FiatInitiateInput, type InitiatedView, type InitiateInput, type WithdrawalView } from "./views.js";

export type { FiatPath } from "./paths.js";
export type { DestinationPolicy, MovementLimits, PinEvent, PinPush, ProviderPinOutcome, WithdrawalFilter, WithdrawalGuards, WithdrawalSettings } from "./types.js";

/** An initiate that passed the checks made before its transaction. */
interface CheckedInitiate {
  user: WithdrawalUser;
  destination: Destination;
  input: InitiateInput | FiatInitiateInput;
  key: string;
}

/** Withdrawals of users' custodial wallets. */
export class WithdrawalService {
  private readonly codes: WithdrawalCodes;
  private readonly paths: PathDeps;

  constructor(
    private readonly db: Db, // where every change runs (src/db/sql.ts)
    private readonly provider: CustodyProvider,
    private readonly ledger: LedgerService,
    private readonly users: UserService,
    private readonly wallets: WalletService,
    private readonly mail: MailService,
    private readonly pins: PinPush,
    box: SecretBox,
    settings: WithdrawalSettings,
    guards: WithdrawalGuards,
    fiat: FiatPath,
    /** The sends on the live networks; none without a live network. */
    private readonly sends?: SendQueue,
  ) {
    this.codes = new WithdrawalCodes(box, settings);
    this.paths = { db, provider, ledger, wallets, guards, fiat, sends };
  }

  /**
   * Initiates a withdrawal (docs/decisions/withdrawals.md "Initiate"). A repeat by the same caller `by` with the same
   * `Idempotency-Key` and body returns the first withdrawal with `is_duplicate: true` (docs/idempotency.md; absent, the
   * tenant's key space of callers not named: src/modules/idempotency/service.ts `keyCaller`). Checks, in this
   * order: user exists and is active; currency supported and withdrawable; amount positive and at
   * least the minimum; address valid for the currency's network; with the customer's
   * `allowlist_required`, the address `ACTIVE` on the user's allowlist
   * (docs/decisions/limits-and-allowlist.md "Destination allowlist"); per-withdrawal, daily and
   * monthly caps (the customer's or the defaults; docs/decisions/limits-and-allowlist.md "Limits");
   * the wallet (the given one found and its state letting money leave, or the user's oldest
   * `ACTIVE` wallet that covers the amount: docs/decisions/customers-users-and-wallets.md "Wallet
   * states"); available balance. Then holds the amount, issues a code and emails it, in one transaction.
   * A `wallet_id` that is not a UUID answers first: 400 INVALID_WALLET_ID.
   * @throws DomainError INVALID_WALLET_ID (400); IDEMPOTENCY_KEY_REUSED (409, same key, other body); USER_NOT_FOUND /
   *   RESOURCE_NOT_FOUND (404); INVALID_CURRENCY / UNSUPPORTED_CURRENCY; AMOUNT_MUST_BE_POSITIVE,
   *   CURRENCY_NOT_ACTIVE (withdrawals switched off); INVALID_AMOUNT, MINIMUM_AMOUNT_NOT_MET; INVALID_CRYPTO_ADDRESS; INVALID_ADDRESS (allowlist); WITHDRAWAL_LIMIT_EXCEEDED,
   *   DAILY_LIMIT_EXCEEDED, MONTHLY_LIMIT_EXCEEDED; WALLET_NOT_FOUND (404, `wallet_id` not the
   *   user's); WALLET_LOCKED, WALLET_SUSPENDED, WALLET_INACTIVE; INSUFFICIENT_BALANCE (all 400 unless noted).
   */
  async initiate(em: EntityManager, customerId: string, userId: string, input: InitiateInput, idempotencyKey?: string, by?: KeyCaller | null): Promise<InitiatedView> {
    return this.start(em, customerId, userId, { type: "crypto", input }, idempotencyKey, by);
  }

  /**
   * Initiates a fiat withdrawal to one of the user's bank accounts (docs/decisions/fiat.md "Fiat
   * withdrawals"), as {@link initiate} does a crypto one, with the fiat path's checks in their
   * order: user; currency a fiat one; amount positive, at least the minimum, at most 2 decimals;
   * bank account; caps; wallet; balance.
   * @throws DomainError as {@link initiate}, with INVALID_CURRENCY also for a crypto currency, INVALID_AMOUNT
   *   for more than 2 decimals, BANK_ACCOUNT_REQUIRED and INVALID_BANK_ACCOUNT (400) instead of the address's errors.
   */
  async initiateFiat(em: EntityManager, customerId: string, userId: string, input: FiatInitiateInput, idempotencyKey?: string, by?: KeyCaller | null): Promise<InitiatedView> {
    return this.start(em, customerId, userId, { type: "fiat", input }, idempotencyKey, by);
  }

  /** The one initiate of both paths ({@link initiate}, {@link initiateFiat}). */
  private async start(em: EntityManager, customerId: string, userId: string, body: InitiateBody, idempotencyKey?: string, by?: KeyCaller | null): Promise<InitiatedView> {
    const { input } = body;
    if (input.wallet_id !== undefined) walletIdOf(input.wallet_id, "wallet_id");
    const key = idempotencyKey ?? randomUUID();
    const request = initiateRequest(customerId, userId, input, key, keyCaller(by));
    const prior = await priorResult(this.db, request);
    if (prior) return this.duplicate(em, customerId, prior);

    const user = await this.activeUser(customerId, userId);
    const checked: CheckedInitiate = { user, destination: await checkDestination(this.paths, user, body), input, key };
    // a given wallet is read before the transaction (no second connection inside it), refused after the caps
    const given = input.wallet_id === undefined ? undefined : await this.givenWallet(em, checked.user, input.wallet_id).catch((error: unknown) => error as Error);
    const outcome = await runOnce(this.db, request, (tx, id) => this.open(tx, checked, given, id));
    if (outcome.duplicate) return this.duplicate(em, customerId, outcome.resultId);
    this.kickDeliveries(outcome.value.pushed);
    return initiatedView(outcome.value.withdrawal, false);
  }

  /**
   * Confirms with the code: debits the held amount through the provider exactly once. The user
   * must be live and active. A wrong code counts an attempt (kept even though the call fails); the
   * wrong code that makes `WITHDRAWAL_CODE_MAX_TOTAL_ATTEMPTS` over the withdrawal's life cancels it
   * and releases its hold in the same transaction. The money leaves the wallet only now, so a
   * wallet that was locked, suspended or deactivated since the initiate refuses the confirm without
   * counting an attempt (docs/decisions/customers-users-and-wallets.md "Wallet states"); cancel
   * still releases the hold.
   * @throws DomainError USER_NOT_FOUND / RESOURCE_NOT_FOUND (404), WITHDRAWAL_NOT_FOUND (404), ALREADY_CONFIRMED / BAD_REQUEST (400, not
   *   PENDING), WALLET_LOCKED / WALLET_SUSPENDED / WALLET_INACTIVE (400), WITHDRAWAL_BLOCKED (403, too many wrong codes of this code, or of the withdrawal's life: then cancelled), CONFIRMATION_CODE_EXPIRED,
   *   CONFIRMATION_CODE_INVALID (400), CRYPTO_WITHDRAWAL_FAILED (400, provider refused), FIAT_WITHDRAWAL_FAILED (400, the
   *   rail refused: nothing debited, still PENDING, the code not used up and no attempt counted). `type`: the path
   *   (a withdrawal of the other path is WITHDRAWAL_NOT_FOUND).
   */
  async confirm(em: EntityManager, customerId: string, userId: string, withdrawalId: string, code: string, type: WithdrawalType = "crypto"): Promise<{ id: string; status: "COMPLETED" }> {
    await this.activeUser(customerId, userId);
    const failure = await this.db.transaction(async (tx) => {
      const locked = await this.lockOwn(tx, customerId, userId, withdrawalId, type);
      const w = locked.withdrawal;
      assertConfirmable(w.status);
      await guardMovements(tx, [{ walletId: w.walletId, direction: "out" }]);
      const verdict = this.codes.verify(w, code);
      if (verdict !== "right") {
        if (verdict === "exhausted") await this.cancelHeld(tx, w, "too_many_attempts");
        else if (verdict === "wrong") await saveWithdrawal(tx, w);
        return this.codes.refusal(verdict);
      }
      await completeOnPath(this.paths, tx, locked);
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
  async resendCode(em: EntityManager, customerId: string, userId: string, withdrawalId: string, type: WithdrawalType = "crypto"): Promise<{ message: string }> {
    const user = await this.activeUser(customerId, userId);
    const pushed = await this.db.transaction(async (tx) => {
      const { withdrawal: w } = await this.lockOwn(tx, customerId, userId, withdrawalId, type);
      assertResendable(w.status);
      const code = this.codes.reissue(w);
      return this.deliverCode(tx, user, w, code);
    });
    this.kickDeliveries(pushed);
    return { message: "A new confirmation code has been sent; the previous code no longer works." };
  }

  /**
   * A PIN from the provider, read by the email poller or pushed to the inbound webhook
   * (docs/decisions/withdrawals.md "The email poller", "PINs pushed by the provider"): while the
   * withdrawal is `PENDING`, the PIN becomes its code (keyed hash, a fresh `WITHDRAWAL_CODE_TTL_S`,
   * attempts reset, the previous code void) and is delivered like an issued code (email, webhook),
   * the deliveries starting after commit. Runs in `within` when given (the inbound webhook's
   * transaction), else in its own. Never throws for a PIN or a withdrawal it cannot use.
   * @returns `applied`, `invalid-pin` (not 4–8 digits), `not-found` (no such withdrawal of this customer, or its user deleted), `not-pending`.
   */
  async applyProviderPin(customerId: string, withdrawalId: string, pin: string, within?: Tx): Promise<ProviderPinOutcome> {
    if (!/^[0-9]{4,8}$/.test(pin)) return "invalid-pin";
    if (!isUuid(withdrawalId)) return "not-found";
    const apply = async (tx: Tx): Promise<ProviderPinOutcome> => {
      const locked = await lockWithdrawal(tx, customerId, withdrawalId.toLowerCase());
      if (!locked) return "not-found";
      const w = locked.withdrawal;
      if (w.status !== "PENDING") return "not-pending";
      const user = await readUser(tx, customerId, w.userId);
      if (!user || user.deleted) return "not-found"; // as UserService.findLive
      this.codes.set(w, pin);
      const pushed = await this.deliverCode(tx, user, w, pin);
      tx.afterCommit(() => this.kickDeliveries(pushed));
      return "applied";
    };
    return within ? apply(within) : this.db.transaction(apply);
  }

  /**
   * Cancels a PENDING withdrawal and returns the held amount to available.
   * @throws DomainError WITHDRAWAL_NOT_FOUND, ALREADY_CONFIRMED (400, completed: cannot be reversed), BAD_REQUEST (already cancelled).
   */
  async cancel(em: EntityManager, customerId: string, userId: string, withdrawalId: string, type: WithdrawalType = "crypto"): Promise<void> {
    await this.users.find(em, customerId, userId);
    await this.db.transaction(async (tx) => {
      const { withdrawal: w } = await this.lockOwn(tx, customerId, userId, withdrawalId, type);
      assertCancellable(w.status);
      await this.cancelHeld(tx, w, "user");
    });
  }

  /** The `chain` records of crypto withdrawals `rows` that have a send on a live network (one statement; none without a live network). */
  private async chainOf(rows: readonly WithdrawalRecord[]): Promise<Map<string, SendView>> {
    const ids = rows.filter((w) => w.withdrawalType === "crypto" && w.status !== "PENDING" && this.sends?.isLive(w.network)).map((w) => w.id);
    return sendViews(this.db, ids);
  }

  /** Reads one withdrawal of the user on path `type`. @throws DomainError USER_NOT_FOUND, WITHDRAWAL_NOT_FOUND (also one of the other path). */
  async get(em: EntityManager, customerId: string, userId: string, withdrawalId: string, type: WithdrawalType = "crypto"): Promise<WithdrawalView> {
    const user = await this.users.find(em, customerId, userId);
    const w = isUuid(withdrawalId) ? await em.findOne(Withdrawal, { id: withdrawalId.toLowerCase(), userId: user.userId, customerId, withdrawalType: type }) : null;
    if (!w) throw new DomainError("WITHDRAWAL_NOT_FOUND", `Withdrawal ${quote(withdrawalId)} not found.`);
    return withdrawalView(w, (await this.chainOf([w])).get(w.id) ?? null);
  }

  /** The user's withdrawals of path `type` (only those), most recent first by default. @throws DomainError USER_NOT_FOUND. */
  async list(em: EntityManager, customerId: string, userId: string, page: PageRequest, filter: WithdrawalFilter, type: WithdrawalType = "crypto"): Promise<{ items: WithdrawalView[]; total: number }> {
    const user = await this.users.find(em, customerId, userId);
    const where: FilterQuery<Withdrawal> = { userId: user.userId, customerId, withdrawalType: type };
    if (filter.status) where.status = filter.status;
    if (filter.currency) where.currency = filter.currency.toLowerCase();
    const direction = filter.sort === "ASC" ? "asc" : "desc";
    const [rows, total] = await em.findAndCount(Withdrawal, where, { orderBy: { createdAt: direction, id: direction }, limit: page.limit, offset: page.skip });
    const chains = await this.chainOf(rows);
    return { items: rows.map((w) => withdrawalView(w, chains.get(w.id) ?? null)), total };
  }

  /**
   * The change of a new initiate, in `tx` after its key was claimed: checks the caps (which
   * serialises the user's initiates of the currency until `tx` ends), chooses the wallet, writes
   * withdrawal `id` with its code's email, holds the amount and pushes the code to the webhook.
   * @param given the request's `wallet_id` as {@link givenWallet} read it (or its refusal), when given.
   * @returns the withdrawal and whether a webhook notification was written.
   */
  private async open(tx: Tx, c: CheckedInitiate, given: CandidateWallet | Error | undefined, id: string): Promise<{ withdrawal: WithdrawalRecord; pushed: boolean }> {
    const { customerId, userId } = c.user;
    const d = c.destination;
    await this.paths.guards.limits.checkMovement(tx, { customerId, userId, kind: "withdrawal", currency: d.currency, amount: d.amount.toFixed(), now: new Date() });
    const { walletId, network } = await chooseSourceWallet(tx, c.user, d.currency, d.networks, d.amount, c.input.wallet_id, given);
    await guardMovements(tx, [{ walletId, direction: "out", ...(c.input.wallet_id !== undefined && { field: "wallet_id" }) }]);
    const withdrawal = newWithdrawal({
      id,
      customerId,
      userId,
      walletId,
      network,
      currency: d.currency,
      amount: d.amount.toFixed(),
      address: d.address,
      memo: c.input.memo ?? null,
      idempotencyKey: c.key,
      withdrawalType: d.type,
      bankAccountId: d.bankAccountId,
    });
    const code = this.codes.issue(withdrawal);
    await insertWithdrawal(tx, withdrawal, this.codeEmail(c.user, withdrawal, code));
    await this.ledger.post(tx, { kind: "hold", walletId, network, currency: d.currency, amount: d.amount, reference: `withdrawal:${id}` });
    const pushed = await this.pushCode(tx, withdrawal, code);
    return { withdrawal, pushed };
  }

  /** The answer to a repeat of an Idempotency-Key: the first withdrawal as it is now, `is_duplicate: true`. */
  private async duplicate(em: EntityManager, customerId: string, withdrawalId: string): Promise<InitiatedView> {
    const first = await em.fork().findOneOrFail(Withdrawal, { id: withdrawalId, customerId });
    return initiatedView(first, true);
  }

  /** PENDING → CANCELLED in `tx`: releases the held amount to available, voids the code and writes the change. */
  private async cancelHeld(tx: Tx, w: WithdrawalRecord, reason: "user" | "too_many_attempts"): Promise<void> {
    await this.ledger.post(tx, { kind: "release", walletId: w.walletId, network: w.network, currency: w.currency, amount: money(w.amount), reference: `withdrawal:${w.id}` });
    w.status = "CANCELLED";
    w.cancelledAt = new Date();
    w.cancelReason = reason;
    w.codeHash = null;
    await saveWithdrawal(tx, w);
  }

  /**
   * The user in good standing (the users module's rule, src/modules/users/repository.ts), read in one
   * statement on the pool as `UserService.find` reads a user. @throws DomainError USER_NOT_FOUND (404, no UUID
   * v4 or none of the customer's), RESOURCE_NOT_FOUND (404, deleted or not VERIFIED and active).
   */
  private async activeUser(customerId: string, userId: string): Promise<WithdrawalUser> {
    const user = isUuidV4(userId) ? await readUser(this.db, customerId, userId.toLowerCase()) : null;
    assertGoodStanding(userId, user, { deleted: "RESOURCE_NOT_FOUND", inactive: "RESOURCE_NOT_FOUND" });
    return user;
  }

  /** The outbox row of the email of `w`'s new `code` to `user`, as `MailService.enqueue` writes it. */
  private codeEmail(user: Pick<WithdrawalUser, "email" | "firstName">, w: WithdrawalRecord, code: string): OutboxEmailWrite {
    return this.mail.outboxValues(codeEmail(user, w, code, this.codes.ttlS));
  }

  /**
   * Sends a new code of an existing withdrawal to the user: writes `w`'s change with the code's
   * email, then pushes it as `withdrawal.pin` when the customer has a webhook (all in `tx`).
   * @returns whether a webhook notification was written.
   */
  private async deliverCode(tx: Tx, user: Pick<WithdrawalUser, "email" | "firstName">, w: WithdrawalRecord, code: string): Promise<boolean> {
    await saveWithdrawal(tx, w, this.codeEmail(user, w, code));
    return this.pushCode(tx, w, code);
  }

  /** Writes `code` of `w` to the customer's webhook outbox as `withdrawal.pin` (in `tx`) when it has one. @returns whether it did. */
  private pushCode(tx: Tx, w: WithdrawalRecord, code: string): Promise<boolean> {
    return this.pins.enqueuePin(tx, { customerId: w.customerId, withdrawalId: w.id, userId: w.userId, code, expiresAt: w.codeExpiresAt });
  }

  /** Starts the delivery of what {@link deliverCode} wrote, after commit; the webhook job only when a notification was written. */
  private kickDeliveries(pushed: boolean): void {
    this.mail.kick();
    if (pushed) this.pins.kick();
  }

  /** The withdrawal of path `type`, locked for this transaction, with its source. @throws DomainError WITHDRAWAL_NOT_FOUND (also one of the other path). */
  private async lockOwn(tx: Tx, customerId: string, userId: string, withdrawalId: string, type: WithdrawalType): Promise<LockedWithdrawal> {
    const locked = isUuid(withdrawalId) ? await lockWithdrawal(tx, customerId, withdrawalId.toLowerCase(), userId.toLowerCase()) : null;
    if (!locked || locked.withdrawal.withdrawalType !== type) throw new DomainError("WITHDRAWAL_NOT_FOUND", `Withdrawal ${quote(withdrawalId)} not found.`);
    return locked;
  }

  /**
   * Wallet `walletId` as a candidate, when the user's (`WalletService.visibleWallet`) and its state
   * lets money leave; its balance is not needed.
   * @throws DomainError WALLET_NOT_FOUND (404); WALLET_LOCKED, WALLET_SUSPENDED, WALLET_INACTIVE (400).
   */
  private async givenWallet(em: EntityManager, user: WithdrawalUser, walletId: string): Promise<CandidateWallet> {
    const wallet = await this.wallets.visibleWallet(em, { customerId: user.customerId, userId: user.userId }, walletId);
    assertMovable(wallet, "out", "wallet_id");
    return { walletId: wallet.walletId, networks: wallet.networks, balance: undefined };
  }
}

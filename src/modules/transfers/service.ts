/**
 * Internal transfers (docs/decisions/limits-and-allowlist.md "Transfers"): an amount moves between
 * two wallets of one customer at once, as one ledger entry from the source's available account to
 * the destination's, with a `transfer_out` and a `transfer_in` wallet transaction, in one
 * transaction. No chain, no hold. The pure check order is src/domain/transfers.ts; the
 * Idempotency-Key is the shared mechanism (docs/idempotency.md, scope `transfer`, per caller).
 *
 * Concurrency: a transfer's transaction takes, in this order, its key's row (repeats of one key
 * wait there), the sender's movement lock for the currency (the limits module's advisory lock, so
 * concurrent transfers of one user never pass a cap together), and the two wallets' available
 * accounts (`FOR UPDATE` in id order, so opposite transfers never deadlock). Nothing tenant-wide or
 * global is locked.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { randomUUID } from "node:crypto";
import { DomainError, quote } from "../../domain/errors.js";
import type { Db, Tx, Sql } from "../../db/sql.js";
import { isUuid, isUuidV4, walletIdOf } from "../../domain/ids.js";
import type { MovementKind } from "../../domain/limits.js";
import { format8, money, type Money } from "../../domain/money.js";
import type { PageRequest } from "../../domain/paging.js";
import { checkTransfer } from "../../domain/transfers.js";
import { assertMovable } from "../../domain/wallet-states.js";
import { keyCaller, priorResult, runOnce, type KeyCaller } from "../idempotency/service.js";
import type { LedgerService } from "../ledger/service.js";
import { assertGoodStanding } from "../users/repository.js";
import type { WalletCaller, WalletService } from "../wallets/service.js";
import { guardMovements } from "../wallets/states.js";
import { Transfer } from "./entities.js";
import { insertTransfer, sideOf, transferParties, walletTransfers, type TransferParty } from "./repository.js";
import { transferRequest } from "./request-key.js";
import { transferView, type CreateTransferInput, type TransferView } from "./views.js";

/**
 * The caps on outgoing movements, as the transfers module uses them (the limits module's
 * `LimitsService` provides it; docs/decisions/limits-and-allowlist.md "Limits").
 */
export interface MovementLimits {
  /**
   * In transaction `tx`: takes the mover's lock for `kind` and `currency` (held until `tx` ends)
   * and checks `amount` (exact decimal text, units of `currency`) against the user's
   * per-transaction, daily and monthly caps at `now` (UTC).
   * @throws DomainError TRANSFER_LIMIT_EXCEEDED, DAILY_LIMIT_EXCEEDED, MONTHLY_LIMIT_EXCEEDED (400).
   */
  checkMovement(tx: Sql, m: { customerId: string; userId: string; kind: MovementKind; currency: string; amount: string; now: Date }): Promise<void>;
}

/** A Create Transfer that passed the checks made before its transaction. */
interface CheckedTransfer {
  customerId: string;
  from: TransferParty;
  to: TransferParty;
  /** Lower-case code. */
  currency: string;
  amount: Money;
  memo: string | null;
  key: string;
}

/** Transfers between wallets of one customer. */
export class TransferService {
  constructor(
    private readonly ledger: LedgerService,
    /** Where the hot read ({@link check}: both parties in one round trip) and the booking run (src/db/sql.ts). */
    private readonly statements: Db,
    private readonly wallets: WalletService,
    private readonly limits: MovementLimits,
  ) {}

  /**
   * Create Transfer (spec/platform/transfers.tsp `createTransfer`). A repeat of an Idempotency-Key
   * by the same caller (docs/idempotency.md "Whose key it is") with the same body answers the first
   * transfer with `is_duplicate: true` before any other check (to a caller who may send from its
   * source wallet); another caller's key of the same text is another key. Then, in order: both wallets found (404),
   * the source the token user's (403), both wallets' states (the source may send, the destination
   * receive: docs/decisions/customers-users-and-wallets.md "Wallet states"), both users live and
   * VERIFIED (404), steps 1–6 of src/domain/transfers.ts, custody of the currency switched on, and
   * in one transaction the wallets' states again under their share locks, the caps (the sender's,
   * kind `transfer`), the balance, the ledger entry, the transfer and both wallet transactions.
   * @param caller the owner key's customer, or a user token's customer and user.
   * @param input `amount` exactly as the client wrote it (number or decimal text).
   * @param idempotencyKey as sent (1–255 characters), or undefined: a UUID is generated.
   * @param by the authenticated caller, whose key it is; absent, the tenant's one key space of
   *   callers not named (src/modules/idempotency/service.ts `keyCaller`).
   * A wallet id that is not a UUID answers first (docs/decisions/customers-users-and-wallets.md "Wallets").
   * @throws DomainError INVALID_WALLET_ID (400); IDEMPOTENCY_KEY_REUSED (409); WALLET_NOT_FOUND, USER_NOT_FOUND (404);
   *   FORBIDDEN (403); WALLET_LOCKED (the source), WALLET_SUSPENDED, WALLET_INACTIVE, CURRENCY_NOT_ACTIVE, SAME_WALLET_TRANSFER, INVALID_CURRENCY, UNSUPPORTED_CURRENCY,
   *   AMOUNT_MUST_BE_POSITIVE, AMOUNT_TOO_SMALL, INVALID_AMOUNT, TRANSFER_LIMIT_EXCEEDED,
   *   DAILY_LIMIT_EXCEEDED, MONTHLY_LIMIT_EXCEEDED, INSUFFICIENT_BALANCE (400).
   */
  async create(em: EntityManager, caller: WalletCaller, input: CreateTransferInput, idempotencyKey?: string, by?: KeyCaller | null): Promise<TransferView> {
    walletIdOf(input.from_wallet_id, "from_wallet_id");
    walletIdOf(input.to_wallet_id, "to_wallet_id");
    const key = idempotencyKey ?? randomUUID();
    const request = transferRequest(caller.customerId, input, key, keyCaller(by));
    const prior = await priorResult(this.statements, request);
    if (prior) return this.duplicate(em, caller, prior);

    const checked = await this.check(caller, input, key);
    const outcome = await runOnce(this.statements, request, (tx, id) => this.book(tx, checked, id));
    if (outcome.duplicate) return this.duplicate(em, caller, outcome.resultId);
    return transferView(outcome.value, false);
  }

  /**
   * Get Transfer: a transfer of the caller's customer; with a user token, only one from or to
   * that user. @throws DomainError RESOURCE_NOT_FOUND (404) otherwise, or for an id that is no UUID.
   */
  async get(em: EntityManager, caller: WalletCaller, transferId: string): Promise<TransferView> {
    const t = isUuid(transferId) ? await em.findOne(Transfer, { id: transferId.toLowerCase(), customerId: caller.customerId }) : null;
    if (!t || (caller.userId !== undefined && t.fromUserId !== caller.userId && t.toUserId !== caller.userId)) {
      throw new DomainError("RESOURCE_NOT_FOUND", `Transfer ${quote(transferId)} not found.`);
    }
    return transferView(t, false);
  }

  /**
   * List Wallet Transfers: the transfers from or to the wallet, newest first, one page.
   * @throws DomainError WALLET_NOT_FOUND (404, unknown or another customer's); FORBIDDEN (403, a
   *   user token and another user's wallet).
   */
  async listForWallet(em: EntityManager, caller: WalletCaller, walletId: string, page: PageRequest): Promise<{ items: TransferView[]; total: number }> {
    const wallet = await this.wallets.visibleWallet(em, { customerId: caller.customerId }, walletId);
    if (caller.userId !== undefined && wallet.userId !== caller.userId) {
      throw new DomainError("FORBIDDEN", "A user token can only list its own wallets' transfers.");
    }
    const [rows, total] = await walletTransfers(em, caller.customerId, wallet.walletId, page);
    return { items: rows.map((t) => transferView(t, false)), total };
  }

  /**
   * The checks made before the transaction, in the order of {@link create}. Both wallets, their
   * owners and their addresses of the currency come from one prepared statement
   * (src/modules/transfers/repository.ts `transferParties`); the checks on them are those of
   * `WalletService.visibleWallet` and `UserService.find`, in the order they ran one read at a time.
   */
  private async check(caller: WalletCaller, input: CreateTransferInput, key: string): Promise<CheckedTransfer> {
    const parties = await this.parties(caller.customerId, input);
    const from = found(parties, input.from_wallet_id);
    this.assertMaySend(caller, from.userId);
    const to = found(parties, input.to_wallet_id);
    assertMovable(from, "out", "from_wallet_id");
    assertMovable(to, "in", "to_wallet_id");
    assertVerified(from);
    assertVerified(to);
    const known = await this.wallets.currency(input.currency).catch((error: unknown) => {
      if (error instanceof DomainError && error.code === "INVALID_CURRENCY") return null;
      throw error;
    });
    const amount = money(input.amount);
    const currency = checkTransfer({
      fromWalletId: from.walletId,
      toWalletId: to.walletId,
      currency: input.currency,
      known: known && { code: known.code, precision: known.precision },
      fromHolds: from.networks.map((n) => n.currency),
      toHolds: to.networks.map((n) => n.currency),
      amount,
    });
    await this.wallets.switches.assertOn(currency, "isCustodyEnabled");
    return { customerId: caller.customerId, from, to, currency, amount, memo: input.memo ?? null, key };
  }

  /**
   * The request's wallets that are UUIDs, read in one round trip with their owners and their
   * addresses of the requested currency (lower-cased as the catalogue's codes are); none when the
   * source is no UUID (it is then not found, first).
   */
  private async parties(customerId: string, input: CreateTransferInput): Promise<Map<string, TransferParty>> {
    if (!isUuid(input.from_wallet_id)) return new Map();
    const ids = [input.from_wallet_id, input.to_wallet_id].filter(isUuid).map((id) => id.toLowerCase());
    return transferParties(this.statements, customerId, [...new Set(ids)], input.currency.toLowerCase());
  }

  /**
   * The change of a new transfer `id`, in `tx` after its key was claimed: the wallets' states under
   * their share locks (a lock that commits first refuses the transfer; one that comes later waits
   * for it), the sender's caps, then the ledger entry (which refuses an uncovered amount), the transfer and both sides' wallet
   * transactions. @returns the stored transfer.
   */
  private async book(tx: Tx, c: CheckedTransfer, id: string): Promise<Transfer> {
    const now = new Date();
    await guardMovements(tx, [
      { walletId: c.from.walletId, direction: "out", field: "from_wallet_id" },
      { walletId: c.to.walletId, direction: "in", field: "to_wallet_id" },
    ]);
    await this.limits.checkMovement(tx, { customerId: c.customerId, userId: c.from.userId, kind: "transfer", currency: c.currency, amount: c.amount.toFixed(), now });
    const source = sideOf(c.from, c.currency);
    const destination = sideOf(c.to, c.currency);
    const { entryId, from, to } = await this.ledger.transfer(tx, {
      fromWalletId: c.from.walletId,
      toWalletId: c.to.walletId,
      network: source.network,
      currency: c.currency,
      amount: c.amount,
      reference: `transfer:${id}`,
    });
    const transfer: Transfer = {
      id,
      customerId: c.customerId,
      fromWalletId: c.from.walletId,
      toWalletId: c.to.walletId,
      fromUserId: c.from.userId,
      toUserId: c.to.userId,
      currency: c.currency,
      amount: c.amount.toFixed(),
      memo: c.memo,
      status: "COMPLETED",
      idempotencyKey: c.key,
      journalEntryId: entryId,
      createdAt: now,
    };
    const what = `${format8(c.amount)} ${c.currency.toUpperCase()}`;
    await insertTransfer(tx, { ...transfer, memo: c.memo }, [
      { side: source, action: "transfer_out", balanceAfter: from.balance.toFixed(), description: `Transfer of ${what} to wallet ${c.to.walletId}` },
      { side: destination, action: "transfer_in", balanceAfter: to.balance.toFixed(), description: `Transfer of ${what} from wallet ${c.from.walletId}` },
    ], c.customerId);
    return transfer;
  }

  /**
   * The answer to a repeat of an Idempotency-Key: the first transfer, `is_duplicate: true`, to a
   * caller who may send from its source wallet (the same body names the same source, so anyone
   * else gets the 403 a new request would get). @throws DomainError FORBIDDEN (403).
   */
  private async duplicate(em: EntityManager, caller: WalletCaller, transferId: string): Promise<TransferView> {
    const first = await em.fork().findOneOrFail(Transfer, { id: transferId, customerId: caller.customerId });
    this.assertMaySend(caller, first.fromUserId);
    return transferView(first, true);
  }

  /** A user token sends only from its own wallets. @throws DomainError FORBIDDEN (403). */
  private assertMaySend(caller: WalletCaller, ownerId: string): void {
    if (caller.userId !== undefined && ownerId !== caller.userId) {
      throw new DomainError("FORBIDDEN", "A user token can only send from its own wallets.");
    }
  }
}

/**
 * The party of wallet `walletId` (as sent), as `WalletService.visibleWallet` finds a wallet for the
 * owner key: a UUID of the customer's. @throws DomainError WALLET_NOT_FOUND (404) otherwise.
 */
function found(parties: ReadonlyMap<string, TransferParty>, walletId: string): TransferParty {
  const party = isUuid(walletId) ? parties.get(walletId.toLowerCase()) : undefined;
  if (!party) throw new DomainError("WALLET_NOT_FOUND", `Wallet ${quote(walletId)} not found.`);
  return party;
}

/**
 * The party's owner is in good standing (as `UserService.find` reads a user, then the users
 * module's rule, src/modules/users/repository.ts; docs/decisions/limits-and-allowlist.md "Transfers").
 * @throws DomainError USER_NOT_FOUND (404): "not found", "has been deleted" or "is not active".
 */
function assertVerified(party: TransferParty): void {
  const { userId, owner } = party;
  assertGoodStanding(userId, isUuidV4(userId) ? owner : null, { deleted: "USER_NOT_FOUND", inactive: "USER_NOT_FOUND" });
}

/**
 * Customer limits (docs/decisions/limits-and-allowlist.md "Limits"): the caps of withdrawals and
 * transfers per user and currency (the service's defaults, or the customer's own from Set
 * Limits), the customer's `allowlist_required` policy, what a user used of each cap, and the check
 * every movement makes before it commits ({@link LimitsService.checkMovement}).
 *
 * Concurrency: a movement takes a transaction-scoped advisory lock on its kind, user and currency,
 * then reads the use in the same transaction, and commits its own row before releasing the lock,
 * so concurrent movements of one user never pass a cap together. The customer's row is read, never
 * locked: there is no tenant-wide or global hot row.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  assertWithinCaps, capStanding, checkCapInputs, effectiveCaps, MOVEMENT_KINDS, windowsAt,
  type CapSet, type CapTable, type MovementKind, type UsageReader,
} from "../../domain/limits.js";
import { format8, money } from "../../domain/money.js";
import type { CustodyProvider } from "../../providers/provider.js";
import type { Db, Sql } from "../../db/sql.js";
import type { IdentityService } from "../identity/service.js";
import type { UserService } from "../users/service.js";
import { lockMovement, selectLimits, upsertLimits } from "./repository.js";
import { capSetView, customerLimitsView, type CustomerLimitsView, type SetLimitsInput, type UserLimitsView } from "./views.js";

export type { CustomerLimitsView, SetLimitsInput, UserLimitsView } from "./views.js";

/** The use of each kind of movement, read by the module that owns it (src/modules/withdrawals/repository.ts, src/modules/transfers/repository.ts), in the movement's transaction or on the pool. */
export interface UsageReaders {
  withdrawal: UsageReader<Sql>;
  transfer: UsageReader<Sql>;
}

/** The service's default caps per kind (`WITHDRAWAL_CAPS`, `TRANSFER_CAPS`; src/config.ts). */
export type DefaultCaps = Readonly<Record<MovementKind, CapTable>>;

/** What the limits service asks of its neighbours: the customer, the user and the currency catalogue. */
export interface LimitsDeps {
  identity: Pick<IdentityService, "getActiveCustomer">;
  users: Pick<UserService, "find">;
  provider: Pick<CustodyProvider, "listCurrencies">;
}

/** One movement to check: who moves what, and when (`now`, the instant its windows are taken at). */
export interface MovementCheck {
  customerId: string;
  userId: string;
  kind: MovementKind;
  /** Currency code (lower-cased here). */
  currency: string;
  /** Decimal string in the currency's units. */
  amount: string;
  now: Date;
}

/** A customer's stored row: its own caps per kind and its policy. */
interface Overrides {
  allowlistRequired: boolean;
  caps: Record<MovementKind, CapTable>;
}

const NO_OVERRIDES: Overrides = { allowlistRequired: false, caps: { withdrawal: {}, transfer: {} } };

/** Caps, their use and the allowlist policy. */
export class LimitsService {
  constructor(
    /** Where the customer's row is read and written (src/db/sql.ts). */
    private readonly db: Db,
    private readonly readers: UsageReaders,
    private readonly defaults: DefaultCaps,
    private readonly deps: LimitsDeps,
  ) {}

  /**
   * The check every movement makes inside its own transaction `tx`, before it writes its row
   * (docs/decisions/limits-and-allowlist.md "Limits"): takes
   * `pg_advisory_xact_lock(hashtext('<kind>:<userId>:<currency>'))` (held until `tx` ends), reads
   * the user's use of the kind and currency in the windows of `m.now` through the kind's
   * {@link UsageReader} in `tx`, and checks `m.amount` against the caps in force (the customer's
   * own, else the defaults; a currency with neither has no caps). The caller commits its movement
   * in the same `tx`, so the next movement of the user and currency sees it.
   * @throws DomainError (400) WITHDRAWAL_LIMIT_EXCEEDED / TRANSFER_LIMIT_EXCEEDED (one movement
   *   over `per_transaction`), DAILY_LIMIT_EXCEEDED, MONTHLY_LIMIT_EXCEEDED, with messages naming
   *   the cap, the amount used and the remainder until the window resets.
   */
  async checkMovement(tx: Sql, m: MovementCheck): Promise<void> {
    const userId = m.userId.toLowerCase();
    const currency = m.currency.toLowerCase();
    await lockMovement(tx, `${m.kind}:${userId}:${currency}`);
    // read in `tx`: a second connection while this one is held could wait on a pool the held ones fill
    const caps = effectiveCaps(this.defaults[m.kind], (await this.overrides(m.customerId, tx)).caps[m.kind])[currency];
    if (!caps) return;
    const windows = windowsAt(m.now);
    const usage = await this.readers[m.kind](tx, userId, currency, windows);
    assertWithinCaps({ kind: m.kind, currency, amount: money(m.amount) }, caps, usage, windows);
  }

  /** Whether customer `customerId` requires `ACTIVE` allowlist addresses for withdrawals (default false). */
  async allowlistRequired(customerId: string): Promise<boolean> {
    return (await this.overrides(customerId)).allowlistRequired;
  }

  /** The caps of `kind` in force for the customer's users, by lowercase currency code. */
  async capsOf(customerId: string, kind: MovementKind): Promise<Record<string, CapSet>> {
    return effectiveCaps(this.defaults[kind], (await this.overrides(customerId)).caps[kind]);
  }

  /** Get Limits: the caps in force and the policy. @throws DomainError CUSTOMER_NOT_FOUND (404). */
  async get(em: EntityManager, customerId: string): Promise<CustomerLimitsView> {
    await this.deps.identity.getActiveCustomer(em, customerId);
    const overrides = await this.overrides(customerId);
    return customerLimitsView(customerId, overrides.allowlistRequired, this.defaults, overrides.caps);
  }

  /**
   * Set Limits: replaces the customer's own caps of both kinds (a kind omitted: none of its own)
   * and, when given, its `allowlist_required` (unchanged when omitted); one statement, so
   * concurrent calls leave one of the bodies whole. Answers the limits now in force.
   * @throws DomainError CUSTOMER_NOT_FOUND (404); INVALID_CURRENCY (400, a code not in the
   *   catalogue); BAD_REQUEST (400: more than 32 currencies in a kind, caps out of order, a code twice).
   */
  async set(em: EntityManager, customerId: string, input: SetLimitsInput): Promise<CustomerLimitsView> {
    await this.deps.identity.getActiveCustomer(em, customerId);
    const known = new Set((await this.deps.provider.listCurrencies()).map((c) => c.code));
    const withdrawal = checkCapInputs("withdrawal", input.withdrawal, known);
    const transfer = checkCapInputs("transfer", input.transfer, known);
    const policy = input.allowlist_required ?? null;
    await upsertLimits(this.db, customerId, policy, withdrawal, transfer, new Date());
    return this.get(em, customerId);
  }

  /**
   * Get User Limits: per kind and currency with caps, the caps, what the user moved today and this
   * month (UTC windows of `now`), what remains and when each window resets.
   * @throws DomainError USER_NOT_FOUND (404).
   */
  async forUser(em: EntityManager, customerId: string, userId: string, now = new Date()): Promise<UserLimitsView> {
    const user = await this.deps.users.find(em, customerId, userId);
    const overrides = await this.overrides(customerId);
    const windows = windowsAt(now);
    const view: UserLimitsView = { user_id: user.userId, withdrawal: {}, transfer: {} };
    for (const kind of MOVEMENT_KINDS) {
      const caps = effectiveCaps(this.defaults[kind], overrides.caps[kind]);
      for (const currency of Object.keys(caps).sort()) {
        const set = caps[currency] as CapSet;
        const standing = capStanding(set, await this.readers[kind](this.db, user.userId, currency, windows));
        view[kind][currency] = {
          ...capSetView(set),
          used: { today: format8(standing.usedToday), this_month: format8(standing.usedThisMonth) },
          remaining_today: format8(standing.remainingToday),
          remaining_this_month: format8(standing.remainingThisMonth),
          resets_at: { today: windows.dayEnd.toISOString(), this_month: windows.monthEnd.toISOString() },
        };
      }
    }
    return view;
  }

  /** The customer's stored row, or none of its own (read, never locked). */
  private async overrides(customerId: string, on: Sql = this.db): Promise<Overrides> {
    const row = await selectLimits(on, customerId);
    if (!row) return NO_OVERRIDES;
    return { allowlistRequired: row.allowlist_required, caps: { withdrawal: row.withdrawal_caps, transfer: row.transfer_caps } };
  }
}

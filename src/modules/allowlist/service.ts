/**
 * The withdrawal allowlist of users (docs/decisions/limits-and-allowlist.md "Destination
 * allowlist"): Add, List and Delete Address, the `address.added` notification each addition
 * writes to the customer's webhook outbox in its own transaction, and the check Initiate
 * Withdrawal makes when the customer requires allowlisted destinations.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { randomUUID } from "node:crypto";
import { activationOf, addressKey, assertAllowlisted } from "../../domain/allowlist.js";
import { assertNoProblems, DomainError, quote } from "../../domain/errors.js";
import { isUuid } from "../../domain/ids.js";
import type { PageRequest } from "../../domain/paging.js";
import { unsafeNameProblems } from "../../domain/text.js";
import type { CustodyProvider } from "../../providers/provider.js";
import type { Db, Sql } from "../../db/sql.js";
import type { UserService } from "../users/service.js";
import type { WalletService } from "../wallets/service.js";
import type { WebhookEvent } from "../webhooks/service.js";
import { destinationNetworks, withdrawableCurrency } from "../withdrawals/destination.js";
import type { DestinationPolicy } from "../withdrawals/types.js";
import { AllowlistAddress } from "./entities.js";
import { activationOf as storedActivation, insertAddress } from "./repository.js";
import { addressAddedData, allowlistAddressView, type AddAddressInput, type AllowlistAddressView } from "./views.js";

export type { AddAddressInput, AllowlistAddressView } from "./views.js";

/** Event type of the notification of each addition. */
export const ADDRESS_ADDED = "address.added";

/** Settings of the allowlist (src/config.ts). */
export interface AllowlistSettings {
  /** `ALLOWLIST_COOLDOWN_S`: seconds an added address stays `PENDING`. */
  cooldownS: number;
}

/** What the allowlist asks of its neighbours. */
export interface AllowlistDeps {
  provider: Pick<CustodyProvider, "isValidAddress">;
  wallets: Pick<WalletService, "currency">;
  users: Pick<UserService, "find" | "findLive">;
  /** The customer's `allowlist_required` (src/modules/limits/service.ts). */
  policy: { allowlistRequired(customerId: string): Promise<boolean> };
  /**
   * The customer's webhook (src/modules/webhooks/service.ts): `enqueueEvent` writes a notification
   * in the caller's transaction when the customer has an enabled webhook; `kick` starts its
   * delivery after commit.
   */
  notifier: { enqueueEvent(tx: Sql, event: WebhookEvent): Promise<boolean>; kick(): void };
}

/** Users' withdrawal allowlists. */
export class AllowlistService implements DestinationPolicy {
  constructor(
    /** Where the entries are written and checked (src/db/sql.ts). */
    private readonly db: Db,
    private readonly deps: AllowlistDeps,
    private readonly settings: AllowlistSettings,
  ) {}

  /**
   * Add Address: validates the destination as Initiate Withdrawal does, then inserts it `PENDING`
   * until `created_at` + `ALLOWLIST_COOLDOWN_S` and writes `address.added` to the customer's
   * webhook outbox in the same transaction (when the customer has an enabled webhook). The same
   * currency and address (compared by src/domain/allowlist.ts `addressKey`) twice for a user is
   * refused by a unique index, so of concurrent adds one succeeds.
   * @throws DomainError USER_NOT_FOUND / RESOURCE_NOT_FOUND (404); INVALID_CURRENCY,
   *   UNSUPPORTED_CURRENCY, INVALID_CRYPTO_ADDRESS (400); ADDRESS_ALREADY_EXISTS (409).
   * @throws ValidationFailed (422) for a label with invisible characters or mixed scripts
   *   (docs/security.md "Names people compare").
   */
  async add(em: EntityManager, customerId: string, userId: string, input: AddAddressInput): Promise<AllowlistAddressView> {
    const user = await this.deps.users.findLive(em, customerId, userId);
    const currency = await withdrawableCurrency(this.deps.wallets, input.currency);
    destinationNetworks(this.deps.provider, currency, input.address);
    assertNoProblems(unsafeNameProblems({ label: input.label }));
    const createdAt = new Date();
    const entry: AllowlistAddress = {
      id: randomUUID(),
      customerId,
      userId: user.userId,
      currency: currency.code,
      address: input.address,
      addressKey: addressKey(input.address),
      label: input.label,
      createdAt,
      activatesAt: activationOf(createdAt, this.settings.cooldownS),
    };
    const outcome = await this.db.transaction(async (tx) => {
      if (!(await insertAddress(tx, entry))) return "exists" as const;
      const data = addressAddedData(entry);
      return (await this.deps.notifier.enqueueEvent(tx, { customerId, type: ADDRESS_ADDED, data, reference: `address:${entry.id}` })) ? "pushed" : "added";
    });
    if (outcome === "exists") {
      throw new DomainError("ADDRESS_ALREADY_EXISTS", `${quote(input.address)} is already on the user's ${currency.code} allowlist.`, "address");
    }
    if (outcome === "pushed") this.deps.notifier.kick();
    return allowlistAddressView(entry, createdAt);
  }

  /** List Addresses: the user's allowlist, newest first, statuses at `now`. @throws DomainError USER_NOT_FOUND (404). */
  async list(em: EntityManager, customerId: string, userId: string, page: PageRequest, now = new Date()): Promise<{ items: AllowlistAddressView[]; total: number }> {
    const user = await this.deps.users.find(em, customerId, userId);
    const [rows, total] = await em.findAndCount(
      AllowlistAddress,
      { userId: user.userId, customerId },
      { orderBy: { createdAt: "desc", id: "desc" }, limit: page.limit, offset: page.skip },
    );
    return { items: rows.map((row) => allowlistAddressView(row, now)), total };
  }

  /**
   * Delete Address: removes entry `addressId` of the user; withdrawals already initiated to it are
   * not affected. @throws DomainError USER_NOT_FOUND (404), RESOURCE_NOT_FOUND (404, no such entry of the user).
   */
  async delete(em: EntityManager, customerId: string, userId: string, addressId: string): Promise<void> {
    const user = await this.deps.users.find(em, customerId, userId);
    const deleted = isUuid(addressId) ? await em.nativeDelete(AllowlistAddress, { id: addressId.toLowerCase(), userId: user.userId, customerId }) : 0;
    if (deleted === 0) throw new DomainError("RESOURCE_NOT_FOUND", `Allowlist address ${quote(addressId)} not found.`);
  }

  /**
   * Initiate Withdrawal's allowlist check, made right after the address's validity: passes when
   * the customer does not require allowlisted destinations; otherwise `address` (by its
   * `addressKey`) must be on the user's list of `currency` and `ACTIVE` at `now`.
   * @throws DomainError INVALID_ADDRESS (400) saying whether it is absent or cooling down, and until when.
   */
  async assertDestinationAllowed(d: { customerId: string; userId: string; currency: string; address: string; now: Date }): Promise<void> {
    if (!(await this.deps.policy.allowlistRequired(d.customerId))) return;
    const activatesAt = await storedActivation(this.db, d.userId.toLowerCase(), d.currency.toLowerCase(), addressKey(d.address));
    assertAllowlisted(activatesAt ? { activatesAt } : null, d.currency.toLowerCase(), d.address, d.now);
  }
}

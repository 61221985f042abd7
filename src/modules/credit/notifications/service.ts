/**
 * The tenant's credit notification target (NotificationsEnlist; reference "Credit core",
 * docs/decisions/notifications.md "Credit notifications"): one callback URL per tenant with its Standard Webhooks `whsec_`
 * signing secret, returned only by the call that created it and sealed at rest. The URL passes
 * the one target check of the platform webhook (src/modules/net/targets.ts `checkTarget`:
 * src/domain/webhooks.ts `checkTargetUrl`, then the SSRF guard; docs/security.md "Outgoing
 * notifications and their targets"), answered the credit core's way: 422 on `creditNotificationsURL`.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import type { components } from "../../../../generated/types/credit.js";
import type { Db } from "../../../db/sql.js";
import { DomainError, ValidationFailed } from "../../../domain/errors.js";
import { newSigningSecret } from "../../../domain/webhooks.js";
import type { SecretBox } from "../../identity/secrets.js";
import { checkTarget } from "../../net/targets.js";
import { CreditNotificationTarget } from "./entities.js";
import { upsertTarget } from "./repository.js";

type Schemas = components["schemas"];
/** Schema `CreditNotificationsSettings`: the target as read back (no secret). */
export type CreditNotificationsView = Schemas["CreditNotificationsSettings"];
/** Schema `CreditNotificationsEnlisted`: the target with its new signing secret. */
export type CreditNotificationsEnlistedView = Schemas["CreditNotificationsEnlisted"];

/** The request field the URL rules name. */
const URL_FIELD = "creditNotificationsURL";

/** Sealing context of a tenant's signing secret: a sealed value opens only in its own row and role. */
export const creditSecretContext = (customerId: string): string => `credit-notifications-secret:${customerId}`;

/** Credit notification targets of the tenants. */
export class CreditNotificationService {
  /**
   * @param db runs the statements of ./repository.ts.
   * @param box seals the signing secrets at rest.
   * @param allowPrivate `ALLOW_PRIVATE_NETWORK_TARGETS` (docs/decisions/notifications.md "The SSRF guard").
   * @param afterEnlist awaited after each successful enlist (its one statement has committed) with
   *   the tenant's id: the app releases the tenant's waiting credit notifications and starts a
   *   delivery round. It must not throw.
   */
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly allowPrivate: boolean,
    private readonly afterEnlist: (customerId: string) => Promise<void> = async () => {},
  ) {}

  /**
   * NotificationsEnlist (tenant, owner API key): registers `url` as tenant `customerId`'s credit
   * notification target, replacing any previous one, enabled, with a fresh signing secret
   * (`whsec_` + base64 of 32 random bytes) returned only here; the previous secret stops signing at
   * once. One statement (`insert … on conflict do update`), so concurrent calls leave one target
   * (the last one wins) and keep the first registration's `createdAt`.
   * @returns `CreditNotificationsEnlisted`: URL (normalised by the WHATWG URL parser), `enabled`,
   *   `signingSecret`, `createdAt`, `updatedAt` (ISO 8601 UTC).
   * @throws ValidationFailed (422 `VALIDATION_ERROR` on `creditNotificationsURL`) when the URL
   *   holds a control character or surrounding spaces, is not absolute `http`/`https`, carries
   *   user info, names port 0, is longer than 2048 characters once normalised, does not resolve,
   *   or resolves to a private, loopback, link-local or reserved address (IPv6 forms embedding an
   *   IPv4 address included) unless `ALLOW_PRIVATE_NETWORK_TARGETS`.
   * @param _em unused (the statement runs on the service's `Db`); kept for the handler's call.
   */
  async enlist(_em: EntityManager, customerId: string, url: string): Promise<CreditNotificationsEnlistedView> {
    const parsed = await this.checkUrl(url);
    const secret = newSigningSecret();
    const now = new Date();
    const row = await upsertTarget(this.db, customerId, parsed.href, this.box.seal(secret, creditSecretContext(customerId)), now);
    await this.afterEnlist(customerId);
    return {
      creditNotificationsURL: parsed.href,
      enabled: true,
      signingSecret: secret,
      createdAt: new Date(row?.created_at ?? now).toISOString(),
      updatedAt: new Date(row?.updated_at ?? now).toISOString(),
    };
  }

  /**
   * Get Notifications Settings (tenant, owner API key): the tenant's target without its secret.
   * @throws DomainError NOT_FOUND (404) when the tenant has not registered a URL.
   */
  async get(em: EntityManager, customerId: string): Promise<CreditNotificationsView> {
    const row = await em.findOne(CreditNotificationTarget, { customerId });
    if (!row) throw new DomainError("NOT_FOUND", "No credit notification URL is registered yet: call NotificationsEnlist (PUT /v2/notifications).");
    return {
      creditNotificationsURL: row.url,
      enabled: row.disabledAt === null || row.disabledAt === undefined,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }

  /**
   * The signing secret of tenant `customerId`'s target, opened (for the delivery of credit
   * notifications), or null when the tenant has no target.
   */
  async signingSecret(em: EntityManager, customerId: string): Promise<string | null> {
    const row = await em.findOne(CreditNotificationTarget, { customerId });
    return row ? this.box.open(row.secretSealed, creditSecretContext(customerId)) : null;
  }

  /**
   * The target rule shared with the platform webhook ({@link checkTarget}, docs/security.md
   * "Outgoing notifications and their targets"), answered the credit core's way.
   * @throws ValidationFailed (422 `VALIDATION_ERROR` on `creditNotificationsURL`).
   */
  private async checkUrl(url: string): Promise<URL> {
    try {
      return await checkTarget(url, this.allowPrivate, URL_FIELD);
    } catch (error) {
      if (error instanceof DomainError) throw new ValidationFailed([{ field: URL_FIELD, message: error.message }]);
      throw error;
    }
  }
}

/**
 * Handlers of the credit products and NotificationsEnlist (docs/decisions/credit.md "Products",
 * docs/decisions/notifications.md "Credit notifications"): credit products (operator creates
 * and updates, tenant lists and reads) and NotificationsEnlist. The caller's tenant is the owner API
 * key's customer (docs/decisions/credit.md "Operations and who calls them"); access rules are in ./wiring.ts. The products' percentages go to
 * the service as the client wrote them (./exact-rates.ts).
 */
import type { operations } from "../../../generated/types/credit.js";
import { DomainError } from "../../domain/errors.js";
import type { CreditNotificationDelivery } from "../../modules/credit/notifications/delivery.js";
import type { CreditNotificationService } from "../../modules/credit/notifications/service.js";
import { RATE_FIELDS, type CreditProductService } from "../../modules/credit/products/service.js";
import type { Call, HandlerMap } from "../types.js";
import { withExactRates } from "./exact-rates.js";

/**
 * The tenant (customer id) of an owner-key call.
 * @throws DomainError FORBIDDEN (403) when the caller is not an owner credential (the access rules
 *   already refuse it; this keeps handlers total).
 */
export function tenantOf(call: Call<unknown>): string {
  if (call.principal?.kind !== "owner") throw new DomainError("FORBIDDEN", "This operation takes the tenant's owner API key in x-api-key.");
  return call.principal.customerId;
}

/** Services the credit handlers use. */
export interface CreditServices {
  products: CreditProductService;
  notifications: CreditNotificationService;
  /** The credit delivery log and RecoverCreditNotifications (docs/outbox.md "Recovering missed notifications"). */
  delivery: CreditNotificationDelivery;
}

/** Handlers of the credit products and NotificationsEnlist. */
export function creditHandlers({ products, notifications, delivery }: CreditServices): HandlerMap<operations> {
  return {
    createCreditProduct: async ({ em, body }) => ({ status: 201, data: await products.create(em, withExactRates(body, RATE_FIELDS)) }),
    updateCreditProductSettings: async ({ em, params, body }) => ({
      status: 200,
      data: await products.update(em, params.creditProductCode, withExactRates(body, RATE_FIELDS)),
    }),
    listCreditProducts: async (call) => {
      const limit = call.query.limit ?? 20;
      const offset = call.query.offset ?? 0;
      const { items, total } = await products.list(tenantOf(call), { limit, skip: offset });
      return { status: 200, data: { items, total, limit, offset } };
    },
    getCreditProduct: async (call) => ({ status: 200, data: await products.get(call.em, tenantOf(call), call.params.creditProductCode) }),
    notificationsEnlist: async (call) => ({
      status: 200,
      data: await notifications.enlist(call.em, tenantOf(call), call.body.creditNotificationsURL),
    }),
    getNotificationsSettings: async (call) => ({ status: 200, data: await notifications.get(call.em, tenantOf(call)) }),
    recoverCreditNotifications: async (call) => ({ status: 200, data: await delivery.recover(call.em, tenantOf(call), call.body.since) }),
    listCreditNotificationDeliveries: async (call) => ({
      status: 200,
      data: await delivery.listDeliveries(call.em, tenantOf(call), { limit: call.query.limit ?? 20, offset: call.query.offset ?? 0 }),
    }),
  };
}

/**
 * The credit core's clock entity (docs/decisions/credit.md "Batches and clocks"): each tenant's sandbox test clock. The tenant's
 * instant is read by ./repository.ts `tenantNow`; ./service.ts moves it.
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { Customer } from "../../identity/entities.js";

/**
 * A tenant's sandbox test clock for the credit core (docs/decisions/provider-and-sandbox.md "Test helpers",
 * docs/decisions/credit.md "Batches and clocks"). A tenant without a row follows
 * real time and its wallets are run by the real-time jobs; the first Set or Advance creates the row,
 * after which the tenant's credit core time is `now`, frozen between calls (as test clocks of
 * payment APIs are), and its wallets' steps run only when the clock is moved.
 */
export const CreditClock = defineEntity({
  name: "CreditClock",
  tableName: "credit_clock",
  properties: {
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id").primary(),
    now: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type CreditClock = InferEntity<typeof CreditClock>;

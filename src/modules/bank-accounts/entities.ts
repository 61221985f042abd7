/** Users' bank accounts, the destinations of fiat withdrawals (docs/decisions/fiat.md "Bank accounts"). */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import type { BankAccountCurrency } from "../../domain/bank-accounts.js";
import { Customer } from "../identity/entities.js";
import { User } from "../users/entities.js";

/**
 * One bank account of a user. The numbers (IBAN and BIC, or routing and account number) are kept
 * only sealed in `numbersSealed` (AES-256-GCM under the secrets key, bound to the row's id;
 * src/modules/identity/secrets.ts `SecretBox.seal`); `accountMask` is what answers show, and
 * `fingerprint` a keyed hash of the account's identity (src/domain/bank-accounts.ts
 * `accountIdentity`) by which a partial unique index refuses the same account twice for a user
 * among those not deleted. `deletedAt` marks a deleted account: it stays for the fiat withdrawals
 * that name it.
 */
export const BankAccount = defineEntity({
  name: "BankAccount",
  tableName: "bank_account",
  indexes: [{ name: "bank_account_user_created_index", properties: ["userId", "createdAt"] }],
  uniques: [{ name: "bank_account_user_fingerprint_unique", properties: ["userId", "fingerprint"], where: "deleted_at is null" }],
  properties: {
    id: p.uuid().primary(),
    customerId: () => p.manyToOne(Customer).mapToPk().fieldName("customer_id"),
    userId: () => p.manyToOne(User).mapToPk().fieldName("user_id"),
    currency: p.string().length(16).$type<BankAccountCurrency>(),
    holderName: p.string().length(140),
    label: p.string().length(100).nullable(),
    accountMask: p.string().length(8),
    numbersSealed: p.text(),
    fingerprint: p.string().length(64),
    createdAt: p.datetime(),
    deletedAt: p.datetime().nullable(),
  },
});
export type BankAccount = InferEntity<typeof BankAccount>;

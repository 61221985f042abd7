/**
 * The API shapes of bank accounts (spec/platform/bank-accounts.tsp; docs/decisions/fiat.md "Bank
 * accounts"): what an answer shows of an account, never its numbers (instants ISO 8601 UTC).
 */
import type { components } from "../../../generated/types/platform.js";
import type { BankAccount } from "./entities.js";

type Schemas = components["schemas"];
/** Schema `BankAccount`: `{bank_account_id, user_id, currency, holder_name, label, account_mask, created_at}`. */
export type BankAccountView = Schemas["BankAccount"];
/** Schema `AddBankAccountRequest`: the body of Add Bank Account. */
export type AddBankAccountInput = Schemas["AddBankAccountRequest"];

/** An account as answered: its mask, never its numbers. */
export function bankAccountView(row: BankAccount): BankAccountView {
  return {
    bank_account_id: row.id,
    user_id: row.userId,
    currency: row.currency,
    holder_name: row.holderName,
    label: row.label ?? null,
    account_mask: row.accountMask,
    created_at: row.createdAt.toISOString(),
  };
}

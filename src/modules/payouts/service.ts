/**
 * The customer's SEPA payout file (docs/decisions/fiat.md "The SEPA payout file"): the eur payouts
 * of the fiat withdrawals confirmed on one UTC day, returned ones included, as an ISO 20022
 * `pain.001.001.03` credit transfer file (./sepa-file.ts), paid from the customer's settlement
 * account at the provider.
 */
import { createHash } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Db } from "../../db/sql.js";
import { ValidationFailed } from "../../domain/errors.js";
import { money } from "../../domain/money.js";
import type { CustodyProvider } from "../../providers/provider.js";
import type { BankAccountService } from "../bank-accounts/service.js";
import type { IdentityService } from "../identity/service.js";
import { daySepaPayouts } from "./repository.js";
import { sepaCreditTransferFile, type SepaPayout } from "./sepa-file.js";

/** One UTC day in milliseconds. */
const DAY_MS = 86_400_000;

/** The SEPA payout files of customers. */
export class PayoutFileService {
  constructor(
    /** Where the day's payouts are read (src/db/sql.ts). */
    private readonly db: Db,
    private readonly identity: Pick<IdentityService, "getActiveCustomer">,
    /** Opens the bank accounts' sealed numbers. */
    private readonly bankAccounts: Pick<BankAccountService, "openNumbers">,
    /** Names the customer's settlement account (the file's debtor). */
    private readonly provider: Pick<CustodyProvider, "settlementAccount">,
  ) {}

  /**
   * Get SEPA Payout File: the `pain.001.001.03` document of customer `customerId`'s eur payouts
   * confirmed on UTC day `date`, in confirm order. `MsgId` is `SEPA`, the creation instant
   * (`YYYYMMDDhhmmss`, UTC) and 8 hex digits of the customer id's SHA-256 (26 characters), so two
   * downloads are two messages; each transfer's `EndToEndId` is the payout's rail reference and its
   * remittance text the withdrawal's memo, or its id. The requested execution date is `date`, or
   * today (UTC) when `date` is past.
   * @param date `YYYY-MM-DD` (the schema checks the form).
   * @param now the instant of the download.
   * @returns the XML text (UTF-8, with its declaration).
   * @throws ValidationFailed (422) for a date that is no calendar day (`2026-02-30`);
   *   DomainError CUSTOMER_NOT_FOUND (404).
   */
  async sepaFile(em: EntityManager, customerId: string, date: string, now = new Date()): Promise<string> {
    const from = calendarDay(date);
    const customer = await this.identity.getActiveCustomer(em, customerId);
    const rows = await daySepaPayouts(this.db, customerId, from, new Date(from.getTime() + DAY_MS));
    const payouts: SepaPayout[] = rows.map((row) => {
      const numbers = this.bankAccounts.openNumbers(row.bank_account_id, row.numbers_sealed);
      if (numbers.currency !== "eur") throw new Error(`bank account ${row.bank_account_id} of eur withdrawal ${row.withdrawal_id} is not a SEPA account`);
      return {
        endToEndId: row.payout_reference,
        amount: money(row.amount).toFixed(2),
        creditor: { name: row.holder_name, iban: numbers.iban, ...(numbers.bic !== null && { bic: numbers.bic }) },
        remittance: row.memo ?? `Withdrawal ${row.withdrawal_id}`,
      };
    });
    const today = now.toISOString().slice(0, 10);
    const stamp = now.toISOString().replace(/[-:T]/g, "").slice(0, 14);
    const settlement = this.provider.settlementAccount(customerId);
    return sepaCreditTransferFile({
      messageId: `SEPA${stamp}${createHash("sha256").update(customerId).digest("hex").slice(0, 8)}`,
      createdAt: now,
      executionDate: date < today ? today : date,
      debtor: { name: customer.business.entity_name || customerId, iban: settlement.iban, ...(settlement.bic !== null && { bic: settlement.bic }) },
      payouts,
    });
  }
}

/** The start (UTC midnight) of calendar day `date` (`YYYY-MM-DD`). @throws ValidationFailed (422) for a day that does not exist. */
function calendarDay(date: string): Date {
  const start = new Date(`${date}T00:00:00.000Z`);
  if (Number.isNaN(start.getTime()) || start.toISOString().slice(0, 10) !== date) {
    throw new ValidationFailed([{ field: "date", message: `${date} is not a calendar day (YYYY-MM-DD).` }]);
  }
  return start;
}

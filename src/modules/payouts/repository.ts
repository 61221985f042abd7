/**
 * The payouts module's statements (docs/architecture.md "Reaching the database"). It owns no table:
 * the SEPA payout file reads the withdrawals module's `withdrawal` rows of fiat payouts with the
 * bank-accounts module's `bank_account` row each pays to, in one statement
 * (docs/decisions/fiat.md "The SEPA payout file").
 */
import type { PreparedStatement, Sql } from "../../db/sql.js";

/** A payout of the SEPA file: the withdrawal, its amount (decimal text), its rail reference, and the sealed account it paid to. */
export interface SepaPayoutRow {
  withdrawal_id: string;
  amount: string;
  payout_reference: string;
  memo: string | null;
  completed_at: Date;
  bank_account_id: string;
  holder_name: string;
  numbers_sealed: string;
}

/**
 * The eur payouts of customer `$1` confirmed in [`$2`, `$3`) (UTC instants): fiat withdrawals
 * submitted to the rail (a payout reference), returned ones included, with the bank account each
 * pays to; in confirm order.
 */
export const DAY_SEPA_PAYOUTS: PreparedStatement = {
  name: "payouts_day_sepa",
  text: `select w.id as withdrawal_id, w.amount::text as amount, w.payout_reference, w.memo, w.completed_at,
                b.id as bank_account_id, b.holder_name, b.numbers_sealed
           from withdrawal w join bank_account b on b.id = w.bank_account_id
          where w.customer_id = $1 and w.withdrawal_type = 'fiat' and w.currency = 'eur' and w.payout_reference is not null
            and w.completed_at >= $2 and w.completed_at < $3
          order by w.completed_at, w.id`,
};

/** The eur payouts of `customerId` confirmed in [`from`, `to`), in confirm order. */
export function daySepaPayouts(sql: Sql, customerId: string, from: Date, to: Date): Promise<SepaPayoutRow[]> {
  return sql.rows<SepaPayoutRow>(DAY_SEPA_PAYOUTS, [customerId, from, to]);
}

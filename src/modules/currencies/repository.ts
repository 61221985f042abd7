/**
 * The currencies module's statements (docs/architecture.md "Reaching the database") on its table
 * `currency_switch`: the operator's switches of the provider's currency flags
 * (docs/decisions/provider-and-sandbox.md "Currency switches").
 */
import type { PreparedStatement, Sql } from "../../db/sql.js";

/** The operator's switches of one currency: a null flag is not switched (the provider's value holds). */
export interface CurrencySwitchRow {
  code: string;
  can_deposit: boolean | null;
  can_withdraw: boolean | null;
  is_custody_enabled: boolean | null;
  is_trading_enabled: boolean | null;
}

/** Every currency's switches. */
export const CURRENCY_SWITCHES: PreparedStatement = {
  name: "currency_switches",
  text: `select code, can_deposit, can_withdraw, is_custody_enabled, is_trading_enabled from currency_switch`,
};

/**
 * Sets currency `$1`'s switches given (`$2`–`$5`, null keeps a flag's switch as it is) at `$6`, and
 * answers the row as it is after.
 */
export const UPSERT_CURRENCY_SWITCH: PreparedStatement = {
  name: "currency_switch_upsert",
  text: `insert into currency_switch as s (code, can_deposit, can_withdraw, is_custody_enabled, is_trading_enabled, updated_at)
         values ($1, $2, $3, $4, $5, $6)
         on conflict (code) do update set
           can_deposit = coalesce(excluded.can_deposit, s.can_deposit),
           can_withdraw = coalesce(excluded.can_withdraw, s.can_withdraw),
           is_custody_enabled = coalesce(excluded.is_custody_enabled, s.is_custody_enabled),
           is_trading_enabled = coalesce(excluded.is_trading_enabled, s.is_trading_enabled),
           updated_at = excluded.updated_at
         returning code, can_deposit, can_withdraw, is_custody_enabled, is_trading_enabled`,
};

/** Every currency's switches. */
export function currencySwitchRows(sql: Sql): Promise<CurrencySwitchRow[]> {
  return sql.rows<CurrencySwitchRow>(CURRENCY_SWITCHES);
}

/** Sets the switches of `s.code` that are not null, at `now`, in one statement. @returns the row after. */
export async function upsertCurrencySwitch(sql: Sql, s: CurrencySwitchRow, now: Date): Promise<CurrencySwitchRow> {
  const [row] = await sql.rows<CurrencySwitchRow>(UPSERT_CURRENCY_SWITCH, [s.code, s.can_deposit, s.can_withdraw, s.is_custody_enabled, s.is_trading_enabled, now]);
  return row as CurrencySwitchRow;
}

/**
 * The operator's currency switches (docs/decisions/provider-and-sandbox.md "Currency switches"):
 * the provider's catalogue with four of its flags switched off where the operator said so.
 * `is_custody_enabled` governs new wallets and transfers, `can_deposit` sandbox and bank deposits,
 * `can_withdraw` Initiate Withdrawal, `is_trading_enabled` quotes, orders and the pair list.
 *
 * The switches live in `currency_switch` (./repository.ts) and every process keeps a copy, read
 * again at most {@link SWITCH_REFRESH_MS} after the last read: a switch takes effect at once on the
 * process that took it and within that bound on every other replica. The switched catalogue keeps
 * its identity while nothing changes, so List Currencies serializes it once per change
 * (src/http/send-json.ts `frozenOnce`).
 *
 * A read of the copy may wait for a pool connection, so no method is called inside a transaction
 * (docs/architecture.md "Reaching the database"): a transaction's checks take the catalogue read
 * before it began ({@link currencies}).
 */
import { DomainError, quote } from "../../domain/errors.js";
import type { Db } from "../../db/sql.js";
import type { CatalogueCurrency, CataloguePair, CustodyProvider } from "../../providers/provider.js";
import { currencySwitchRows, upsertCurrencySwitch, type CurrencySwitchRow } from "./repository.js";

/** How long a process trusts its copy of the switches, milliseconds. */
export const SWITCH_REFRESH_MS = 1000;

/** The flags the operator switches. */
export type SwitchedFlag = "canDeposit" | "canWithdraw" | "isCustodyEnabled" | "isTradingEnabled";

/** A change of switches: each flag given replaces its switch (Update Currency's body). */
export type SwitchChange = Partial<Record<SwitchedFlag, boolean>>;

/** The column of each switched flag. */
const COLUMN = { canDeposit: "can_deposit", canWithdraw: "can_withdraw", isCustodyEnabled: "is_custody_enabled", isTradingEnabled: "is_trading_enabled" } as const;

/** What each flag switches, for the refusal's message. */
const WHAT = { canDeposit: "deposits", canWithdraw: "withdrawals", isCustodyEnabled: "custody", isTradingEnabled: "trading" } as const;

/** The provider's catalogue under the operator's switches. */
export class CurrencySwitches {
  private rows = new Map<string, CurrencySwitchRow>();
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | null = null;
  private switched: { base: readonly CatalogueCurrency[]; rows: Map<string, CurrencySwitchRow>; list: readonly CatalogueCurrency[] } | null = null;
  private pairList: { base: readonly CataloguePair[]; currencies: readonly CatalogueCurrency[]; list: readonly CataloguePair[] } | null = null;

  constructor(
    private readonly db: Db,
    private readonly provider: Pick<CustodyProvider, "listCurrencies" | "listTradingPairs">,
    private readonly refreshMs = SWITCH_REFRESH_MS,
  ) {}

  /**
   * The catalogue with the switches applied: a flag is true only when the provider's is and the
   * operator has not switched it off. The same array while neither changes.
   */
  async currencies(): Promise<readonly CatalogueCurrency[]> {
    await this.fresh();
    const base = await this.provider.listCurrencies();
    if (this.switched?.base !== base || this.switched.rows !== this.rows) {
      const rows = this.rows;
      this.switched = { base, rows, list: base.map((c) => switchedCurrency(c, rows.get(c.code))) };
    }
    return this.switched.list;
  }

  /** The provider's pairs without those of a currency whose trading is switched off. The same array while nothing changes. */
  async pairs(): Promise<readonly CataloguePair[]> {
    const currencies = await this.currencies();
    const base = await this.provider.listTradingPairs();
    if (this.pairList?.base !== base || this.pairList.currencies !== currencies) {
      const off = new Set(currencies.filter((c) => !c.isTradingEnabled).map((c) => c.code));
      this.pairList = { base, currencies, list: base.filter((p) => !off.has(p.base) && !off.has(p.quote)) };
    }
    return this.pairList.list;
  }

  /**
   * Refuses what the operator switched off: currency `code` (lower-case, in the catalogue) with
   * `flag` switched off. A flag the provider itself has false is the caller's to refuse with its
   * own code (UNSUPPORTED_CURRENCY).
   * @throws DomainError CURRENCY_NOT_ACTIVE (400, naming `field`).
   */
  async assertOn(code: string, flag: SwitchedFlag, field = "currency"): Promise<void> {
    await this.fresh();
    if (this.rows.get(code)?.[COLUMN[flag]] === false) {
      throw new DomainError("CURRENCY_NOT_ACTIVE", `${code} ${WHAT[flag]} are switched off by the operator.`, field);
    }
  }

  /**
   * Update Currency: sets the switches given for currency `code` (case-insensitive), in one
   * statement, and answers the currency as it is listed from then on.
   * @throws DomainError NOT_FOUND (404, not in the catalogue).
   */
  async update(code: string, change: SwitchChange): Promise<CatalogueCurrency> {
    const lower = code.toLowerCase();
    const base = (await this.provider.listCurrencies()).find((c) => c.code === lower);
    if (!base) throw new DomainError("NOT_FOUND", `Unknown currency ${quote(code)}.`);
    const row = await upsertCurrencySwitch(this.db, {
      code: lower,
      can_deposit: change.canDeposit ?? null,
      can_withdraw: change.canWithdraw ?? null,
      is_custody_enabled: change.isCustodyEnabled ?? null,
      is_trading_enabled: change.isTradingEnabled ?? null,
    }, new Date());
    await this.fresh();
    this.rows = new Map(this.rows).set(lower, row);
    return switchedCurrency(base, row);
  }

  /** Reads the switches again when the copy is older than the refresh bound (one read at a time). */
  private async fresh(): Promise<void> {
    if (performance.now() - this.readAt < this.refreshMs) return;
    this.reading ??= this.read().finally(() => {
      this.reading = null;
    });
    await this.reading;
  }

  private async read(): Promise<void> {
    const startedAt = performance.now();
    const rows = await currencySwitchRows(this.db);
    if (!sameRows(rows, this.rows)) this.rows = new Map(rows.map((r) => [r.code, r]));
    this.readAt = startedAt;
  }
}

/** Catalogue entry `c` under switches `row`. */
function switchedCurrency(c: CatalogueCurrency, row: CurrencySwitchRow | undefined): CatalogueCurrency {
  if (!row) return c;
  const on = (flag: SwitchedFlag): boolean => c[flag] && row[COLUMN[flag]] !== false;
  return { ...c, canDeposit: on("canDeposit"), canWithdraw: on("canWithdraw"), isCustodyEnabled: on("isCustodyEnabled"), isTradingEnabled: on("isTradingEnabled") };
}

/** Whether `rows` hold what `known` holds. */
function sameRows(rows: readonly CurrencySwitchRow[], known: ReadonlyMap<string, CurrencySwitchRow>): boolean {
  if (rows.length !== known.size) return false;
  return rows.every((r) => {
    const k = known.get(r.code);
    return k !== undefined && (Object.keys(COLUMN) as SwitchedFlag[]).every((f) => k[COLUMN[f]] === r[COLUMN[f]]);
  });
}

/**
 * The upstream custody provider (docs/decisions/provider-and-sandbox.md "One provider interface, one built-in provider"): everything the service asks upstream goes
 * through this interface; nothing outside src/providers knows which provider is active.
 * Customer registry, vault wallets, deposit addresses, the currency and pair catalogue, address
 * validation and withdrawal execution.
 *
 * Methods that change provider state take the caller's transaction (src/db/sql.ts `Tx`), and the
 * price read the pool or a transaction (`Sql`): the sandbox keeps its state in the service's
 * database, with the caller's change; a remote provider ignores it.
 */
import type { Sql, Tx } from "../db/sql.js";
import type { BusinessProfile } from "../domain/customers.js";
import type { Money } from "../domain/money.js";
import type { PairMarket, Side } from "../domain/trading.js";

/** A customer record as the upstream registry holds it. */
export interface UpstreamCustomer {
  customerId: string;
  accountType: "individual" | "corporation";
  accountRole: "client" | "partner";
  accountPurpose: string;
  firstName: string;
  lastName: string;
  phoneCountryCode: string;
  phoneNumber: string;
  /** Full business profile; `entity_name` and `incorporation_country` are always present. */
  business: BusinessProfile;
  /** Whether a custody vault is configured upstream (else wallets answer `CLIENT_NO_SUPPLIER_ID`). */
  hasVault: boolean;
}

/** A currency of the provider's catalogue (reference: "Currency"); amounts are decimal strings. */
export interface CatalogueCurrency {
  /** Provider's internal id. */
  id: number;
  /** Lower-case code, e.g. `btc`. */
  code: string;
  name: string;
  /** Upper-case ticker, e.g. `BTC`. */
  symbol: string;
  asciiSign: string;
  /** Decimals supported. */
  precision: number;
  /** Minimum withdrawal amount, decimal string. */
  minWithdrawal: string;
  isFiat: boolean;
  canDeposit: boolean;
  canWithdraw: boolean;
  isConfirmationsNeeded: boolean;
  isCustodyEnabled: boolean;
  isTradingEnabled: boolean;
  /** Vault networks (`networks/<name>`) the currency can be held on: chains, or for fiat a bank rail (`networks/ach`, `networks/sepa`). */
  networks: readonly string[];
}

/** A trading pair of currency codes. */
export interface CataloguePair {
  base: string;
  quote: string;
}

/** The provider interface. Implementations throw `DomainError("BAD_GATEWAY")` when upstream fails. */
export interface CustodyProvider {
  /** `sandbox` for the built-in provider. */
  readonly name: string;
  /** The upstream record of `customerId`, or null when upstream does not know it. */
  lookupCustomer(customerId: string): Promise<UpstreamCustomer | null>;
  /** Every currency of the catalogue, fiat and crypto. */
  listCurrencies(): Promise<readonly CatalogueCurrency[]>;
  /** Every trading pair. */
  listTradingPairs(): Promise<readonly CataloguePair[]>;
  /** Vault networks the provider supports (`networks/<name>`). */
  supportedNetworks(): readonly string[];
  /**
   * Creates a vault wallet for one of the customer's wallets.
   * @returns the provider's id of the vault wallet.
   * @throws DomainError CLIENT_NO_SUPPLIER_ID (400) when the customer has no custody vault.
   */
  createVaultWallet(tx: Tx, customerId: string, walletId: string): Promise<string>;
  /**
   * Allocates a deposit address of `network` in the vault wallet: a valid address of that network.
   * @throws DomainError ADDRESS_GENERATION_FAILED (500) when none can be made.
   */
  createDepositAddress(tx: Tx, vaultWalletId: string, network: string): Promise<string>;
  /** Whether `address` is a valid destination on `network` (withdrawals: `INVALID_CRYPTO_ADDRESS`). */
  isValidAddress(network: string, address: string): boolean;
  /** A transaction hash in `network`'s format (the sandbox makes them up; real providers report them). */
  newTransactionHash(network: string): string;
  /**
   * The customer's settlement account at the provider, from which its eur payouts are paid: an IBAN
   * in electronic format and its BIC, or null when the provider names none (the debtor of the SEPA
   * payout file, docs/decisions/fiat.md "The SEPA payout file").
   */
  settlementAccount(customerId: string): { iban: string; bic: string | null };
  /**
   * Sends `amount` of `currency` from the vault wallet to `address` on `network` (withdrawal
   * confirmed). Called inside the confirming transaction: if it throws, nothing is booked.
   * @returns the on-chain transaction hash.
   * @throws DomainError CRYPTO_WITHDRAWAL_FAILED (400) when the provider refuses it.
   */
  executeWithdrawal(
    tx: Tx,
    request: { vaultWalletId: string; network: string; currency: string; amount: string; address: string },
  ): Promise<{ hash: string }>;
  /**
   * The market of a listed `pair` that {@link assertTradable} accepted, for `customerId` now and an
   * order of `quantity` base units: mid price, spread, fee rate and order bounds (docs/decisions/trading.md).
   * @throws DomainError MARKET_CLOSED, LIQUIDITY_INSUFFICIENT (400) when the provider cannot fill it.
   */
  pairMarket(sql: Sql, customerId: string, pair: CataloguePair, quantity: Money): Promise<PairMarket>;
  /**
   * Fills a market order (docs/decisions/trading.md "Market orders"): `quantity` base units of
   * `pair` bought or sold for `customerId` at `price` (quote currency per base unit), the price
   * {@link pairMarket} gave for it an instant before. Called inside the order's transaction, after
   * its checks and its booking: if it throws, nothing is booked.
   * @throws DomainError ORDER_FAILED (400) when the provider cannot fill the order.
   */
  fillMarketOrder(tx: Tx, order: { customerId: string; pair: CataloguePair; side: Side; quantity: Money; price: Money }): Promise<void>;
  /**
   * Checks that a listed `pair` can be traded here.
   * @throws DomainError PAIR_NOT_AVAILABLE (400) otherwise.
   */
  assertTradable(pair: CataloguePair): Promise<void>;
  /**
   * Test mode only: sets `customerId`'s mid price of `pair` (Set Sandbox Price).
   * @returns when it was set.
   * @throws DomainError NOT_FOUND (404) on a provider without a test mode; PAIR_NOT_AVAILABLE (400).
   */
  setTestPrice(sql: Sql, customerId: string, pair: CataloguePair, price: Money): Promise<Date>;
}

/**
 * The sandbox provider (docs/decisions/provider-and-sandbox.md): behaves like a provider's test mode, deterministically.
 * Magic values of the customer registry:
 * - any `customer_id` of 1–48 characters `[A-Za-z0-9_-]` exists, with a business profile derived
 *   from `SANDBOX_SEED` and the id (same inputs → same profile);
 * - ids starting with `unknown` do not exist upstream (Create Customer answers 404);
 * - ids starting with `novault` exist but have no custody vault (`CLIENT_NO_SUPPLIER_ID`).
 * Vault: deposit addresses are real addresses of their network (testnet formats where the network
 * has them), derived by HD derivation from `SANDBOX_SEED` (src/providers/chains.ts; on a live EVM
 * network from the custody mnemonic, docs/decisions/live-chains.md), numbered per network in
 * creation order; on the bank rails `networks/ach` and `networks/sepa` they are virtual
 * accounts numbered the same way (src/providers/virtual-accounts.ts). Catalogue:
 * src/providers/sandbox-catalogue.ts. Market (quotes, prices, magic quantities):
 * src/providers/sandbox-trading.ts.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { Sql, Tx } from "../db/sql.js";
import { DomainError, quote } from "../domain/errors.js";
import { NETWORKS, deriveDepositAddress, hdSeedFrom, isNetworkId, isValidAddress, transactionHash } from "./chains.js";
import type { CatalogueCurrency, CataloguePair, CustodyProvider, UpstreamCustomer } from "./provider.js";
import { SANDBOX_CURRENCIES, SANDBOX_PAIRS } from "./sandbox-catalogue.js";
import { RAILS, isRailId, railReference, settlementIban, virtualAccount } from "./virtual-accounts.js";
import { insertDepositAddress, insertVaultWallet, nextDerivationIndex } from "./repository.js";
import type { Money } from "../domain/money.js";
import type { PairMarket } from "../domain/trading.js";
import { DEFAULT_SANDBOX_TRADING, assertTradable, sandboxFill, sandboxMarket, setSandboxPrice, type SandboxTradingOptions } from "./sandbox-trading.js";

const FIRST_NAMES = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken"];
const LAST_NAMES = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson"];
/**
 * Places of the registry's profiles. Each `phone` is a mobile number of its `country` by the rule of
 * users and customers (src/domain/users.ts `parseMobileNumber`), so a customer's stored phone always
 * passes Update Customer's check (GB: 07400 123456; 07911 123456 is a Guernsey number to libphonenumber).
 */
const COUNTRIES = [
  { country: "US", state: "DE", city: "Wilmington", phone: "2025550143", postal: "19801" },
  { country: "GB", state: "LND", city: "London", phone: "7400123456", postal: "EC1A 1BB" },
  { country: "MX", state: "CMX", city: "Ciudad de México", phone: "5512345678", postal: "06600" },
  { country: "ES", state: "MD", city: "Madrid", phone: "612345678", postal: "28013" },
] as const;
const ORG_TYPES = ["corporation", "llc", "partnership"] as const;
const BUSINESS_TYPES = ["fintech", "exchange", "payments", "asset_management"] as const;

/** Valid customer ids (reference: max 48; docs/decisions/provider-and-sandbox.md "Customer registry": `[A-Za-z0-9_-]`). */
export const CUSTOMER_ID_PATTERN = /^[A-Za-z0-9_-]{1,48}$/;

/** The sandbox's networks: the five chains, then the two bank rails. */
const SUPPORTED_NETWORKS: readonly string[] = [...NETWORKS, ...RAILS];

/** How many destinations {@link SandboxProvider} remembers as valid (the oldest forgotten first). */
const CHECKED_DESTINATIONS_MAX = 4096;

/** The built-in sandbox provider; its state lives in the service's database (./sandbox-entities.ts). */
export class SandboxProvider implements CustodyProvider {
  readonly name = "sandbox";
  private hdSeed: Uint8Array | undefined;
  /**
   * `<network> <address>` pairs {@link isValidAddress} found valid (a pure function of both), so
   * the send of a confirmed withdrawal does not decode again the address its Initiate checked in
   * this process (docs/performance.md "Withdrawals"). Bounded by {@link CHECKED_DESTINATIONS_MAX}.
   */
  private readonly validDestinations = new Set<string>();

  /**
   * @param seed `SANDBOX_SEED`.
   * @param trading spread and fee rate of its quotes (`SANDBOX_SPREAD_BPS`, `SANDBOX_FEE_BPS`).
   * @param seeds the HD seed of a chain network's deposit addresses when it is not `SANDBOX_SEED`'s:
   *   the custody seed on a live network (src/providers/evm/keys.ts `CustodyKeys`), `undefined` on the others.
   */
  constructor(
    private readonly seed: string,
    private readonly trading: SandboxTradingOptions = DEFAULT_SANDBOX_TRADING,
    private readonly seeds?: { seedFor(network: string): Uint8Array | undefined },
  ) {}

  async assertTradable(pair: CataloguePair): Promise<void> {
    assertTradable(pair, SANDBOX_CURRENCIES);
  }

  async pairMarket(sql: Sql, customerId: string, pair: CataloguePair, quantity: Money): Promise<PairMarket> {
    return sandboxMarket(sql, customerId, pair, quantity, this.trading);
  }

  async fillMarketOrder(_tx: Tx, order: { quantity: Money }): Promise<void> {
    sandboxFill(order.quantity);
  }

  async setTestPrice(sql: Sql, customerId: string, pair: CataloguePair, price: Money): Promise<Date> {
    assertTradable(pair, SANDBOX_CURRENCIES);
    return setSandboxPrice(sql, customerId, pair, price);
  }

  async listCurrencies(): Promise<readonly CatalogueCurrency[]> {
    return SANDBOX_CURRENCIES;
  }

  async listTradingPairs(): Promise<readonly CataloguePair[]> {
    return SANDBOX_PAIRS;
  }

  /** The five chain networks and the bank rails `networks/ach` (usd) and `networks/sepa` (eur). */
  supportedNetworks(): readonly string[] {
    return SUPPORTED_NETWORKS;
  }

  async createVaultWallet(tx: Tx, customerId: string, walletId: string): Promise<string> {
    const upstream = await this.lookupCustomer(customerId);
    if (!upstream?.hasVault) {
      throw new DomainError("CLIENT_NO_SUPPLIER_ID", "No custody vault is configured for this client at the custody provider.");
    }
    const vaultWalletId = randomUUID();
    await insertVaultWallet(tx, vaultWalletId, customerId, walletId);
    return vaultWalletId;
  }

  /**
   * A chain network's next HD-derived address, or a rail's next virtual account (an IBAN on
   * `networks/sepa`, `<routing>/<account>` on `networks/ach`; src/providers/virtual-accounts.ts),
   * from the network's next derivation index. A live network's address derives from the custody
   * seed at the same path (docs/decisions/live-chains.md "Deposit addresses"), any other from `SANDBOX_SEED`.
   */
  async createDepositAddress(tx: Tx, vaultWalletId: string, network: string): Promise<string> {
    if (!isNetworkId(network) && !isRailId(network)) throw new DomainError("ADDRESS_GENERATION_FAILED", `The sandbox cannot make addresses on ${quote(network)}.`);
    // One derivation index after another per network: serialise allocators of the same network.
    const index = await nextDerivationIndex(tx, network);
    const { address, path } = isRailId(network)
      ? virtualAccount(network, index)
      : deriveDepositAddress(network, this.seeds?.seedFor(network) ?? (this.hdSeed ??= hdSeedFrom(this.seed)), index);
    await insertDepositAddress(tx, { network, index, path, address, vaultWalletId });
    return address;
  }

  /** A chain address valid on `network`; always false on a bank rail (a virtual account is no crypto destination). */
  isValidAddress(network: string, address: string): boolean {
    const valid = isNetworkId(network) && isValidAddress(network, address);
    if (valid) this.remember(`${network} ${address}`);
    return valid;
  }

  async executeWithdrawal(
    _tx: Tx,
    request: { vaultWalletId: string; network: string; currency: string; amount: string; address: string },
  ): Promise<{ hash: string }> {
    if (!this.validDestinations.has(`${request.network} ${request.address}`) && !this.isValidAddress(request.network, request.address)) {
      throw new DomainError("CRYPTO_WITHDRAWAL_FAILED", `The sandbox refused to send to ${quote(request.address)} on ${quote(request.network)}.`);
    }
    return { hash: this.newTransactionHash(request.network) };
  }

  /** A chain's transaction hash, or a rail's transfer reference (SEPA end-to-end id, ACH trace number). */
  settlementAccount(customerId: string): { iban: string; bic: string | null } {
    return { iban: settlementIban(customerId), bic: null };
  }

  newTransactionHash(network: string): string {
    if (isRailId(network)) return railReference(network, randomBytes(32));
    if (!isNetworkId(network)) throw new DomainError("BAD_REQUEST", `Unknown network ${quote(network)}.`);
    return transactionHash(network, randomBytes(32));
  }

  /** Adds `destination` to {@link validDestinations}, forgetting the oldest one when full. */
  private remember(destination: string): void {
    if (this.validDestinations.has(destination)) return;
    if (this.validDestinations.size >= CHECKED_DESTINATIONS_MAX) {
      const oldest = this.validDestinations.values().next().value;
      if (oldest !== undefined) this.validDestinations.delete(oldest);
    }
    this.validDestinations.add(destination);
  }

  private pick<T>(list: readonly T[], salt: string, customerId: string): T {
    const digest = createHash("sha256").update(`${this.seed}\u0000${salt}\u0000${customerId}`).digest();
    return list[digest.readUInt32BE(0) % list.length] as T;
  }

  async lookupCustomer(customerId: string): Promise<UpstreamCustomer | null> {
    if (!CUSTOMER_ID_PATTERN.test(customerId) || customerId.startsWith("unknown")) return null;
    const place = this.pick(COUNTRIES, "country", customerId);
    const digits = createHash("sha256").update(`${this.seed}/reg/${customerId}`).digest("hex").replace(/[a-f]/g, "");
    return {
      customerId,
      accountType: "corporation",
      accountRole: "client",
      accountPurpose: "custody and payments",
      firstName: this.pick(FIRST_NAMES, "first", customerId),
      lastName: this.pick(LAST_NAMES, "last", customerId),
      phoneCountryCode: place.country,
      phoneNumber: place.phone,
      business: {
        entity_name: `${customerId} Ltd`,
        incorporation_country: place.country,
        incorporation_state: place.state,
        incorporation_date: "2019-03-14",
        organization_type: this.pick(ORG_TYPES, "org", customerId),
        business_type: this.pick(BUSINESS_TYPES, "biz", customerId),
        registration_number: `REG-${digits.padEnd(8, "0").slice(0, 8)}`,
        description: `Sandbox business profile of ${customerId}`,
        accredited_investor: false,
        non_agent_intermediary: false,
        principal_place_country: place.country,
        principal_place_state: place.state,
        principal_place_address: "1 Sandbox Street",
        principal_place_city: place.city,
        principal_place_postal_code: place.postal,
      },
      hasVault: !customerId.startsWith("novault"),
    };
  }
}

/**
 * The sandbox provider's currency and pair catalogue (docs/decisions/provider-and-sandbox.md "Catalogue": btc, eth, usdt,
 * usdc, trx, sol, pol and fiat usd, eur, with precision, minimum withdrawal and flags). The fiat
 * currencies are held on bank rails (docs/decisions/fiat.md "Rails and virtual accounts"): usd on
 * `networks/ach`, eur on `networks/sepa`, with no confirmations to wait for.
 *
 * Precision is at most 8 decimals for every sandbox currency, so every amount the sandbox accepts
 * prints exactly in the API's 8-decimal strings. Amounts are decimal strings.
 */
import type { CatalogueCurrency, CataloguePair } from "./provider.js";

/** The sandbox's currencies; `networks` are the vault networks (chains or bank rails) each can be held on. */
export const SANDBOX_CURRENCIES: readonly CatalogueCurrency[] = [
  { id: 1, code: "btc", name: "Bitcoin", symbol: "BTC", asciiSign: "₿", precision: 8, minWithdrawal: "0.0001", isFiat: false, canDeposit: true, canWithdraw: true, isConfirmationsNeeded: true, isCustodyEnabled: true, isTradingEnabled: true, networks: ["networks/bitcoin"] },
  { id: 2, code: "eth", name: "Ether", symbol: "ETH", asciiSign: "Ξ", precision: 8, minWithdrawal: "0.001", isFiat: false, canDeposit: true, canWithdraw: true, isConfirmationsNeeded: true, isCustodyEnabled: true, isTradingEnabled: true, networks: ["networks/ethereum"] },
  { id: 3, code: "usdt", name: "Tether USD", symbol: "USDT", asciiSign: "₮", precision: 6, minWithdrawal: "1", isFiat: false, canDeposit: true, canWithdraw: true, isConfirmationsNeeded: true, isCustodyEnabled: true, isTradingEnabled: true, networks: ["networks/ethereum", "networks/polygon", "networks/tron"] },
  { id: 4, code: "usdc", name: "USD Coin", symbol: "USDC", asciiSign: "$", precision: 6, minWithdrawal: "1", isFiat: false, canDeposit: true, canWithdraw: true, isConfirmationsNeeded: true, isCustodyEnabled: true, isTradingEnabled: true, networks: ["networks/ethereum", "networks/polygon", "networks/solana"] },
  { id: 5, code: "trx", name: "TRON", symbol: "TRX", asciiSign: "TRX", precision: 6, minWithdrawal: "1", isFiat: false, canDeposit: true, canWithdraw: true, isConfirmationsNeeded: true, isCustodyEnabled: true, isTradingEnabled: true, networks: ["networks/tron"] },
  { id: 6, code: "sol", name: "Solana", symbol: "SOL", asciiSign: "◎", precision: 8, minWithdrawal: "0.01", isFiat: false, canDeposit: true, canWithdraw: true, isConfirmationsNeeded: true, isCustodyEnabled: true, isTradingEnabled: true, networks: ["networks/solana"] },
  { id: 7, code: "pol", name: "Polygon Ecosystem Token", symbol: "POL", asciiSign: "POL", precision: 8, minWithdrawal: "0.1", isFiat: false, canDeposit: true, canWithdraw: true, isConfirmationsNeeded: true, isCustodyEnabled: true, isTradingEnabled: true, networks: ["networks/polygon"] },
  { id: 8, code: "usd", name: "US Dollar", symbol: "USD", asciiSign: "$", precision: 2, minWithdrawal: "10", isFiat: true, canDeposit: true, canWithdraw: true, isConfirmationsNeeded: false, isCustodyEnabled: true, isTradingEnabled: true, networks: ["networks/ach"] },
  { id: 9, code: "eur", name: "Euro", symbol: "EUR", asciiSign: "€", precision: 2, minWithdrawal: "10", isFiat: true, canDeposit: true, canWithdraw: true, isConfirmationsNeeded: false, isCustodyEnabled: true, isTradingEnabled: true, networks: ["networks/sepa"] },
];

/** The sandbox's trading pairs (base/quote codes). */
export const SANDBOX_PAIRS: readonly CataloguePair[] = [
  { base: "btc", quote: "usdt" },
  { base: "eth", quote: "usdt" },
  { base: "sol", quote: "usdt" },
  { base: "trx", quote: "usdt" },
  { base: "pol", quote: "usdt" },
  { base: "usdc", quote: "usdt" },
  { base: "eth", quote: "btc" },
  { base: "btc", quote: "usd" },
  { base: "eth", quote: "usd" },
  { base: "btc", quote: "eur" },
  { base: "eth", quote: "eur" },
];

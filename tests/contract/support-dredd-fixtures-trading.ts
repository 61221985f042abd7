/**
 * The records the Dredd cases of trading need (tests/contract/dredd-cases-trading.cjs;
 * docs/decisions/trading.md), seeded over the platform API after the example customer, user and
 * wallet exist ({@link seedTradingFixtures}, called by support-dredd-fixtures.ts `seedFixtures`).
 */
import { userBody } from "../support/fixtures.js";
import type { JsonObject } from "./support-dredd-document.js";
import type { client } from "./support-dredd-fixtures.js";

/** Ids, keys and bodies the trading seeding creates; part of the platform fixtures. */
export interface TradingFixtures {
  /**
   * An order of the example user: a buy of 0.01 btc on the example wallet at the sandbox's default
   * BTCUSDT mid (65000), executed with its own `Idempotency-Key` (never the document's example
   * key). Its quote is executed: another order of it answers 400 `QUOTE_INVALID`; its key with
   * another body answers 409 `IDEMPOTENCY_KEY_REUSED`.
   */
  seededOrder: { idempotencyKey: string; body: JsonObject; orderId: string; quoteId: string };
  /**
   * A VERIFIED user of the example customer (none of the other fixtures' users) and its wallet
   * holding eth and usdt on ethereum, with {@link ETH_FUNDING} eth: a market sell of the sandbox's
   * magic 77.77777777 eth of ETHUSDT passes the bounds and the balance and answers 400 `ORDER_FAILED`.
   */
  marketUserId: string;
  marketWalletId: string;
}

/** The eth the market user's wallet receives (units of eth): more than the 77.77777777 of the ORDER_FAILED case. */
const ETH_FUNDING = 100;

/** The usdt the example user's wallet receives for trading (units of usdt): several 0.01 btc buys (651.30065 usdt each), far below the 90000 usdt the INSUFFICIENT_BALANCE cases send. */
const USDT_FUNDING = 5000;

/**
 * Seeds {@link TradingFixtures} through `call` for the example customer (owner key `ownerKey`), its
 * example user `userId` (active) and that user's wallet `walletId` (usdt on ethereum and btc on
 * bitcoin; it gets {@link USDT_FUNDING} usdt by a sandbox deposit), and the market user with its wallet.
 */
export async function seedTradingFixtures(
  call: ReturnType<typeof client>,
  example: { ownerKey: string; userId: string; walletId: string },
): Promise<TradingFixtures> {
  const asOwner = { "x-api-key": example.ownerKey };
  await call("POST", "/sandbox/deposits", 201, { headers: asOwner, body: { wallet_id: example.walletId, network: "networks/ethereum", currency: "usdt", amount: USDT_FUNDING } });
  const quote = (await call("POST", `/users/${example.userId}/quotes`, 201, {
    headers: asOwner,
    body: { wallet_id: example.walletId, symbol: "BTCUSDT", side: "buy", quantity: 0.01 },
  })).data;
  const idempotencyKey = "dredd-fixture-order";
  const body = { quote_id: String(quote.quote_id) };
  const order = (await call("POST", `/users/${example.userId}/orders`, 201, { headers: { ...asOwner, "Idempotency-Key": idempotencyKey }, body })).data;
  const marketUser = (await call("POST", "/users", 201, { headers: asOwner, body: userBody() as JsonObject })).data;
  const marketUserId = String(marketUser.user_id);
  await call("POST", `/users/${marketUserId}/activate`, 200, { headers: asOwner });
  const networks = [{ name: "networks/ethereum", currency: "eth" }, { name: "networks/ethereum", currency: "usdt" }];
  const marketWalletId = String((await call("POST", `/users/${marketUserId}/wallets`, 201, { headers: asOwner, body: { name: "Dredd market orders", networks } })).data.wallet_id);
  await call("POST", "/sandbox/deposits", 201, { headers: asOwner, body: { wallet_id: marketWalletId, network: "networks/ethereum", currency: "eth", amount: ETH_FUNDING } });
  return { seededOrder: { idempotencyKey, body, orderId: String(order.order_id), quoteId: body.quote_id }, marketUserId, marketWalletId };
}

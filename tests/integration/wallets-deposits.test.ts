/**
 * The sandbox deposit helper over HTTP on a real PostgreSQL (reference: "Wallet", "Wallet balance",
 * "Wallet transaction", "Wallets (owner API key or user token)", "Currency", "Trading pair",
 * "Currencies (owner API key)", "Authentication", the Wallet codes, "Limits";
 * docs/decisions/customers-users-and-wallets.md): createSandboxDeposit's success path, the hash
 * formats per network, the balances it credits, and every error row.
 */
import { describe, expect, it } from "vitest";
import { type NetworkId } from "../../src/providers/chains.js";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import {
  ALL_NATIVE, apiKey, bearer, BTC, HASH_FORMAT, type TransactionRecord, UNKNOWN_ID, USDT_ETH,
  useWalletsScene, ZERO,
} from "../support/wallets-scene.js";

const wallets = useWalletsScene();
const { api, scene, listTransactions, sandboxDeposit, newWallet, deposited, balancesOf } = wallets;

describe("POST /sandbox/deposits (createSandboxDeposit)", () => {
  it("credits a confirmed deposit: 201, a done deposit transaction with a hash in the network's format and the balance after", async () => {
    const { key, userId, customerId: cid } = await scene("deposit");
    const wallet = await newWallet(apiKey(key), userId, ALL_NATIVE);
    const hashes: string[] = [];
    for (const net of ALL_NATIVE) {
      const before = Date.now();
      const res = await sandboxDeposit(apiKey(key), { wallet_id: wallet.wallet_id, network: net.name, currency: net.currency, amount: 1.5 });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.success).toBe(true);
      const tx = res.body.data as TransactionRecord;
      expect(Number.isInteger(tx.id)).toBe(true);
      expect(tx.balance).toBe(1.5);
      expect(tx.transaction).toMatchObject({
        action: "deposit",
        status: "done",
        currency: net.currency,
        symbol: net.currency.toUpperCase(),
        amount: 1.5,
        net_proceeds: 1.5,
        fees: 0,
        client_id: cid,
        idempotency_id: null,
      });
      expect(tx.transaction.hash, net.name).toMatch(HASH_FORMAT[net.name as NetworkId]);
      expect(Date.parse(tx.transaction.created_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(tx.transaction.created_at)).toBeLessThanOrEqual(Date.now() + 1000);
      hashes.push(tx.transaction.hash);
    }
    expect(new Set(hashes).size).toBe(hashes.length);

    // the balance after accumulates
    const again = await deposited(key, wallet.wallet_id, BTC, 0.25);
    expect(again.balance).toBe(1.75);
    expect(again.transaction.hash).toMatch(HASH_FORMAT["networks/bitcoin"]);

    // and the transaction list holds exactly what the helper answered
    const list = await listTransactions(apiKey(key), wallet.wallet_id, { "filter[where][currency]": "btc" });
    expect(list.body.data[0]).toEqual(again);
  });

  it("accepts a usdt amount with 6 decimals and a btc amount with 8", async () => {
    const { key, userId } = await scene("deposit-precision-ok");
    const wallet = await newWallet(apiKey(key), userId, [USDT_ETH, BTC]);
    expect((await deposited(key, wallet.wallet_id, USDT_ETH, 1.123456)).transaction.amount).toBe(1.123456);
    expect((await deposited(key, wallet.wallet_id, BTC, 0.12345678)).transaction.amount).toBe(0.12345678);
    const balances = await balancesOf(apiKey(key), wallet.wallet_id);
    expect(balances.usdt?.balance).toBe("1.12345600");
    expect(balances.btc?.balance).toBe("0.12345678");
  });

  it("answers 404 WALLET_NOT_FOUND for another customer's wallet and an unknown wallet, and credits nothing", async () => {
    const mine = await scene("deposit-iso-a");
    const theirs = await scene("deposit-iso-b");
    const wallet = await newWallet(apiKey(theirs.key), theirs.userId, [BTC]);
    const res = await sandboxDeposit(apiKey(mine.key), { wallet_id: wallet.wallet_id, network: BTC.name, currency: "btc", amount: 1 });
    expectPlatformError(res, 404, "WALLET_NOT_FOUND");
    expect(res.body.data).toBeUndefined();
    expectPlatformError(await sandboxDeposit(apiKey(mine.key), { wallet_id: UNKNOWN_ID, network: BTC.name, currency: "btc", amount: 1 }), 404, "WALLET_NOT_FOUND");
    const malformed = await sandboxDeposit(apiKey(mine.key), { wallet_id: "not-a-uuid", network: BTC.name, currency: "btc", amount: 1 });
    expectPlatformError(malformed, 400, "INVALID_WALLET_ID");
    expect(malformed.body.errors[0].field).toBe("wallet_id");
    expect((await balancesOf(apiKey(theirs.key), wallet.wallet_id)).btc?.balance).toBe(ZERO);
  });

  it.each([
    ["a currency the wallet lacks", { network: "networks/ethereum", currency: "eth" }],
    ["a currency it holds on another network", { network: "networks/tron", currency: "usdt" }],
    ["a network it lacks", { network: "networks/solana", currency: "sol" }],
    ["a network that does not exist", { network: "networks/dogecoin", currency: "btc" }],
  ])("answers 404 ADDRESS_NOT_FOUND for %s", async (_label, where) => {
    const { key, userId } = await scene("deposit-no-address");
    const wallet = await newWallet(apiKey(key), userId, [BTC, USDT_ETH]);
    expectPlatformError(await sandboxDeposit(apiKey(key), { wallet_id: wallet.wallet_id, amount: 1, ...where }), 404, "ADDRESS_NOT_FOUND");
    const balances = await balancesOf(apiKey(key), wallet.wallet_id);
    expect(balances.btc?.balance).toBe(ZERO);
    expect(balances.usdt?.balance).toBe(ZERO);
  });

  it.each([
    ["zero", "btc", 0, "AMOUNT_MUST_BE_POSITIVE"],
    ["negative", "btc", -1, "AMOUNT_MUST_BE_POSITIVE"],
    ["more decimals than usdt's precision (6)", "usdt", 1.1234567, "INVALID_AMOUNT"],
    ["more decimals than btc's precision (8)", "btc", 0.123456789, "INVALID_AMOUNT"],
  ])("answers 400 for a %s amount with the right code and credits nothing", async (_label, currency, amount, code) => {
    const { key, userId } = await scene("deposit-amount");
    const wallet = await newWallet(apiKey(key), userId, [BTC, USDT_ETH]);
    const network = currency === "btc" ? BTC.name : USDT_ETH.name;
    expectPlatformError(await sandboxDeposit(apiKey(key), { wallet_id: wallet.wallet_id, network, currency, amount }), 400, code);
    const balances = await balancesOf(apiKey(key), wallet.wallet_id);
    expect(balances.btc?.balance).toBe(ZERO);
    expect(balances.usdt?.balance).toBe(ZERO);
    expect((await listTransactions(apiKey(key), wallet.wallet_id)).body.data).toEqual([]);
  });

  it("reads a deposit's amount from the JSON text: 2.00000000000000001 btc answers INVALID_AMOUNT, not a deposit of 2 (docs/decisions/requests-and-validation.md#malformed-requests)", async () => {
    const { key, userId } = await scene("deposit-raw-amount");
    const wallet = await newWallet(apiKey(key), userId, [BTC]);
    const raw = (amount: string) =>
      apiKey(key)(api().post(`${BASE}/sandbox/deposits`))
        .set("Content-Type", "application/json")
        .send(`{"wallet_id":"${wallet.wallet_id}","network":"${BTC.name}","currency":"btc","amount":${amount}}`);
    expectPlatformError(await raw("2.00000000000000001"), 400, "INVALID_AMOUNT");
    expect((await balancesOf(apiKey(key), wallet.wallet_id)).btc?.balance).toBe(ZERO);
    expect((await raw("2.000000000000000000")).status).toBe(201);
    expect((await balancesOf(apiKey(key), wallet.wallet_id)).btc?.balance).toBe("2.00000000");
  });

  it("answers 400 INVALID_CURRENCY for an unknown currency", async () => {
    const { key, userId } = await scene("deposit-currency");
    const wallet = await newWallet(apiKey(key), userId, [BTC]);
    expectPlatformError(await sandboxDeposit(apiKey(key), { wallet_id: wallet.wallet_id, network: BTC.name, currency: "doge", amount: 1 }), 400, "INVALID_CURRENCY");
  });

  it("answers 422 for a body without amount or wallet_id", async () => {
    const { key, userId } = await scene("deposit-422");
    const wallet = await newWallet(apiKey(key), userId, [BTC]);
    expectPlatformError(await sandboxDeposit(apiKey(key), { wallet_id: wallet.wallet_id, network: BTC.name, currency: "btc" }), 422, "UNPROCESSABLE_ENTITY");
    expectPlatformError(await sandboxDeposit(apiKey(key), { network: BTC.name, currency: "btc", amount: 1 }), 422, "UNPROCESSABLE_ENTITY");
  });

  it("answers 403 FORBIDDEN to a user token, even for its own wallet (owner key only)", async () => {
    const { key, userId, token } = await scene("deposit-token");
    const wallet = await newWallet(bearer(token), userId, [BTC]);
    expectPlatformError(await sandboxDeposit(bearer(token), { wallet_id: wallet.wallet_id, network: BTC.name, currency: "btc", amount: 1 }), 403, "FORBIDDEN");
    expect((await balancesOf(apiKey(key), wallet.wallet_id)).btc?.balance).toBe(ZERO);
  });
});

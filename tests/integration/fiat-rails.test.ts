/**
 * usd and eur held on their bank rails, over HTTP on a real PostgreSQL (docs/decisions/fiat.md
 * "Rails and virtual accounts"): a wallet on `networks/sepa` and `networks/ach` gets a virtual
 * account on each — a valid IBAN, a valid ABA routing number and account number — unique to the
 * wallet and the same on every read; the sandbox deposit helper credits them as incoming bank
 * transfers, with the rail's reference as the hash and at most 2 decimals.
 */
import { validate as isValidAbaRouting } from "abavalidator";
import { isSEPACountry, isValidIBAN } from "ibantools";
import { describe, expect, it } from "vitest";
import { expectPlatformError } from "../support/fixtures.js";
import {
  apiKey, asListed, bearer, BTC, EUR_SEPA, HASH_FORMAT, type TransactionRecord, USD_ACH, useWalletsScene, type WalletRecord, ZERO,
} from "../support/wallets-scene.js";

const wallets = useWalletsScene();
const { scene, newWallet, listWallets, sandboxDeposit, deposited, balancesOf, listTransactions } = wallets;

/** The wallet's deposit address on `network`. */
function addressOn(wallet: WalletRecord, network: string): string {
  const found = wallet.addresses.find((a) => a.network === network);
  expect(found, `${wallet.wallet_id} on ${network}`).toBeDefined();
  return (found as { address: string }).address;
}

/** Asserts `address` is a valid `<routing>/<account>` ACH virtual account; returns both parts. */
function achParts(address: string): { routing: string; account: string } {
  expect(address).toMatch(/^\d{9}\/\d{10,17}$/);
  const [routing, account] = address.split("/") as [string, string];
  expect(isValidAbaRouting(routing), routing).toBe(true);
  return { routing, account };
}

describe("a wallet on the bank rails", () => {
  it("lists the rails like any network and gets a valid IBAN and a valid ACH routing/account pair", async () => {
    const { key, userId } = await scene("rails-create");
    const wallet = await newWallet(apiKey(key), userId, [EUR_SEPA, USD_ACH, BTC]);
    expect(wallet.networks).toEqual([EUR_SEPA, USD_ACH, BTC]);
    expect(wallet.addresses.map((a) => [a.network, a.currency])).toEqual([
      ["networks/sepa", "eur"],
      ["networks/ach", "usd"],
      ["networks/bitcoin", "btc"],
    ]);
    const iban = addressOn(wallet, "networks/sepa");
    expect(iban).toMatch(/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/); // electronic format: no spaces
    expect(isValidIBAN(iban), iban).toBe(true);
    expect(isSEPACountry(iban.slice(0, 2))).toBe(true);
    achParts(addressOn(wallet, "networks/ach"));
    expect(addressOn(wallet, "networks/bitcoin")).toMatch(/^tb1q/);
  });

  it("gives every wallet its own virtual accounts, also when created at once, and the same ones on every read", async () => {
    const a = await scene("rails-unique-a");
    const b = await scene("rails-unique-b");
    const created = await Promise.all([
      ...Array.from({ length: 4 }, () => newWallet(apiKey(a.key), a.userId, [EUR_SEPA, USD_ACH])),
      ...Array.from({ length: 3 }, () => newWallet(apiKey(b.key), b.userId, [EUR_SEPA, USD_ACH, BTC])),
    ]);
    created.push(await newWallet(apiKey(b.key), b.userId, [USD_ACH, EUR_SEPA]));
    const ibans = created.map((w) => addressOn(w, "networks/sepa"));
    const achs = created.map((w) => addressOn(w, "networks/ach"));
    for (const iban of ibans) expect(isValidIBAN(iban), iban).toBe(true);
    const accounts = achs.map((x) => achParts(x).account);
    expect(new Set(ibans).size).toBe(created.length);
    expect(new Set(accounts).size).toBe(created.length);

    for (const s of [a, b]) {
      const listed = await listWallets(bearer(s.token), s.userId);
      expect(listed.status, JSON.stringify(listed.body)).toBe(200);
      for (const w of listed.body.data as WalletRecord[]) {
        const first = created.find((c) => c.wallet_id === w.wallet_id) as WalletRecord;
        expect(w.addresses).toEqual(first.addresses);
      }
    }
  });
});

describe("sandbox deposits on the rails", () => {
  it.each([
    [EUR_SEPA, 250.75, 250.8, "EUR"],
    [USD_ACH, 1000, 1000.05, "USD"],
  ])("credit %j as a done incoming bank transfer with the rail's reference as hash", async (net, amount, total, symbol) => {
    const { key, userId, customerId } = await scene("rails-deposit");
    const wallet = await newWallet(apiKey(key), userId, [EUR_SEPA, USD_ACH]);
    const res = await sandboxDeposit(apiKey(key), { wallet_id: wallet.wallet_id, network: net.name, currency: net.currency, amount });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const tx = res.body.data as TransactionRecord;
    expect(tx.balance).toBe(amount);
    expect(tx.transaction).toMatchObject({
      action: "deposit",
      status: "done",
      currency: net.currency,
      symbol,
      amount,
      net_proceeds: amount,
      fees: 0,
      client_id: customerId,
    });
    expect(tx.transaction.hash).toMatch(HASH_FORMAT[net.name as "networks/sepa" | "networks/ach"]);

    const again = await deposited(key, wallet.wallet_id, net, 0.05);
    expect(again.balance).toBe(total);
    expect(again.transaction.hash).not.toBe(tx.transaction.hash);

    const balances = await balancesOf(apiKey(key), wallet.wallet_id);
    expect(balances[net.currency]).toMatchObject({ balance: total.toFixed(8), available: total.toFixed(8), held: ZERO });
    const other = net === EUR_SEPA ? "usd" : "eur";
    expect(balances[other]?.balance).toBe(ZERO);

    const list = await listTransactions(apiKey(key), wallet.wallet_id, { "filter[where][currency]": net.currency });
    expect(list.body.data).toEqual([again, asListed(tx)]);
  });

  it.each([EUR_SEPA, USD_ACH])("refuses 3 decimals on %j with 400 INVALID_AMOUNT and credits nothing", async (net) => {
    const { key, userId } = await scene("rails-decimals");
    const wallet = await newWallet(apiKey(key), userId, [net]);
    const res = await sandboxDeposit(apiKey(key), { wallet_id: wallet.wallet_id, network: net.name, currency: net.currency, amount: 10.125 });
    expectPlatformError(res, 400, "INVALID_AMOUNT");
    expect(res.body.errors[0].field).toBe("amount");
    expect((await balancesOf(apiKey(key), wallet.wallet_id))[net.currency]?.balance).toBe(ZERO);
    expect((await deposited(key, wallet.wallet_id, net, 10.12)).transaction.amount).toBe(10.12);
  });

  it("answers 404 ADDRESS_NOT_FOUND for a rail the wallet does not hold, or the other fiat currency on a rail", async () => {
    const { key, userId } = await scene("rails-missing");
    const wallet = await newWallet(apiKey(key), userId, [BTC, EUR_SEPA]);
    const deposit = (body: Record<string, unknown>) => sandboxDeposit(apiKey(key), { wallet_id: wallet.wallet_id, amount: 20, ...body });
    expectPlatformError(await deposit({ network: "networks/ach", currency: "usd" }), 404, "ADDRESS_NOT_FOUND");
    expectPlatformError(await deposit({ network: "networks/sepa", currency: "usd" }), 404, "ADDRESS_NOT_FOUND");
    expectPlatformError(await deposit({ network: "networks/sepa", currency: "btc" }), 404, "ADDRESS_NOT_FOUND");
    const balances = await balancesOf(apiKey(key), wallet.wallet_id);
    expect(balances.eur?.balance).toBe(ZERO);
  });
});

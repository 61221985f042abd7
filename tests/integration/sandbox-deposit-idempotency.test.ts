/**
 * The `Idempotency-Key` of Create Sandbox Deposit (docs/idempotency.md "The rules";
 * spec/platform/sandbox.tsp): the same key and body credit once and answer the first deposit
 * (`is_duplicate: true`), another body answers 409 `IDEMPOTENCY_KEY_REUSED` and credits nothing,
 * concurrent twins credit once, a refused request leaves its key free, and keys are the caller's.
 */
import { describe, expect, it } from "vitest";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import { apiKey, BTC, useWalletsScene, type TransactionRecord } from "../support/wallets-scene.js";

const wallets = useWalletsScene();
const { api, scene, newWallet, balancesOf, listTransactions } = wallets;

/** Create Sandbox Deposit with `key` as `Idempotency-Key` (none when undefined). */
function deposit(ownerKey: string, body: Record<string, unknown>, key?: string) {
  const req = api().post(`${BASE}/sandbox/deposits`).set("x-api-key", ownerKey);
  return (key === undefined ? req : req.set("Idempotency-Key", key)).send(body);
}

type Deposited = TransactionRecord & { idempotency_key: string; is_duplicate: boolean };

describe("Create Sandbox Deposit with an Idempotency-Key", () => {
  it("credits once for the same key and body, answers the first deposit again, and 409 for another body", async () => {
    const { key, userId } = await scene("dep-idem");
    const wallet = await newWallet(apiKey(key), userId, [BTC]);
    const body = { wallet_id: wallet.wallet_id, network: BTC.name, currency: BTC.currency, amount: 1.25 };

    const first = await deposit(key, body, "dep-1");
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const made = first.body.data as Deposited;
    expect(made).toMatchObject({ idempotency_key: "dep-1", is_duplicate: false });
    expect(made.transaction.idempotency_id).toBe("dep-1");

    const again = await deposit(key, { ...body, wallet_id: wallet.wallet_id.toUpperCase() }, "dep-1");
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.data).toEqual({ ...made, is_duplicate: true });

    expectPlatformError(await deposit(key, { ...body, amount: 2 }, "dep-1"), 409, "IDEMPOTENCY_KEY_REUSED");
    expect((await balancesOf(apiKey(key), wallet.wallet_id)).btc?.available).toBe("1.25000000");
    const listed = await listTransactions(apiKey(key), wallet.wallet_id);
    expect((listed.body.data as TransactionRecord[]).filter((t) => t.transaction.action === "deposit")).toHaveLength(1);
  });

  it("credits once when identical requests arrive together", async () => {
    const { key, userId } = await scene("dep-race");
    const wallet = await newWallet(apiKey(key), userId, [BTC]);
    const body = { wallet_id: wallet.wallet_id, network: BTC.name, currency: BTC.currency, amount: 0.5 };
    const answers = await Promise.all(Array.from({ length: 5 }, () => deposit(key, body, "same-key")));
    for (const res of answers) expect(res.status, JSON.stringify(res.body)).toBe(201);
    const ids = new Set(answers.map((r) => (r.body.data as Deposited).id));
    expect(ids.size).toBe(1);
    expect(answers.filter((r) => (r.body.data as Deposited).is_duplicate === false)).toHaveLength(1);
    expect((await balancesOf(apiKey(key), wallet.wallet_id)).btc?.available).toBe("0.50000000");
  });

  it("generates a key when none is sent, and a refused request leaves its key free", async () => {
    const { key, userId } = await scene("dep-free");
    const wallet = await newWallet(apiKey(key), userId, [BTC]);
    const body = { wallet_id: wallet.wallet_id, network: BTC.name, currency: BTC.currency, amount: 1 };

    const [a, b] = [await deposit(key, body), await deposit(key, body)];
    expect([a.status, b.status]).toEqual([201, 201]);
    expect((a.body.data as Deposited).idempotency_key).toMatch(/^[0-9a-f-]{36}$/);
    expect((a.body.data as Deposited).idempotency_key).not.toBe((b.body.data as Deposited).idempotency_key);

    expectPlatformError(await deposit(key, { ...body, amount: 0 }, "free-key"), 400, "AMOUNT_MUST_BE_POSITIVE");
    const later = await deposit(key, body, "free-key");
    expect(later.status, JSON.stringify(later.body)).toBe(201);
    expect((later.body.data as Deposited).is_duplicate).toBe(false);
    expect((await balancesOf(apiKey(key), wallet.wallet_id)).btc?.available).toBe("3.00000000");
  });

  it("keeps each owner key's keys apart", async () => {
    const one = await scene("dep-owner-a");
    const other = await scene("dep-owner-b");
    const w1 = await newWallet(apiKey(one.key), one.userId, [BTC]);
    const w2 = await newWallet(apiKey(other.key), other.userId, [BTC]);
    const r1 = await deposit(one.key, { wallet_id: w1.wallet_id, network: BTC.name, currency: "btc", amount: 1 }, "shared");
    const r2 = await deposit(other.key, { wallet_id: w2.wallet_id, network: BTC.name, currency: "btc", amount: 2 }, "shared");
    expect([r1.status, r2.status]).toEqual([201, 201]);
    expect((r2.body.data as Deposited).is_duplicate).toBe(false);
  });

  it("refuses a key longer than 255 characters with 422", async () => {
    const { key, userId } = await scene("dep-long");
    const wallet = await newWallet(apiKey(key), userId, [BTC]);
    const res = await deposit(key, { wallet_id: wallet.wallet_id, network: BTC.name, currency: "btc", amount: 1 }, "k".repeat(256));
    expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
  });
});

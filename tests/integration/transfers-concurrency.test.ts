/**
 * Create Transfer under repeats and load, over HTTP on a real PostgreSQL
 * (docs/decisions/limits-and-allowlist.md "Transfers" and "Limits"; docs/idempotency.md): the
 * Idempotency-Key (repeat, reuse, concurrent twins, a refused first request), parallel transfers
 * out of one wallet past its balance, crossing transfers, and the sender's transfer caps (in the
 * check order, with their messages, and under concurrency). The app runs with small transfer caps.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { money } from "../../src/domain/money.js";
import { windowsAt } from "../../src/domain/limits.js";
import { transferUsage } from "../../src/modules/transfers/repository.js";
import { useTestApp } from "../support/app.js";
import { BASE, expectPlatformError, Walk } from "../support/fixtures.js";

/** btc: 1 per transfer, 1.5 a day, 5 a month; eth: the month's cap below the day's. */
const CAPS = {
  btc: { perTransaction: "1", daily: "1.5", monthly: "5" },
  eth: { perTransaction: "1", daily: "5", monthly: "1.5" },
};
const t = useTestApp({ TRANSFER_CAPS: JSON.stringify(CAPS) });
const CLEAN = { unbalancedEntries: [], cacheMismatches: [], negativeAccounts: [], unbalancedCurrencies: [] };

type Net = { name: string; currency: string };
const BTC: Net = { name: "networks/bitcoin", currency: "btc" };
const ETH: Net = { name: "networks/ethereum", currency: "eth" };
const USDT: Net = { name: "networks/ethereum", currency: "usdt" };

let walk: Walk;
let seq = 0;
beforeAll(() => {
  walk = new Walk(t.express);
});

/** A fresh tenant with one active user per name, each with one wallet holding btc, eth and usdt. */
async function tenant(names: string[]): Promise<{ key: string; users: Record<string, { userId: string; token: string; walletId: string }> }> {
  const { key } = await walk.tenant(`trc-${++seq}`);
  const users: Record<string, { userId: string; token: string; walletId: string }> = {};
  for (const name of names) {
    const u = await walk.activeUserWithToken(key);
    const res = await t.api().post(`${BASE}/users/${u.userId}/wallets`).set("x-api-key", key).send({ name: `${name} ${++seq}`, networks: [BTC, ETH, USDT] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    users[name] = { ...u, walletId: res.body.data.wallet_id as string };
  }
  return { key, users };
}

async function deposit(key: string, walletId: string, net: Net, amount: number): Promise<void> {
  const res = await t.api().post(`${BASE}/sandbox/deposits`).set("x-api-key", key).send({ wallet_id: walletId, network: net.name, currency: net.currency, amount });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

function transfer(key: string, body: Record<string, unknown>, idempotencyKey?: string) {
  const r = t.api().post(`${BASE}/transfers`).set("x-api-key", key);
  return (idempotencyKey === undefined ? r : r.set("Idempotency-Key", idempotencyKey)).send(body);
}

async function available(key: string, walletId: string, currency: string): Promise<string> {
  const res = await t.api().get(`${BASE}/wallets/${walletId}/balance`).set("x-api-key", key);
  return (res.body.data.balance as { currency: string; available: string }[]).find((b) => b.currency === currency)?.available ?? "none";
}

async function sql<T>(text: string, params: unknown[] = []): Promise<T[]> {
  return t.orm.em.fork().execute<T[]>(text, params);
}

const verify = () => t.services.ledger.verify(t.db);

describe("Idempotency-Key", () => {
  it("a repeat with the same body answers the first transfer, is_duplicate true, booked once; another body is 409", async () => {
    const { key, users } = await tenant(["a", "b"]);
    await deposit(key, users.a!.walletId, USDT, 10);
    const body = { from_wallet_id: users.a!.walletId, to_wallet_id: users.b!.walletId, currency: "usdt", amount: 1, memo: "rent" };
    const first = await transfer(key, body, "k-1");
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.data).toMatchObject({ idempotency_key: "k-1", is_duplicate: false });
    // the same request: amount written differently, ids in upper case
    const again = await transfer(key, { ...body, amount: 1.0, from_wallet_id: users.a!.walletId.toUpperCase() }, "k-1");
    expect(again.status).toBe(201);
    expect(again.body.data).toEqual({ ...first.body.data, is_duplicate: true });
    expect(await available(key, users.a!.walletId, "usdt")).toBe("9.00000000");

    for (const change of [{ amount: 2 }, { memo: "other" }, { to_wallet_id: users.a!.walletId }, { currency: "btc" }]) {
      const reuse = await transfer(key, { ...body, ...change }, "k-1");
      expectPlatformError(reuse, 409, "IDEMPOTENCY_KEY_REUSED");
    }
    // a repeat after the balance was spent still answers the first transfer
    expect((await transfer(key, { ...body, amount: 9 })).status).toBe(201);
    expect((await transfer(key, body, "k-1")).body.data.is_duplicate).toBe(true);
    // a user token other than the sender's gets the 403 a new request would get
    const repeatByB = await t.api().post(`${BASE}/transfers`).set("Authorization", `Bearer ${users.b!.token}`).set("Idempotency-Key", "k-1").send(body);
    expectPlatformError(repeatByB, 403, "FORBIDDEN");
    // keys are per caller (docs/idempotency.md "Whose key it is"): the sender's own token is another
    // caller than the owner key, so its k-1 is a new request, refused on the balance the first spent
    const repeatByA = await t.api().post(`${BASE}/transfers`).set("Authorization", `Bearer ${users.a!.token}`).set("Idempotency-Key", "k-1").send(body);
    expectPlatformError(repeatByA, 400, "INSUFFICIENT_BALANCE");
    expect(await sql(`select count(*)::int as n from transfer where idempotency_key = 'k-1'`)).toEqual([{ n: 1 }]);
  });

  it("a refused first request does not use its key up; keys are per customer", async () => {
    const { key, users } = await tenant(["a", "b"]);
    const body = { from_wallet_id: users.a!.walletId, to_wallet_id: users.b!.walletId, currency: "usdt", amount: 3 };
    expectPlatformError(await transfer(key, body, "k-2"), 400, "INSUFFICIENT_BALANCE");
    await deposit(key, users.a!.walletId, USDT, 5);
    const res = await transfer(key, body, "k-2");
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.is_duplicate).toBe(false);
    // the same key in another tenant is another key
    const other = await tenant(["a", "b"]);
    await deposit(other.key, other.users.a!.walletId, USDT, 5);
    const elsewhere = await transfer(other.key, { ...body, from_wallet_id: other.users.a!.walletId, to_wallet_id: other.users.b!.walletId }, "k-2");
    expect(elsewhere.status).toBe(201);
    expect(elsewhere.body.data.is_duplicate).toBe(false);
  });

  it("10 identical concurrent requests make one transfer; every answer is that transfer", async () => {
    const { key, users } = await tenant(["a", "b"]);
    await deposit(key, users.a!.walletId, USDT, 10);
    const body = { from_wallet_id: users.a!.walletId, to_wallet_id: users.b!.walletId, currency: "usdt", amount: 4 };
    const answers = await Promise.all(Array.from({ length: 10 }, () => transfer(key, body, "k-burst")));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(answers.map((r) => r.body.data.transfer_id)).size).toBe(1);
    expect(answers.filter((r) => r.body.data.is_duplicate === false)).toHaveLength(1);
    expect(await available(key, users.a!.walletId, "usdt")).toBe("6.00000000");
    expect(await available(key, users.b!.walletId, "usdt")).toBe("4.00000000");
    const id = answers[0]!.body.data.transfer_id as string;
    expect(await sql(`select count(*)::int as n from journal_entry where reference = ?`, [`transfer:${id}`])).toEqual([{ n: 1 }]);
    expect(await sql(`select action from wallet_transaction where order_id = ? order by action`, [id])).toEqual([{ action: "transfer_in" }, { action: "transfer_out" }]);
  });
});

describe("concurrency", () => {
  it("20 parallel transfers out of one wallet past its balance: exactly the affordable ones pass, never below zero", async () => {
    const { key, users } = await tenant(["a", "b", "c"]);
    await deposit(key, users.a!.walletId, USDT, 10.5);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => transfer(key, { from_wallet_id: users.a!.walletId, to_wallet_id: users[i % 2 ? "b" : "c"]!.walletId, currency: "usdt", amount: 1 })),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    for (const refused of answers.filter((r) => r.status !== 201)) expectPlatformError(refused, 400, "INSUFFICIENT_BALANCE");
    expect(await available(key, users.a!.walletId, "usdt")).toBe("0.50000000");
    const received = money(await available(key, users.b!.walletId, "usdt")).plus(await available(key, users.c!.walletId, "usdt"));
    expect(received.toFixed(8)).toBe("10.00000000");
    // each accepted transfer's transfer_out saw its own balance: ten distinct values from 9.5 down to 0.5
    const after = await sql<{ balance_after: string }>(`select balance_after::text from wallet_transaction where wallet_id = ? and action = 'transfer_out' order by balance_after desc`, [users.a!.walletId]);
    expect(after.map((r) => money(r.balance_after).toFixed(1))).toEqual(["9.5", "8.5", "7.5", "6.5", "5.5", "4.5", "3.5", "2.5", "1.5", "0.5"]);
    expect(await verify()).toEqual(CLEAN);
  });

  it("crossing transfers between two wallets all complete (no deadlock) and keep the total", async () => {
    const { key, users } = await tenant(["a", "b"]);
    await deposit(key, users.a!.walletId, USDT, 50);
    await deposit(key, users.b!.walletId, USDT, 50);
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => {
        const [from, to] = i % 2 ? [users.a!, users.b!] : [users.b!, users.a!];
        return transfer(key, { from_wallet_id: from.walletId, to_wallet_id: to.walletId, currency: "usdt", amount: 2 });
      }),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(16).fill(201));
    expect([await available(key, users.a!.walletId, "usdt"), await available(key, users.b!.walletId, "usdt")]).toEqual(["50.00000000", "50.00000000"]);
    expect(await verify()).toEqual(CLEAN);
  });
});

describe("transfer caps (the sender's, checked after the amount and before the balance)", () => {
  it("answers TRANSFER_LIMIT_EXCEEDED, DAILY_LIMIT_EXCEEDED and MONTHLY_LIMIT_EXCEEDED with the cap, the use and the remainder", async () => {
    const { key, users } = await tenant(["a", "b"]);
    const btc = { from_wallet_id: users.a!.walletId, to_wallet_id: users.b!.walletId, currency: "btc" };
    // over the per-transfer cap with an empty wallet: the cap is checked before the balance…
    const over = await transfer(key, { ...btc, amount: 1.5 });
    expectPlatformError(over, 400, "TRANSFER_LIMIT_EXCEEDED");
    expect(over.body.errors[0].message).toBe("Per-transaction transfer limit for btc is 1.00000000; this transfer of 1.50000000 is over it by 0.50000000.");
    // …and after the amount's own checks
    expectPlatformError(await transfer(key, { ...btc, amount: 1.000000001 }), 400, "INVALID_AMOUNT");
    expectPlatformError(await transfer(key, { ...btc, amount: 0.9 }), 400, "INSUFFICIENT_BALANCE");

    await deposit(key, users.a!.walletId, BTC, 3);
    await deposit(key, users.a!.walletId, ETH, 3);
    expect((await transfer(key, { ...btc, amount: 1 })).status).toBe(201);
    expect((await transfer(key, { ...btc, amount: 0.5 })).status).toBe(201);
    const daily = await transfer(key, { ...btc, amount: 0.000001 });
    expectPlatformError(daily, 400, "DAILY_LIMIT_EXCEEDED");
    const tomorrow = windowsAt(new Date()).dayEnd.toISOString().replace(/\.\d{3}Z$/, "Z");
    expect(daily.body.errors[0].message).toBe(`Daily transfer limit for btc is 1.50000000; 1.50000000 used today; 0.00000000 remains until ${tomorrow}.`);

    const eth = { ...btc, currency: "eth" };
    expect((await transfer(key, { ...eth, amount: 1 })).status).toBe(201);
    const monthly = await transfer(key, { ...eth, amount: 0.6 });
    expectPlatformError(monthly, 400, "MONTHLY_LIMIT_EXCEEDED");
    expect(monthly.body.errors[0].message).toContain("Monthly transfer limit for eth is 1.50000000; 1.00000000 used this month; 0.50000000 remains until");

    // received transfers do not count for the receiver; usdt has no small caps
    await deposit(key, users.b!.walletId, BTC, 1);
    expect((await transfer(key, { from_wallet_id: users.b!.walletId, to_wallet_id: users.a!.walletId, currency: "btc", amount: 1 })).status).toBe(201);
    expect(await available(key, users.a!.walletId, "btc")).toBe("2.50000000");
  });

  it("concurrent transfers of one user never pass the daily cap together", async () => {
    const { key, users } = await tenant(["a", "b"]);
    await deposit(key, users.a!.walletId, BTC, 5);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => transfer(key, { from_wallet_id: users.a!.walletId, to_wallet_id: users.b!.walletId, currency: "btc", amount: 0.5 })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(3);
    for (const refused of answers.filter((r) => r.status !== 201)) expectPlatformError(refused, 400, "DAILY_LIMIT_EXCEEDED");
    expect(await available(key, users.a!.walletId, "btc")).toBe("3.50000000");
  });

  it("transferUsage sums the user's sent transfers of the currency since each window start", async () => {
    const { key, users } = await tenant(["a", "b"]);
    await deposit(key, users.a!.walletId, USDT, 10);
    await deposit(key, users.b!.walletId, USDT, 10);
    for (const amount of [1.25, 2]) expect((await transfer(key, { from_wallet_id: users.a!.walletId, to_wallet_id: users.b!.walletId, currency: "usdt", amount })).status).toBe(201);
    expect((await transfer(key, { from_wallet_id: users.b!.walletId, to_wallet_id: users.a!.walletId, currency: "usdt", amount: 4 })).status).toBe(201);
    const now = new Date();
    // one of A's transfers moved to the first instant of the month (still this month, not today unless today is the 1st)
    const windows = windowsAt(now);
    await sql(`update transfer set created_at = ? where from_user_id = ? and amount = 2`, [windows.monthStart, users.a!.userId]);
    const usage = await transferUsage(t.db, users.a!.userId, "usdt", windows);
    const today = windows.dayStart.getTime() === windows.monthStart.getTime() ? "3.25" : "1.25";
    expect([money(usage.today).toFixed(), money(usage.month).toFixed()]).toEqual([today, "3.25"]);
    const none = await transferUsage(t.db, users.a!.userId, "btc", windows);
    expect(none).toEqual({ today: "0", month: "0" });
  });
});

/**
 * Fiat withdrawals over HTTP on a real PostgreSQL (docs/decisions/fiat.md "Fiat withdrawals";
 * spec/platform/withdrawals.tsp `FiatWithdrawals`): the happy path on eur (`networks/sepa`) and usd
 * (`networks/ach`) from initiate to a settled payout, the initiate's refusals in their order, the
 * sandbox rail's refusal at confirm (`13.13`: nothing debited, the code still good) and its
 * returned payout (`66.66`: FAILED, the amount back, `withdrawal.failed` delivered), each path's
 * own records, parallel initiates over a short balance, settlement rounds racing on one returned
 * payout, and a return racing transfers out of the same wallet. Every response is validated against the contract; the whole ledger is checked after
 * the file (useWithdrawalsApp's hook and the tests' own checks).
 */
import type request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { BASE, expectPlatformError } from "../support/fixtures.js";
import { waitFor } from "../support/wait.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";
import { Api, apiKey, bearer, BTC, CLEAN, codeIn, TO, UUID, type Cred, type Net, type Scene } from "../support/withdrawals-scene.js";

const EUR: Net = { name: "networks/sepa", currency: "eur" };
const USD: Net = { name: "networks/ach", currency: "usd" };
/** The eur caps of this file's app: the bank account is checked before them. */
const CAPS = { eur: { perTransaction: "1000", daily: "100000", monthly: "1000000" } };

const t = useTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: "true", OUTBOX_INTERVAL_S: "1", PAYOUT_INTERVAL_S: "1", WITHDRAWAL_CAPS: JSON.stringify(CAPS) });
const api = () => new Api(t);

/** Published example numbers of the schemes. */
const IBAN_DE = "DE89370400440532013000";
const IBAN_FR = "FR1420041010050500013M02606";
const ROUTING = "021000021";
const ACCOUNT = "000123456789";
const ACCOUNTS = {
  eur: { currency: "eur", holder_name: "Jane Doe", iban: IBAN_DE },
  usd: { currency: "usd", holder_name: "John Smith", routing_number: ROUTING, account_number: ACCOUNT },
} as const;

type Payout = { rail: string; reference: string; state: string };
type FiatRecord = { id: string; withdrawal_type: string; bank_account_id: string | null; payout: Payout | null; currency: string; amount: number; address: string; status: string };

let receiver: Receiver;
let operator: string;
beforeAll(async () => {
  receiver = await startReceiver();
  operator = await api().walk.operatorToken();
});
afterAll(async () => {
  await receiver.close();
  expect(await t.services.ledger.verify(t.db)).toEqual(CLEAN);
});

const fiatBase = (userId: string) => `${BASE}/users/${userId}/accounts/fiat/withdrawals`;
const initiate = (cred: Cred, userId: string, body: Record<string, unknown>) => cred(api().http().post(fiatBase(userId))).send(body);
const confirm = (cred: Cred, userId: string, id: string, code: string) => cred(api().http().post(`${fiatBase(userId)}/${id}/confirm`)).send({ code });
const getFiat = (cred: Cred, userId: string, id: string) => cred(api().http().get(`${fiatBase(userId)}/${id}`));
const listFiat = (cred: Cred, userId: string, query: Record<string, string | number> = {}) => cred(api().http().get(fiatBase(userId))).query(query);

/** Adds a bank account (asserting 201); returns its id. */
async function addAccount(cred: Cred, userId: string, body: Record<string, unknown>): Promise<string> {
  const res = await cred(api().http().post(`${BASE}/users/${userId}/bank-accounts`)).send(body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.bank_account_id as string;
}

/** A scene holding `amount` of `net` with one bank account of its currency. */
async function fiatScene(prefix: string, net: Net, amount: number): Promise<Scene & { accountId: string }> {
  const s = await api().scene(prefix, [net], [[net, amount]]);
  const accountId = await addAccount(apiKey(s.key), s.userId, ACCOUNTS[net.currency as "eur" | "usd"]);
  return { ...s, accountId };
}

/** Initiates a fiat withdrawal (asserting 201) and reads its code from the sandbox outbox. */
async function started(s: Scene, body: Record<string, unknown>): Promise<{ id: string; code: string; data: FiatRecord }> {
  const res = await initiate(apiKey(s.key), s.userId, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const id = res.body.data.id as string;
  const mails = await api().mailsOf(s, id);
  expect(mails).toHaveLength(1);
  return { id, code: codeIn(mails[0]!, id), data: res.body.data as FiatRecord };
}

/** The fiat withdrawal as Get Fiat Withdrawal shows it (asserting 200). */
async function record(s: Scene, id: string): Promise<FiatRecord> {
  const res = await getFiat(apiKey(s.key), s.userId, id);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as FiatRecord;
}

/** Waits until the withdrawal's payout is in `state` (the settlement job runs every second). */
function payoutIn(s: Scene, id: string, state: string): Promise<FiatRecord> {
  return waitFor(`payout ${state}`, async () => {
    const r = await record(s, id);
    return r.payout?.state === state ? r : undefined;
  }, 15_000);
}

async function refused(pending: PromiseLike<request.Response>, status: number, code: string): Promise<void> {
  expectPlatformError(await pending, status, code);
}

describe("the happy path", () => {
  it.each([
    ["eur", EUR, "networks/sepa", /^SEPA-[0-9A-F]{10}$/, "****3000"],
    ["usd", USD, "networks/ach", /^ACH-[0-9A-F]{10}$/, "****6789"],
  ] as const)("%s: initiate → code email → confirm → payout submitted, then settled", async (currency, net, rail, reference, mask) => {
    const a = api();
    const s = await fiatScene(`fiat-ok-${currency}`, net, 500);
    const { id, code, data } = await started(s, { currency: currency.toUpperCase(), amount: 250.5, bank_account_id: s.accountId, memo: "Invoice 1" });
    expect(data).toMatchObject({ id, withdrawal_type: "fiat", bank_account_id: s.accountId, payout: null, currency, amount: 250.5, address: mask });
    expect((await a.balances(apiKey(s.key), s.walletId))[currency]).toMatchObject({ available: "249.50000000", held: "250.50000000" });

    const confirmed = await confirm(bearer(s.token), s.userId, id, code);
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    expect(confirmed.body.data).toEqual({ id, status: "COMPLETED" });
    const after = await record(s, id);
    expect(after.status).toBe("COMPLETED");
    expect(after.payout?.rail).toBe(rail);
    expect(after.payout?.reference).toMatch(reference);
    expect(["submitted", "settled"]).toContain(after.payout?.state);
    expect((await a.balances(apiKey(s.key), s.walletId))[currency]).toMatchObject({ balance: "249.50000000", available: "249.50000000", held: "0.00000000" });

    const settled = await payoutIn(s, id, "settled");
    expect(settled).toMatchObject({ status: "COMPLETED", payout: { rail, reference: after.payout?.reference, state: "settled" } });
    const transactions = await a.transactions(apiKey(s.key), s.walletId);
    const out = transactions.filter((x) => x.transaction.action === "withdrawal");
    expect(out).toHaveLength(1);
    expect(out[0]!.transaction).toMatchObject({ status: "done", hash: after.payout?.reference, amount: 250.5 });
    await confirm(apiKey(s.key), s.userId, id, code).then((res) => expectPlatformError(res, 400, "ALREADY_CONFIRMED"));
  });
});

describe("initiate's refusals, in their order", () => {
  let s: Scene & { accountId: string };
  let usdAccount: string;
  let deletedAccount: string;
  let othersAccount: string;
  beforeAll(async () => {
    const a = api();
    s = await fiatScene("fiat-refusals", EUR, 2000);
    usdAccount = await addAccount(apiKey(s.key), s.userId, ACCOUNTS.usd);
    deletedAccount = await addAccount(apiKey(s.key), s.userId, { ...ACCOUNTS.eur, iban: IBAN_FR });
    const deleted = await a.http().delete(`${BASE}/users/${s.userId}/bank-accounts/${deletedAccount}`).set("x-api-key", s.key);
    expect(deleted.status).toBe(204);
    const other = await a.user(s.key);
    othersAccount = await addAccount(apiKey(s.key), other.userId, ACCOUNTS.eur);
  });

  it.each([
    ["a crypto currency on the fiat path", { currency: "btc", amount: 20 }, "INVALID_CURRENCY"],
    ["an unknown currency", { currency: "xyz", amount: 20 }, "INVALID_CURRENCY"],
    ["the currency before the amount and the account", { currency: "btc", amount: -1, bank_account_id: "nope" }, "INVALID_CURRENCY"],
    ["a zero amount", { currency: "eur", amount: 0 }, "AMOUNT_MUST_BE_POSITIVE"],
    ["the amount before the account", { currency: "eur", amount: -5 }, "AMOUNT_MUST_BE_POSITIVE"],
    ["below the minimum", { currency: "eur", amount: 9.99 }, "MINIMUM_AMOUNT_NOT_MET"],
    ["the minimum before the decimals", { currency: "eur", amount: 9.991 }, "MINIMUM_AMOUNT_NOT_MET"],
    ["3 decimals", { currency: "eur", amount: 10.001 }, "INVALID_AMOUNT"],
    ["no bank_account_id", { currency: "eur", amount: 20 }, "BANK_ACCOUNT_REQUIRED"],
    ["an empty bank_account_id", { currency: "eur", amount: 20, bank_account_id: "" }, "BANK_ACCOUNT_REQUIRED"],
  ])("%s → 400 %s", async (_, body, code) => {
    await refused(initiate(apiKey(s.key), s.userId, body), 400, code);
  });

  it.each([
    ["another user's account", () => othersAccount],
    ["a deleted account", () => deletedAccount],
    ["an account in another currency", () => usdAccount],
    ["an id that is no account", () => "0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e"],
  ])("%s → 400 INVALID_BANK_ACCOUNT, before the caps and the balance", async (_, account) => {
    await refused(initiate(apiKey(s.key), s.userId, { currency: "eur", amount: 1000.01, bank_account_id: account() }), 400, "INVALID_BANK_ACCOUNT");
    await refused(initiate(apiKey(s.key), s.userId, { currency: "eur", amount: 900, bank_account_id: account(), wallet_id: s.walletId }), 400, "INVALID_BANK_ACCOUNT");
  });

  it("a user without bank accounts → BANK_ACCOUNT_REQUIRED, even naming an account", async () => {
    const a = api();
    const bare = await a.scene("fiat-bare", [EUR], [[EUR, 100]]);
    await refused(initiate(apiKey(bare.key), bare.userId, { currency: "eur", amount: 20 }), 400, "BANK_ACCOUNT_REQUIRED");
    await refused(initiate(apiKey(bare.key), bare.userId, { currency: "eur", amount: 20, bank_account_id: othersAccount }), 400, "BANK_ACCOUNT_REQUIRED");
  });

  it("then the caps, then the balance; nothing was held by any refusal", async () => {
    await refused(initiate(apiKey(s.key), s.userId, { currency: "eur", amount: 1000.01, bank_account_id: s.accountId }), 400, "WITHDRAWAL_LIMIT_EXCEEDED");
    const poor = await fiatScene("fiat-poor", EUR, 50);
    await refused(initiate(apiKey(poor.key), poor.userId, { currency: "eur", amount: 60, bank_account_id: poor.accountId }), 400, "INSUFFICIENT_BALANCE");
    expect((await api().balances(apiKey(s.key), s.walletId)).eur).toMatchObject({ available: "2000.00000000", held: "0.00000000" });
  });

  it("a fiat currency on the crypto path → 400 INVALID_CURRENCY", async () => {
    await refused(api().initiate(apiKey(s.key), s.userId, { currency: "eur", amount: 20, address: TO.btc }), 400, "INVALID_CURRENCY");
    await refused(api().initiate(apiKey(s.key), s.userId, { currency: "USD", amount: 20, address: TO.btc }), 400, "INVALID_CURRENCY");
  });
});

describe("the rail refuses at confirm (13.13)", () => {
  it("answers 400 FIAT_WITHDRAWAL_FAILED with nothing debited; the code is not used up, no attempt counted; cancel releases", async () => {
    const a = api();
    const s = await fiatScene("fiat-refused", EUR, 100);
    const { id, code } = await started(s, { currency: "eur", amount: 13.13, bank_account_id: s.accountId });
    for (let i = 0; i < 6; i += 1) await refused(confirm(apiKey(s.key), s.userId, id, code), 400, "FIAT_WITHDRAWAL_FAILED"); // more than the 5 attempts a code allows
    const after = await record(s, id);
    expect(after).toMatchObject({ status: "PENDING", payout: null });
    const [row] = await a.sql<{ code_attempts: number; code_failures_total: number; code_hash: string | null }>(
      "select code_attempts, code_failures_total, code_hash from withdrawal where id = ?",
      [id],
    );
    expect(row).toMatchObject({ code_attempts: 0, code_failures_total: 0 });
    expect(row?.code_hash).not.toBeNull();
    expect((await a.balances(apiKey(s.key), s.walletId)).eur).toMatchObject({ balance: "100.00000000", available: "86.87000000", held: "13.13000000" });
    expect((await a.transactions(apiKey(s.key), s.walletId)).filter((x) => x.transaction.action === "withdrawal")).toHaveLength(0);

    const cancelled = await a.http().delete(`${fiatBase(s.userId)}/${id}`).set("x-api-key", s.key);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(204);
    expect((await record(s, id)).status).toBe("CANCELLED");
    expect((await a.balances(apiKey(s.key), s.walletId)).eur).toMatchObject({ balance: "100.00000000", available: "100.00000000", held: "0.00000000" });
    await refused(confirm(apiKey(s.key), s.userId, id, code), 400, "BAD_REQUEST");
  });
});

describe("a payout returned after settlement (66.66)", () => {
  it("makes the withdrawal FAILED, gives the amount back with one withdrawal_reversal, and delivers withdrawal.failed", async () => {
    const a = api();
    const s = await fiatScene("fiat-returned", EUR, 100);
    const registered = await a.http().post(`${BASE}/customers/${s.customerId}/webhooks`).set("Authorization", `Bearer ${operator}`).send({ url: receiver.url });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    receiver.trust(registered.body.data.signing_secret as string);

    const { id, code } = await started(s, { currency: "eur", amount: 66.66, bank_account_id: s.accountId });
    const confirmed = await confirm(apiKey(s.key), s.userId, id, code);
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    expect((await a.balances(apiKey(s.key), s.walletId)).eur).toMatchObject({ balance: "33.34000000", available: "33.34000000" });
    const settled = await payoutIn(s, id, "settled");
    expect(settled.status).toBe("COMPLETED");

    const returned = await payoutIn(s, id, "returned");
    expect(returned).toMatchObject({ status: "FAILED", payout: { rail: "networks/sepa", reference: settled.payout?.reference, state: "returned" } });
    expect((await a.balances(apiKey(s.key), s.walletId)).eur).toMatchObject({ balance: "100.00000000", available: "100.00000000", held: "0.00000000" });
    const transactions = await a.transactions(apiKey(s.key), s.walletId);
    const reversals = transactions.filter((x) => x.transaction.action === "withdrawal_reversal");
    expect(reversals).toHaveLength(1);
    expect(reversals[0]!.transaction).toMatchObject({ status: "done", amount: 66.66, hash: settled.payout?.reference });

    const hook = await waitFor("withdrawal.failed", () => receiver.received.find((r) => r.json.type === "withdrawal.failed" && r.json.data.withdrawal_id === id), 10_000);
    expect(Object.values(hook.verifiedBy).some(Boolean)).toBe(true);
    expect(hook.json.data).toMatchObject({
      withdrawal_id: id,
      user_id: s.userId,
      customer_id: s.customerId,
      wallet_id: s.walletId,
      withdrawal_type: "fiat",
      currency: "eur",
      amount: "66.66000000",
      error_code: "FIAT_WITHDRAWAL_FAILED",
      payout: { rail: "networks/sepa", reference: settled.payout?.reference, state: "returned" },
    });

    const failed = await listFiat(apiKey(s.key), s.userId, { "filter[where][status]": "FAILED" });
    expect(failed.status, JSON.stringify(failed.body)).toBe(200);
    expect((failed.body.data as FiatRecord[]).map((w) => w.id)).toEqual([id]);
    await refused(a.http().delete(`${fiatBase(s.userId)}/${id}`).set("x-api-key", s.key), 400, "BAD_REQUEST");
    await refused(confirm(apiKey(s.key), s.userId, id, code), 400, "ALREADY_CONFIRMED");
    // the job keeps running: still exactly one reversal, one notification
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect((await a.transactions(apiKey(s.key), s.walletId)).filter((x) => x.transaction.action === "withdrawal_reversal")).toHaveLength(1);
    expect(receiver.received.filter((r) => r.json.type === "withdrawal.failed" && r.json.data.withdrawal_id === id)).toHaveLength(1);
  });
});

describe("each path its own withdrawals", () => {
  it("lists hold only their type; the other path's id is WITHDRAWAL_NOT_FOUND", async () => {
    const a = api();
    const s = await a.scene("fiat-paths", [BTC, EUR], [[BTC, 1], [EUR, 100]]);
    const accountId = await addAccount(apiKey(s.key), s.userId, ACCOUNTS.eur);
    const crypto = await a.started(s, { currency: "btc", amount: 0.01, address: TO.btc });
    const fiat = await started(s, { currency: "eur", amount: 20, bank_account_id: accountId });

    const cryptoList = await a.list(apiKey(s.key), s.userId);
    expect(cryptoList.status).toBe(200);
    expect(cryptoList.body.data).toHaveLength(1);
    expect(cryptoList.body.data[0]).toMatchObject({ id: crypto.id, withdrawal_type: "crypto", bank_account_id: null, payout: null });
    const fiatList = await listFiat(apiKey(s.key), s.userId);
    expect(fiatList.status).toBe(200);
    expect((fiatList.body.data as FiatRecord[]).map((w) => [w.id, w.withdrawal_type])).toEqual([[fiat.id, "fiat"]]);
    expect(fiatList.body.meta.pagination.records.total).toBe(1);
    expect(fiatList.body.meta.pagination.navigation.first).toContain("/accounts/fiat/withdrawals?");

    await refused(a.get(apiKey(s.key), s.userId, fiat.id), 404, "WITHDRAWAL_NOT_FOUND");
    await refused(a.confirm(apiKey(s.key), s.userId, fiat.id, fiat.code), 404, "WITHDRAWAL_NOT_FOUND");
    await refused(a.resend(apiKey(s.key), s.userId, fiat.id), 404, "WITHDRAWAL_NOT_FOUND");
    await refused(a.cancel(apiKey(s.key), s.userId, fiat.id), 404, "WITHDRAWAL_NOT_FOUND");
    await refused(getFiat(apiKey(s.key), s.userId, crypto.id), 404, "WITHDRAWAL_NOT_FOUND");
    await refused(confirm(apiKey(s.key), s.userId, crypto.id, crypto.code), 404, "WITHDRAWAL_NOT_FOUND");
    await refused(a.http().post(`${fiatBase(s.userId)}/${crypto.id}/verification/codes`).set("x-api-key", s.key), 404, "WITHDRAWAL_NOT_FOUND");
    await refused(a.http().delete(`${fiatBase(s.userId)}/${crypto.id}`).set("x-api-key", s.key), 404, "WITHDRAWAL_NOT_FOUND");
    // both still PENDING and confirmable on their own path
    expect((await a.confirm(apiKey(s.key), s.userId, crypto.id, crypto.code)).status).toBe(200);
    expect((await confirm(apiKey(s.key), s.userId, fiat.id, fiat.code)).status).toBe(200);
  });

  it("Resend Code issues a new fiat code that confirms", async () => {
    const a = api();
    const s = await fiatScene("fiat-resend", EUR, 100);
    const { id, code } = await started(s, { currency: "eur", amount: 20, bank_account_id: s.accountId });
    const resent = await a.http().post(`${fiatBase(s.userId)}/${id}/verification/codes`).set("x-api-key", s.key);
    expect(resent.status, JSON.stringify(resent.body)).toBe(200);
    const fresh = (await a.mailsOf(s, id)).map((m) => codeIn(m, id)).find((c) => c !== code);
    expect(fresh).toBeDefined();
    await refused(confirm(apiKey(s.key), s.userId, id, code), 400, "CONFIRMATION_CODE_INVALID");
    expect((await confirm(apiKey(s.key), s.userId, id, fresh!)).status).toBe(200);
  });
});

describe("concurrency", () => {
  it("20 parallel initiates over a balance that covers 9: never more held than available, the ledger clean", async () => {
    const a = api();
    const s = await fiatScene("fiat-parallel", EUR, 95);
    const results = await Promise.all(Array.from({ length: 20 }, () => initiate(apiKey(s.key), s.userId, { currency: "eur", amount: 10, bank_account_id: s.accountId })));
    const ok = results.filter((r) => r.status === 201);
    expect(ok).toHaveLength(9);
    for (const r of results.filter((x) => x.status !== 201)) expectPlatformError(r, 400, "INSUFFICIENT_BALANCE");
    expect(new Set(ok.map((r) => r.body.data.id as string)).size).toBe(9);
    for (const r of ok) expect(r.body.data.id).toMatch(UUID);
    expect((await a.balances(apiKey(s.key), s.walletId)).eur).toMatchObject({ balance: "95.00000000", available: "5.00000000", held: "90.00000000" });
    expect(await t.services.ledger.verify(t.db)).toEqual(CLEAN);
  });

  it("settlement rounds racing on one returned payout reverse it exactly once", async () => {
    const a = api();
    const s = await fiatScene("fiat-rounds", EUR, 100);
    const { id, code } = await started(s, { currency: "eur", amount: 66.66, bank_account_id: s.accountId });
    expect((await confirm(apiKey(s.key), s.userId, id, code)).status).toBe(200);
    // the app's own job runs every second; eight more rounds at a time race it until the return
    await waitFor("the payout returned", async () => {
      await Promise.all(Array.from({ length: 8 }, () => t.services.payouts.settleDue()));
      return (await record(s, id)).status === "FAILED" ? true : undefined;
    }, 15_000);
    expect((await a.transactions(apiKey(s.key), s.walletId)).filter((x) => x.transaction.action === "withdrawal_reversal")).toHaveLength(1);
    const entries = await a.sql<{ count: string }>("select count(*)::text as count from journal_entry where kind = 'withdrawal_reversal' and reference = ?", [`withdrawal:${id}`]);
    expect(entries[0]?.count).toBe("1");
    expect((await a.balances(apiKey(s.key), s.walletId)).eur).toMatchObject({ balance: "100.00000000", available: "100.00000000", held: "0.00000000" });
  });

  it("a payout returned while transfers spend from the same wallet: one reversal, the ledger balanced", async () => {
    const a = api();
    const s = await fiatScene("fiat-race", EUR, 100);
    const other = await a.wallet(apiKey(s.key), s.userId, [EUR]);
    const { id, code } = await started(s, { currency: "eur", amount: 66.66, bank_account_id: s.accountId });
    expect((await confirm(apiKey(s.key), s.userId, id, code)).status).toBe(200);
    let moved = 0;
    const deadline = Date.now() + 15_000;
    while ((await record(s, id)).status !== "FAILED") {
      expect(Date.now()).toBeLessThan(deadline);
      const sent = await Promise.all(
        Array.from({ length: 4 }, () => a.http().post(`${BASE}/transfers`).set("x-api-key", s.key).send({ from_wallet_id: s.walletId, to_wallet_id: other, currency: "eur", amount: 0.5 })),
      );
      for (const r of sent) {
        expect([201, 400], JSON.stringify(r.body)).toContain(r.status);
        if (r.status === 201) moved += 1;
      }
    }
    const balance = (100 - moved * 0.5).toFixed(8);
    expect((await a.balances(apiKey(s.key), s.walletId)).eur).toMatchObject({ balance, available: balance, held: "0.00000000" });
    expect((await a.balances(apiKey(s.key), other)).eur).toMatchObject({ balance: (moved * 0.5).toFixed(8) });
    expect((await a.transactions(apiKey(s.key), s.walletId, { "filter[limit]": "100" })).filter((x) => x.transaction.action === "withdrawal_reversal")).toHaveLength(1);
    expect(await t.services.ledger.verify(t.db)).toEqual(CLEAN);
  });
});

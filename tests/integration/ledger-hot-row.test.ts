/**
 * No shared hot row in a withdrawal or a deposit (docs/decisions/customers-users-and-wallets.md "The custody ledger"; docs/performance.md "What keeps the request path cheap"): every deposit and every
 * confirmed withdrawal posts to the external account of its network (`external:networks/bitcoin:btc`),
 * which used to be locked `FOR UPDATE` and rewritten by each of them, so all withdrawals of a
 * network were serialised on that row. External accounts are now append-only (their balance is
 * derived from their postings) and only the wallet accounts are locked.
 *
 * The proof, on the real app and PostgreSQL: a withdrawal confirm (or a deposit) whose transaction
 * is held open after its ledger posting, with every lock it takes, does not stop another wallet's
 * confirm or deposit on the same network from committing; the external row is not locked
 * exclusively meanwhile (`FOR NO KEY UPDATE NOWAIT` from a second connection gets it) and is never
 * rewritten; its balance, derived from the postings, mirrors the money in custody.
 */
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import request from "supertest";
import { beforeAll, describe, expect, it } from "vitest";
import { money } from "../../src/domain/money.js";
import type { PostRequest } from "../../src/modules/ledger/service.js";
import { TEST_SECRETS_KEY, useTestApp } from "../support/app.js";
import { BASE, Walk, fundedBtcUser, initiateBtcWithdrawal, type FundedUser } from "../support/fixtures.js";

const t = useTestApp();
let key: string;

beforeAll(async () => {
  ({ key } = await new Walk(t.express).tenant("hot-row"));
});

const EXTERNAL_BTC = "external:networks/bitcoin:btc";
const CLEAN = { unbalancedEntries: [], cacheMismatches: [], negativeAccounts: [], unbalancedCurrencies: [] };
/** How long the unblocked operation may take on a loaded 2-core machine (it takes ~50 ms alone). */
const UNBLOCKED_MS = 10_000;

/** The code of withdrawal `id`, read from the sandbox outbox. */
async function codeOf(user: FundedUser, id: string): Promise<string> {
  const res = await t.api().get(`${BASE}/sandbox/mail`).set("x-api-key", key).query({ to: user.email });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const text = (res.body.data as { text: string }[]).map((m) => m.text).find((m) => m.includes(id));
  const code = text?.match(/Confirmation code: (\d{6})/)?.[1];
  expect(code, text).toBeDefined();
  return code as string;
}

function confirm(user: FundedUser, id: string, code: string): Promise<request.Response> {
  return t.api()
    .post(`${BASE}/users/${user.userId}/accounts/crypto/withdrawals/${id}/confirm`)
    .set("x-api-key", key)
    .send({ code })
    .then((res) => res);
}

function deposit(walletId: string, amount: number): Promise<request.Response> {
  return t.api()
    .post(`${BASE}/sandbox/deposits`)
    .set("x-api-key", key)
    .send({ wallet_id: walletId, network: "networks/bitcoin", currency: "btc", amount })
    .then((res) => res);
}

/** `promise`, or "blocked" when it has not settled within `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | "blocked"> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"blocked">((resolve) => (timer = setTimeout(() => resolve("blocked"), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Holds open the transaction of the first ledger post that `matches`: the post runs (taking its
 * locks and writing its postings), then the caller's transaction waits until `release()`.
 */
function holdPost(matches: (r: PostRequest) => boolean): { posted: Promise<void>; release(): void; restore(): void } {
  const ledger = t.services.ledger;
  const original = ledger.post.bind(ledger);
  let signal!: () => void;
  let release!: () => void;
  const posted = new Promise<void>((resolve) => (signal = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  ledger.post = async (em, r) => {
    const result = await original(em, r);
    if (!held && matches(r)) {
      held = true;
      signal();
      await gate;
    }
    return result;
  };
  return { posted, release, restore: () => void (ledger.post = original) };
}

/** From a connection of its own: can the row `code` be locked exclusively right now? (rolled back) */
async function rowLockable(code: string): Promise<"lockable" | "locked"> {
  const em = t.orm.em.fork();
  try {
    return await em.transactional(async (tx) => {
      await tx.execute(`select id from ledger_account where code = ? for no key update nowait`, [code]);
      return "lockable" as const;
    });
  } catch (error) {
    if ((error as { code?: string }).code === "55P03") return "locked"; // lock_not_available
    throw error;
  }
}

/** The external row as stored: its cached balance, and the transaction that last wrote it. */
async function externalRow(): Promise<{ balance: string | null; xmin: string }> {
  const [row] = await t.orm.em.fork().execute<{ balance: string | null; xmin: string }[]>(
    `select balance::text as balance, xmin::text as xmin from ledger_account where code = ?`,
    [EXTERNAL_BTC],
  );
  expect(row, EXTERNAL_BTC).toBeDefined();
  return row as { balance: string | null; xmin: string };
}

describe("no shared hot row in a withdrawal or a deposit (docs/decisions/customers-users-and-wallets.md#the-custody-ledger)", () => {
  it("a withdrawal confirm held open on its ledger posting blocks neither another wallet's confirm nor a deposit on the same network", { timeout: 60_000 }, async () => {
    const [a, b, c] = await Promise.all([fundedBtcUser(t.express, key), fundedBtcUser(t.express, key), fundedBtcUser(t.express, key)]);
    const wa = await initiateBtcWithdrawal(t.express, key, a.userId, 0.1);
    const wb = await initiateBtcWithdrawal(t.express, key, b.userId, 0.2);
    const [codeA, codeB] = await Promise.all([codeOf(a, wa), codeOf(b, wb)]);

    const hold = holdPost((r) => r.kind === "debit" && r.reference === `withdrawal:${wa}`);
    let first: Promise<request.Response> | undefined;
    try {
      first = confirm(a, wa, codeA);
      await within(hold.posted, UNBLOCKED_MS).then((v) => expect(v, "the first confirm never reached its ledger posting").not.toBe("blocked"));

      // A's confirm transaction is open, past its debit of held → external.
      const other = await within(confirm(b, wb, codeB), UNBLOCKED_MS);
      expect(other === "blocked" ? "blocked" : other.status, "another wallet's confirm waited for the open one").toBe(200);
      const credited = await within(deposit(c.walletId, 0.3), UNBLOCKED_MS);
      expect(credited === "blocked" ? "blocked" : credited.status, "a deposit waited for the open confirm").toBe(201);
      // Still open: nothing holds the external row exclusively (the posting's foreign key takes a KEY SHARE lock only).
      expect(await rowLockable(EXTERNAL_BTC)).toBe("lockable");
    } finally {
      hold.release();
      hold.restore();
    }
    expect((await first).status).toBe(200);

    const statuses = await t.orm.em.fork().execute<{ id: string; status: string }[]>(`select id, status from withdrawal where id in (?, ?)`, [wa, wb]);
    expect(Object.fromEntries(statuses.map((s) => [s.id, s.status]))).toEqual({ [wa]: "COMPLETED", [wb]: "COMPLETED" });
    expect(await t.services.ledger.verify(t.db)).toEqual(CLEAN);
  });

  it("a deposit held open on its ledger posting blocks neither another wallet's deposit nor a withdrawal confirm on the same network", { timeout: 60_000 }, async () => {
    const [a, b] = await Promise.all([fundedBtcUser(t.express, key), fundedBtcUser(t.express, key)]);
    const wb = await initiateBtcWithdrawal(t.express, key, b.userId, 0.25);
    const codeB = await codeOf(b, wb);

    const hold = holdPost((r) => r.kind === "deposit" && r.walletId === a.walletId);
    let first: Promise<request.Response> | undefined;
    try {
      first = deposit(a.walletId, 0.4);
      await within(hold.posted, UNBLOCKED_MS).then((v) => expect(v, "the first deposit never reached its ledger posting").not.toBe("blocked"));

      const credited = await within(deposit(b.walletId, 0.5), UNBLOCKED_MS);
      expect(credited === "blocked" ? "blocked" : credited.status, "another wallet's deposit waited for the open one").toBe(201);
      const confirmed = await within(confirm(b, wb, codeB), UNBLOCKED_MS);
      expect(confirmed === "blocked" ? "blocked" : confirmed.status, "a confirm waited for the open deposit").toBe(200);
      expect(await rowLockable(EXTERNAL_BTC)).toBe("lockable");
    } finally {
      hold.release();
      hold.restore();
    }
    expect((await first).status).toBe(201);
    expect(await t.services.ledger.verify(t.db)).toEqual(CLEAN);
  });

  it("never rewrites the external row: no cached balance on it, and deposits and confirms leave it untouched", async () => {
    const a = await fundedBtcUser(t.express, key);
    const before = await externalRow();
    expect(before.balance).toBeNull();
    expect((await deposit(a.walletId, 0.7)).status).toBe(201);
    const id = await initiateBtcWithdrawal(t.express, key, a.userId, 0.05);
    expect((await confirm(a, id, await codeOf(a, id))).status).toBe(200);
    expect(await externalRow()).toEqual(before);
  });

  it("derives the external balance from the postings: minus the money in custody of the network", async () => {
    const ledger = t.services.ledger;
    const [inCustody] = await t.orm.em.fork().execute<{ total: string }[]>(
      `select coalesce(sum(balance), 0)::text as total from ledger_account where bucket in ('available', 'held') and currency = 'btc'`,
    );
    const external = (await ledger.externalBalances(t.db)).find((b) => b.code === EXTERNAL_BTC);
    expect(external).toMatchObject({ network: "networks/bitcoin", currency: "btc" });
    expect(external?.balance.neg().toFixed()).toBe(money(inCustody?.total ?? "0").toFixed());
    expect(await ledger.externalBalances(t.db, { network: "networks/bitcoin", currency: "btc" })).toEqual([external]);
    expect(await ledger.externalBalances(t.db, { network: "networks/bitcoin", currency: "eth" })).toEqual([]);
    expect(await ledger.verify(t.db)).toEqual(CLEAN);
  });

  it("npm run ledger:check prints the derived external balances, reports a value cached on an external account, and --rebuild clears it", { timeout: 120_000 }, async () => {
    const check = (...args: string[]): Promise<{ code: number; output: string }> =>
      new Promise((done) => {
        execFile(
          process.execPath,
          ["--import", "tsx", "scripts/ledger-check.ts", ...args],
          { cwd: resolve(import.meta.dirname, "../.."), env: { ...process.env, DATABASE_URL: t.databaseUrl, SECRETS_KEY: TEST_SECRETS_KEY, LOG_LEVEL: "silent" } },
          (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
        );
      });
    const [external] = await t.services.ledger.externalBalances(t.db, { network: "networks/bitcoin", currency: "btc" });
    expect(external?.balance.isNegative()).toBe(true);

    const clean = await check();
    expect(clean.output).toContain("The ledger is consistent.");
    expect(clean.output).toContain(`${EXTERNAL_BTC} ${external?.balance.toFixed()}`);
    expect(clean.code, clean.output).toBe(0);

    await t.orm.em.fork().execute(`update ledger_account set balance = 7 where code = ?`, [EXTERNAL_BTC]);
    const stale = await check();
    expect(stale.output).toContain(`"code": "${EXTERNAL_BTC}"`);
    expect(stale.output).toContain("The ledger is NOT consistent.");
    expect(stale.code, stale.output).toBe(1);

    const rebuilt = await check("--rebuild");
    expect(rebuilt.output).toContain("Rebuilt the balance cache: 1 account(s) corrected.");
    expect(rebuilt.code, rebuilt.output).toBe(0);
    expect((await externalRow()).balance).toBeNull();
  });
});

/**
 * Credits of live deposits in groups, against a real Anvil (docs/decisions/live-chains.md
 * "Deposits"; tests/support/anvil.ts): the due deposits of several wallets, two of one wallet
 * among them, are credited in one transaction, each once, with one ledger entry each; a deposit
 * whose credit fails does not hold the others back: its group is credited again one deposit per
 * transaction, it alone stays `pending` (logged), and it is credited once on a later run. A group
 * holds all its wallets' available accounts before its first credit, so a transfer between two of
 * them cannot deadlock with it.
 *
 * The app runs with `ROLE=api` (no background job): the test runs the follower itself, built as
 * src/modules/chains/service.ts builds it. The failure is real: the deposit's wallet transaction
 * is moved off `pending` in the database, so its credit's last step finds no pending deposit.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEther, type TransactionReceipt } from "ethers";
import pg from "pg";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { accountCode } from "../../src/domain/ledger.js";
import { ChainFollower } from "../../src/modules/chains/follower.js";
import { LiveDeposits } from "../../src/modules/wallets/deposits.js";
import { createTestDatabase } from "../support/app.js";
import { liveEnv } from "../support/live-env.js";
import { startTestChain, type TestChain } from "../support/anvil.js";
import { BASE, Walk } from "../support/fixtures.js";
import { guardTransactions } from "../support/tx-guard.js";

const NETWORK = "networks/ethereum";
const CONFIRMATIONS = 2;

describe("grouped credits of live deposits on Anvil", () => {
  let chain: TestChain;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  let app: App;
  let db: pg.Client;
  let follower: ChainFollower;
  let key: string;
  let wallets: { id: string; address: string }[];
  const logged: string[] = [];

  const run = async () => {
    await follower.run();
    const failed = (await db.query<{ last_error: string | null }>(`select last_error from chain_cursor where network = $1`, [NETWORK])).rows[0]?.last_error;
    expect(failed ?? null).toBeNull();
  };
  /** Deposits `eth` from Anvil's account `from` to each wallet of `to`, all in one block. */
  const depositsInOneBlock = async (to: readonly [number, { address: string }, string][]): Promise<TransactionReceipt[]> => {
    await chain.setAutomine(false);
    try {
      const sent = [];
      for (const [from, wallet, eth] of to) sent.push(await chain.wallet(from).sendTransaction({ to: wallet.address, value: parseEther(eth) }));
      await chain.mine(1);
      return Promise.all(sent.map(async (t) => (await t.wait())!));
    } finally {
      await chain.setAutomine(true);
    }
  };
  const statuses = async (receipts: readonly TransactionReceipt[]) => {
    const rows = (await db.query<{ tx_hash: string; status: string }>(`select tx_hash, status from chain_deposit where tx_hash = any($1)`, [receipts.map((r) => r.hash.toLowerCase())])).rows;
    return receipts.map((r) => rows.find((row) => row.tx_hash === r.hash.toLowerCase())?.status);
  };
  const entries = async (r: TransactionReceipt) =>
    (await db.query<{ amount: string }>(`select amount::text from journal_entry where reference = $1`, [`deposit:${NETWORK}:${r.hash.toLowerCase()}:-1`])).rows.map((e) => e.amount);
  const balance = async (w: { id: string }) => {
    const res = await request(app.express).get(`${BASE}/wallets/${w.id}/balance`).set("x-api-key", key);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.data.balance as { currency: string; balance: string }[]).find((b) => b.currency === "eth")?.balance;
  };

  beforeAll(async () => {
    chain = await startTestChain();
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), "live-credits-"));
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    guardTransactions();
    app = await createApp(loadConfig(liveEnv(database.url, dataDir, {
      ROLE: "api",
      CHAIN_ETHEREUM_RPC_URL: chain.url,
      CHAIN_ETHEREUM_CONFIRMATIONS: String(CONFIRMATIONS),
      CHAIN_RPC_TIMEOUT_S: "5",
    })), { validateResponses: true });
    const live = app.services.chains.networks[0]!;
    const own = new Set(app.services.chains.ownAddresses());
    const logger = { info: () => undefined, warn: (_: object, m: string) => void logged.push(m), error: (_: object, m: string) => void logged.push(m) };
    follower = new ChainFollower(live.settings, live.rpc, app.db, new LiveDeposits(app.services.ledger, app.services.webhooks), logger, () => own);

    const walk = new Walk(app.express);
    ({ key } = await walk.tenant("live-credits"));
    const { userId } = await walk.activeUserWithToken(key);
    wallets = [];
    for (const name of ["One", "Two", "Three"]) {
      const res = await request(app.express).post(`${BASE}/users/${userId}/wallets`).set("x-api-key", key).send({ name, networks: [{ name: NETWORK, currency: "eth" }] });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      wallets.push({ id: res.body.data.wallet_id as string, address: (res.body.data.addresses as { address: string }[])[0]!.address });
    }
    await run(); // the cursor, at the head
  });

  afterAll(async () => {
    await app?.close();
    await db?.end();
    await database?.drop();
    await chain?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("credits a group's deposits each once; a failed credit stays pending alone and is credited on a later run", async () => {
    const [one, two, three] = wallets as [{ id: string; address: string }, { id: string; address: string }, { id: string; address: string }];
    const receipts = await depositsInOneBlock([[1, one, "0.1"], [2, one, "0.2"], [3, two, "0.3"], [4, three, "0.4"]]);
    expect(new Set(receipts.map((r) => r.blockNumber)).size).toBe(1);
    await run();
    expect(await statuses(receipts)).toEqual(["pending", "pending", "pending", "pending"]);

    // the third deposit's credit will fail at its last step: its wallet transaction is no longer pending
    const third = (await db.query<{ wallet_transaction_id: string }>(`select wallet_transaction_id::text from chain_deposit where tx_hash = $1`, [receipts[2]!.hash.toLowerCase()])).rows[0]!;
    await db.query(`update wallet_transaction set status = 'orphaned' where id = $1`, [third.wallet_transaction_id]);
    await chain.mine(CONFIRMATIONS);
    await run();
    expect(await statuses(receipts)).toEqual(["done", "done", "pending", "done"]);
    expect(logged).toContain("a live deposit could not be credited; it stays pending");
    for (const r of [receipts[0]!, receipts[1]!, receipts[3]!]) expect(await entries(r)).toHaveLength(1);
    expect(await entries(receipts[2]!)).toEqual([]);
    expect(await balance(one)).toBe("0.30000000");
    expect(await balance(two)).toBe("0.00000000");
    expect(await balance(three)).toBe("0.40000000");

    // once its wallet transaction is pending again, the next run credits it, and nothing twice
    await db.query(`update wallet_transaction set status = 'pending' where id = $1`, [third.wallet_transaction_id]);
    await chain.mine(1);
    await run();
    await run();
    expect(await statuses(receipts)).toEqual(["done", "done", "done", "done"]);
    for (const r of receipts) expect(await entries(r)).toHaveLength(1);
    expect(await balance(two)).toBe("0.30000000");
    expect(await app.services.ledger.verify(app.db)).toEqual({ unbalancedEntries: [], cacheMismatches: [], negativeAccounts: [], unbalancedCurrencies: [] });
  });

  it("holds every available account of a group before its first credit, and frees them when it ends", async () => {
    const [one, , three] = wallets as [{ id: string; address: string }, { id: string; address: string }, { id: string; address: string }];
    const codes = [three, one].map((w) => accountCode({ bucket: "available", walletId: w.id, currency: "eth" }));
    const tryLock = (code: string) => db.query(`select id from ledger_account where code = $1 for update nowait`, [code]);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const group = app.db.transaction(async (tx) => {
      await new LiveDeposits(app.services.ledger, app.services.webhooks).lockForCredits(tx, [{ walletId: three.id, currency: "eth" }, { walletId: one.id, currency: "eth" }]);
      held();
      await released;
    });
    await holding;
    try {
      for (const code of codes) await expect(tryLock(code), code).rejects.toMatchObject({ code: "55P03" }); // lock_not_available
    } finally {
      release();
      await group;
    }
    await db.query("begin");
    try {
      for (const code of codes) expect((await tryLock(code)).rowCount, code).toBe(1);
    } finally {
      await db.query("rollback");
    }
  });
});

/**
 * Reorg reversals of credited live deposits, against a real Anvil (docs/decisions/live-chains.md
 * "Reorgs"; tests/support/anvil.ts): a reorg deeper than the confirmations removes the blocks of
 * two credited deposits. In its one transaction the follower takes both back in full: the wallet
 * whose available covers it is debited and stays `ACTIVE`; the one that spent part of it keeps a
 * zero balance (never negative), owes the rest as its `deficit` and turns `LOCKED` with
 * `wallet.status_changed`. Unlock and money out are refused while it owes; later deposits cover the
 * deficit first, and the wallet returns to `ACTIVE` by itself. A reversed deposit mined again is the
 * same record, credited again at the confirmations.
 *
 * The app runs with `ROLE=api` (no background job): the test runs the follower itself, built as
 * src/modules/chains/service.ts builds it but with the customer's webhook as its notifier, and
 * delivers the webhook's outbox itself.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEther } from "ethers";
import pg from "pg";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { ChainFollower } from "../../src/modules/chains/follower.js";
import { currencyBalances } from "../../src/modules/ledger/service.js";
import { LiveDeposits } from "../../src/modules/wallets/deposits.js";
import { walletBalanceRows } from "../../src/modules/wallets/repository.js";
import { DEFICIT_REASON } from "../../src/modules/wallets/states.js";
import { createTestDatabase } from "../support/app.js";
import { liveEnv } from "../support/live-env.js";
import { startTestChain, type TestChain } from "../support/anvil.js";
import { BASE, Walk } from "../support/fixtures.js";
import { guardTransactions } from "../support/tx-guard.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";
import { waitFor } from "../support/wait.js";

const NETWORK = "networks/ethereum";
const CONFIRMATIONS = 2;

type Tx = { id: number; balance: number; transaction: { hash: string; status: string; action: string; amount: number; description: string } };
type Wallet = { id: string; address: string };

describe("reorg reversals of credited live deposits on Anvil", () => {
  let chain: TestChain;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  let app: App;
  let db: pg.Client;
  let receiver: Receiver;
  let follower: ChainFollower;
  let customerId: string;
  let key: string;
  let short: Wallet; // spends part of its deposit before the reorg: left owing
  let covered: Wallet; // keeps its deposit: debited, stays ACTIVE
  let other: Wallet; // where `short` spends
  let userId: string;
  let operator: string;
  const logged: string[] = [];

  const http = () => request(app.express);
  const run = async () => {
    await follower.run();
    const failed = (await db.query<{ last_error: string | null }>(`select last_error from chain_cursor where network = $1`, [NETWORK])).rows[0]?.last_error;
    expect(failed ?? null).toBeNull();
  };
  const transactions = async (w: Wallet): Promise<Tx[]> => {
    const res = await http().get(`${BASE}/wallets/${w.id}/transactions`).set("x-api-key", key).query({ "filter[limit]": 100 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as Tx[];
  };
  const ofHash = async (w: Wallet, hash: string) => (await transactions(w)).filter((t) => t.transaction.hash === hash.toLowerCase());
  const balance = async (w: Wallet) => {
    const res = await http().get(`${BASE}/wallets/${w.id}/balance`).set("x-api-key", key);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const eth = (res.body.data.balance as { currency: string; balance: string; available: string; held: string }[]).find((b) => b.currency === "eth");
    return { status: res.body.data.status as string, reason: res.body.data.status_reason as string | null, ...eth };
  };
  /** The deficit as the balance answer's statement reads it (src/modules/wallets/repository.ts `WALLET_BALANCE`). */
  const deficit = async (w: Wallet): Promise<string | undefined> => {
    const [eth] = currencyBalances(await walletBalanceRows(app.db, w.id, customerId)).filter((b) => b.currency === "eth");
    return eth?.deficit?.toFixed();
  };
  const deposit = async (from: number, to: Wallet, eth: string) => (await (await chain.wallet(from).sendTransaction({ to: to.address, value: parseEther(eth) })).wait())!;
  const negativeAccounts = async () => (await db.query(`select code from ledger_account where bucket in ('available', 'held') and balance < 0`)).rows;
  const entries = async (like: string) =>
    (await db.query<{ kind: string; amount: string }>(`select kind, amount::text from journal_entry where reference like $1 order by id`, [like])).rows;
  const statusHooks = async (w: Wallet) => {
    await app.services.webhooks.deliverDue();
    return receiver.received.filter((r) => r.json.type === "wallet.status_changed" && r.json.data.wallet_id === w.id).map((r) => r.json.data as Record<string, unknown>);
  };
  const newWallet = async (userId: string, name: string, networks = [{ name: NETWORK, currency: "eth" }]): Promise<Wallet> => {
    const res = await http().post(`${BASE}/users/${userId}/wallets`).set("x-api-key", key).send({ name, networks });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return { id: res.body.data.wallet_id as string, address: (res.body.data.addresses as { address: string }[])[0]!.address };
  };
  const transfer = (from: Wallet, to: Wallet, amount: number, currency = "eth") =>
    http().post(`${BASE}/transfers`).set("x-api-key", key).set("Idempotency-Key", randomUUID()).send({ from_wallet_id: from.id, to_wallet_id: to.id, currency, amount });

  beforeAll(async () => {
    chain = await startTestChain();
    receiver = await startReceiver();
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), "live-reversals-"));
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    guardTransactions();
    app = await createApp(loadConfig(liveEnv(database.url, dataDir, {
      ROLE: "api",
      ALLOW_PRIVATE_NETWORK_TARGETS: "true",
      CHAIN_ETHEREUM_RPC_URL: chain.url,
      CHAIN_ETHEREUM_CONFIRMATIONS: String(CONFIRMATIONS),
      CHAIN_RPC_TIMEOUT_S: "5",
    })), { validateResponses: true });
    const live = app.services.chains.networks[0]!;
    const own = new Set(app.services.chains.ownAddresses());
    const logger = { info: () => undefined, warn: (_: object, m: string) => void logged.push(m), error: (_: object, m: string) => void logged.push(m) };
    follower = new ChainFollower(live.settings, live.rpc, app.db, new LiveDeposits(app.services.ledger, app.services.webhooks), logger, () => own);

    const walk = new Walk(app.express);
    ({ customerId, key } = await walk.tenant("live-reversals"));
    const hook = await http().post(`${BASE}/customers/${customerId}/webhooks`).set("Authorization", `Bearer ${await walk.operatorToken()}`).send({ url: receiver.url });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    receiver.trust(hook.body.data.signing_secret as string);
    ({ userId } = await walk.activeUserWithToken(key));
    operator = await walk.operatorToken();
    short = await newWallet(userId, "Short");
    covered = await newWallet(userId, "Covered");
    other = await newWallet(userId, "Other");
    await run(); // the cursor, at the head
  });

  afterAll(async () => {
    await app?.close();
    await db?.end();
    await database?.drop();
    await receiver?.close();
    await chain?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("takes back both deposits in one reorg: the covered wallet is debited, the short one owes the rest and is locked", async () => {
    const toShort = await deposit(1, short, "1");
    const toCovered = await deposit(2, covered, "2");
    const rawCovered = (await chain.rawTransaction(toCovered.hash))!;
    await chain.mine(CONFIRMATIONS);
    await run();
    expect((await ofHash(short, toShort.hash))[0]?.transaction.status).toBe("done");
    const [coveredDeposit] = await ofHash(covered, toCovered.hash);
    expect(coveredDeposit?.transaction.status).toBe("done");
    expect((await transfer(short, other, 0.7)).status).toBe(201);
    expect(await balance(short)).toMatchObject({ status: "ACTIVE", balance: "0.30000000", available: "0.30000000" });

    // a reorg deeper than the confirmations: both deposits' blocks leave the chain, their transactions with them
    const depth = (await chain.provider.getBlockNumber()) - toShort.blockNumber + 1;
    expect(depth).toBeGreaterThan(CONFIRMATIONS);
    await chain.reorg(depth);
    expect(await chain.blockHash(toShort.blockNumber)).not.toBe(toShort.blockHash);
    expect(await chain.blockHash(toCovered.blockNumber)).not.toBe(toCovered.blockHash);
    expect(await chain.provider.getTransactionReceipt(toShort.hash)).toBeNull();
    await chain.mine(1);
    await run();

    const rows = (await db.query(`select tx_hash, status from chain_deposit order by id`)).rows;
    expect(rows).toEqual([{ tx_hash: toShort.hash.toLowerCase(), status: "reversed" }, { tx_hash: toCovered.hash.toLowerCase(), status: "reversed" }]);
    expect(logged).toContain("reorg below the confirmations: credited deposits taken back");

    // the short wallet: 0.3 taken now, 0.7 owed; nothing below zero; LOCKED by the deficit
    const shortTxs = await ofHash(short, toShort.hash);
    expect(shortTxs.map((t) => [t.transaction.action, t.transaction.status, t.transaction.amount, t.balance])).toEqual([
      ["deposit_reversal", "done", 1, 0],
      ["deposit", "reversed", 1, 1],
    ]);
    expect(shortTxs[0]!.transaction.description).toContain("0.70000000 owed");
    expect(await balance(short)).toMatchObject({ status: "LOCKED", reason: DEFICIT_REASON, balance: "0.00000000", available: "0.00000000", held: "0.00000000" });
    expect(await deficit(short)).toBe("0.7");
    expect((await db.query(`select network, amount::text from wallet_deficit where wallet_id = $1`, [short.id])).rows).toEqual([{ network: NETWORK, amount: "0.700000000000000000" }]);
    expect(await entries(`deposit_reversal:${NETWORK}:${toShort.hash.toLowerCase()}:-1`)).toEqual([{ kind: "deposit_reversal", amount: "0.300000000000000000" }]);

    // the covered wallet: debited in full, no deficit, still ACTIVE
    expect((await ofHash(covered, toCovered.hash)).map((t) => [t.transaction.action, t.transaction.status, t.balance])).toEqual([
      ["deposit_reversal", "done", 0],
      ["deposit", "reversed", 2],
    ]);
    expect(await balance(covered)).toMatchObject({ status: "ACTIVE", balance: "0.00000000" });
    expect(await deficit(covered)).toBeUndefined();
    expect(await entries(`deposit_reversal:${NETWORK}:${toCovered.hash.toLowerCase()}:-1`)).toEqual([{ kind: "deposit_reversal", amount: "2.000000000000000000" }]);
    expect(await negativeAccounts()).toEqual([]);
    const check = await app.services.ledger.verify(app.db);
    expect(check).toEqual({ unbalancedEntries: [], cacheMismatches: [], negativeAccounts: [], unbalancedCurrencies: [] });

    const hooks = await waitFor("the deficit lock's wallet.status_changed", async () => ((await statusHooks(short)).length >= 1 ? statusHooks(short) : undefined), 10_000);
    expect(hooks).toEqual([expect.objectContaining({ previous_status: "ACTIVE", status: "LOCKED", reason: DEFICIT_REASON })]);
    expect(await statusHooks(covered)).toEqual([]);

    // the reversed deposit mined again: the same record, pending, then credited again at the confirmations
    await chain.provider.send("eth_sendRawTransaction", [rawCovered]);
    const again = (await chain.provider.getTransactionReceipt(toCovered.hash))!;
    expect(again.blockHash).not.toBe(toCovered.blockHash);
    await run();
    expect((await ofHash(covered, toCovered.hash)).map((t) => [t.transaction.action, t.transaction.status])).toEqual([
      ["deposit_reversal", "done"],
      ["deposit", "pending"],
    ]);
    await chain.mine(CONFIRMATIONS);
    await run();
    const back = await ofHash(covered, toCovered.hash);
    expect(back.map((t) => [t.transaction.action, t.transaction.status, t.balance])).toEqual([
      ["deposit_reversal", "done", 0],
      ["deposit", "done", 2],
    ]);
    expect(back[1]!.id).toBe(coveredDeposit!.id);
    expect(await balance(covered)).toMatchObject({ status: "ACTIVE", balance: "2.00000000" });
    expect((await db.query(`select status from chain_deposit where tx_hash = $1`, [toCovered.hash.toLowerCase()])).rows).toEqual([{ status: "done" }]);
  });

  it("refuses unlock and money out while the wallet owes; later deposits cover the deficit first and it returns to ACTIVE by itself", async () => {
    const unlock = await http().post(`${BASE}/wallets/${short.id}/unlock`).set("x-api-key", key);
    expect(unlock.status, JSON.stringify(unlock.body)).toBe(400);
    expect(JSON.stringify(unlock.body)).toContain("WALLET_LOCKED");
    expect(JSON.stringify(unlock.body)).toContain("0.70000000 eth");
    const out = await transfer(short, other, 0.1);
    expect(out.status).toBe(400);
    expect(JSON.stringify(out.body)).toContain("WALLET_LOCKED");
    // money may arrive while it is locked: a transfer in is not a credit that covers (only chain deposits do)
    expect((await transfer(other, short, 0.1)).status).toBe(201);
    expect(await balance(short)).toMatchObject({ status: "LOCKED", available: "0.10000000" });

    // 0.5 arrives: the deficit (0.7) takes all of available (0.1 + 0.5); 0.1 still owed
    const first = await deposit(3, short, "0.5");
    await chain.mine(CONFIRMATIONS - 1);
    await run();
    const firstTx = (await ofHash(short, first.hash))[0]!;
    expect([firstTx.transaction.status, firstTx.balance]).toEqual(["done", 0]);
    expect(await balance(short)).toMatchObject({ status: "LOCKED", balance: "0.00000000", available: "0.00000000" });
    expect(await deficit(short)).toBe("0.1");
    expect(await entries(`deficit_cover:deposit:${NETWORK}:${first.hash.toLowerCase()}:-1`)).toEqual([{ kind: "deposit_reversal", amount: "0.600000000000000000" }]);

    // 1 arrives: 0.1 covers the rest, 0.9 is the wallet's; it returns to ACTIVE with wallet.status_changed
    const second = await deposit(4, short, "1");
    await chain.mine(CONFIRMATIONS - 1);
    await run();
    expect((await ofHash(short, second.hash))[0]!.balance).toBe(0.9);
    expect(await balance(short)).toMatchObject({ status: "ACTIVE", reason: null, balance: "0.90000000", available: "0.90000000" });
    expect(await deficit(short)).toBeUndefined();
    expect((await db.query(`select 1 from wallet_deficit where wallet_id = $1`, [short.id])).rows).toEqual([]);
    const hooks = await waitFor("the lift's wallet.status_changed", async () => ((await statusHooks(short)).length >= 2 ? statusHooks(short) : undefined), 10_000);
    const changes = hooks.sort((x, y) => String(x.changed_at).localeCompare(String(y.changed_at))).map((d) => [d.previous_status, d.status, d.reason]);
    expect(changes).toEqual([["ACTIVE", "LOCKED", DEFICIT_REASON], ["LOCKED", "ACTIVE", null]]);
    expect((await transfer(short, other, 0.1)).status).toBe(201);
    expect(await negativeAccounts()).toEqual([]);
    expect((await app.services.ledger.verify(app.db)).negativeAccounts).toEqual([]);
  });

  describe("the wallet states a deficit meets (reversals of sandbox-credited deposits, taken back as the follower does)", () => {
    const BTC = [{ name: "networks/bitcoin", currency: "btc" }];
    const deposits = () => new LiveDeposits(app.services.ledger, app.services.webhooks);
    /** A wallet credited `btc` by the sandbox helper; its deposit transaction's id. */
    const funded = async (name: string, btc: number): Promise<[Wallet, number]> => {
      const w = await newWallet(userId, name, BTC);
      const res = await http().post(`${BASE}/sandbox/deposits`).set("x-api-key", key).send({ wallet_id: w.id, network: "networks/bitcoin", currency: "btc", amount: btc });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return [w, res.body.data.id as number];
    };
    const reverse = (w: Wallet, walletTransactionId: number, amount: string) =>
      app.db.transaction((tx) => deposits().reverse(tx, [{ walletId: w.id, walletTransactionId, network: "networks/bitcoin", currency: "btc", amount, txHash: `0x${"ab".repeat(32)}`, logIndex: -1 }]));
    const btcBalance = async (w: Wallet) => {
      const res = await http().get(`${BASE}/wallets/${w.id}/balance`).set("x-api-key", key);
      return { status: res.body.data.status as string, reason: res.body.data.status_reason as string | null, ...(res.body.data.balance as { currency: string; available: string }[]).find((b) => b.currency === "btc") };
    };
    const call = (w: Wallet, verb: string, body?: object, auth = (r: request.Test) => r.set("x-api-key", key)) => auth(http().post(`${BASE}/wallets/${w.id}/${verb}`)).send(body ?? {});
    const asOperator = (r: request.Test) => r.set("Authorization", `Bearer ${operator}`);

    it("a customer's lock stays the customer's: Unlock waits for the cover, which does not lift it", async () => {
      const [w, depositId] = await funded("Held", 1);
      const sink = await newWallet(userId, "Sink", BTC);
      expect((await transfer(w, sink, 0.6, "btc")).status).toBe(201);
      expect((await call(w, "lock", { reason: "Card lost" })).status).toBe(200);
      expect(await reverse(w, depositId, "1")).toBe(1);
      expect(await btcBalance(w)).toMatchObject({ status: "LOCKED", reason: "Card lost", available: "0.00000000" });
      expect(await deficit(w)).toBeUndefined(); // eth
      const [btc] = currencyBalances(await walletBalanceRows(app.db, w.id, customerId)).filter((b) => b.currency === "btc");
      expect(btc?.deficit?.toFixed()).toBe("0.6");
      const refused = await call(w, "unlock");
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.body)).toMatch(/WALLET_LOCKED.*0\.60000000 btc/);

      // a later credit covers the deficit; the customer's lock stays, and Unlock now lifts it
      const pending = await app.db.transaction((tx) => deposits().recordPending(tx, { walletId: w.id, customerId, network: "networks/bitcoin", address: "bc1-test", currency: "btc", amount: "1", hash: "0xcover" }));
      await app.db.transaction((tx) => deposits().credit(tx, { walletId: w.id, walletTransactionId: pending, network: "networks/bitcoin", currency: "btc", amount: "1", reference: "deposit:networks/bitcoin:0xcover:-1" }));
      expect(await btcBalance(w)).toMatchObject({ status: "LOCKED", reason: "Card lost", available: "0.40000000" });
      expect((await db.query(`select 1 from wallet_deficit where wallet_id = $1`, [w.id])).rows).toEqual([]);
      expect((await call(w, "unlock")).status).toBe(200);
      // the customer's own changes only: the deficit neither locked nor unlocked this wallet
      const hooks = await waitFor("the lock's and unlock's wallet.status_changed", async () => ((await statusHooks(w)).length >= 2 ? statusHooks(w) : undefined), 10_000);
      expect(hooks.sort((x, y) => String(x.changed_at).localeCompare(String(y.changed_at))).map((d) => [d.previous_status, d.status, d.reason])).toEqual([
        ["ACTIVE", "LOCKED", "Card lost"],
        ["LOCKED", "ACTIVE", null],
      ]);
    });

    it("a suspended wallet is reinstated LOCKED while it owes, and cannot be deactivated", async () => {
      const [w, depositId] = await funded("Frozen", 1);
      const sink = await newWallet(userId, "Sink 2", BTC);
      expect((await transfer(w, sink, 1, "btc")).status).toBe(201);
      expect((await call(w, "suspend", { reason: "review" }, asOperator)).status).toBe(200);
      expect(await reverse(w, depositId, "1")).toBe(1);
      expect(await btcBalance(w)).toMatchObject({ status: "SUSPENDED", reason: "review", available: "0.00000000" });
      expect((await call(w, "reinstate", {}, asOperator)).status).toBe(200);
      expect(await btcBalance(w)).toMatchObject({ status: "LOCKED", reason: DEFICIT_REASON });
      const deactivate = await call(w, "deactivate");
      expect(deactivate.status).toBe(400);
      expect(JSON.stringify(deactivate.body)).toMatch(/BAD_REQUEST.*deficit of 1\.00000000 btc/);
    });
  });
});

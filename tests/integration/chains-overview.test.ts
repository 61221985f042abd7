/**
 * The operators' view of the live networks, against a real Anvil (docs/decisions/live-chains.md
 * "The operators' view"; tests/support/anvil.ts): `GET /api/v1/chains` answers an operator session
 * with each live network's node head, the follower's progress, the gas wallet's balance asked of
 * the node, the open sends and the follower's last failure; other callers get 401/403; a node that
 * hangs answers 504, one that answers errors or refuses 502; `/metrics` shows the open sends and
 * the gas wallet's balance stored by the gas watcher. Ethereum reaches Anvil through a pass-through
 * the test can make hang, fail some methods or everything; polygon goes to Anvil directly with a
 * start block far ahead, so its follower never makes a cursor.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HDNodeWallet, Wallet, parseEther } from "ethers";
import pg from "pg";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createTestDatabase } from "../support/app.js";
import { liveEnv } from "../support/live-env.js";
import { NodeProxy } from "../support/node-proxy.js";
import { startTestChain, type TestChain } from "../support/anvil.js";
import { BASE, Walk } from "../support/fixtures.js";
import { guardTransactions } from "../support/tx-guard.js";
import { waitFor } from "../support/wait.js";

const ETHEREUM = "networks/ethereum";
const POLYGON = "networks/polygon";
const WAIT_MS = 25_000;

type RpcRequest = { id: unknown; method: string };

/** A pass-through to Anvil (tests/support/node-proxy.ts): `failAll` answers every call an error; `failing` answers an error for those methods only. */
class FailingProxy extends NodeProxy {
  failAll = false;
  readonly failing = new Set<string>();

  protected override async answer(body: Buffer, res: ServerResponse): Promise<void> {
    const parsed = JSON.parse(body.toString()) as RpcRequest | RpcRequest[];
    const calls = Array.isArray(parsed) ? parsed : [parsed];
    const refused = (call: RpcRequest) => ({ jsonrpc: "2.0", id: call.id, error: { code: -32000, message: `test node refuses ${call.method}` } });
    let answers: { id: unknown }[];
    if (this.failAll) answers = calls.map(refused);
    else {
      const got = (await (await this.send(body)).json()) as { id: unknown } | { id: unknown }[];
      const byId = new Map((Array.isArray(got) ? got : [got]).map((a) => [a.id, a]));
      answers = calls.map((call) => (this.failing.has(call.method) ? refused(call) : (byId.get(call.id) as { id: unknown })));
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
  }
}

type LiveChainItem = {
  network: string;
  chain_id: number;
  head: number;
  scanned: number | null;
  confirmations: number;
  gas_wallet: { address: string; balance: string };
  pending_sends: number;
  error: string | null;
};

/** The value of the sample `series` in a Prometheus text body, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /api/v1/chains on Anvil", () => {
  let chain: TestChain;
  let proxy: FailingProxy;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  let app: App | undefined;
  let db: pg.Client;
  let operator: string;
  let gas: HDNodeWallet;

  const env = (extra: Record<string, string>) => liveEnv(database.url, dataDir, extra);
  const live = (): App => {
    if (!app) throw new Error("the app is not running");
    return app;
  };
  const chains = () => request(live().express).get(`${BASE}/chains`).set("Authorization", `Bearer ${operator}`);
  const listed = async (): Promise<LiveChainItem[]> => {
    const res = await chains();
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as LiveChainItem[];
  };
  const cursor = async () =>
    (await db.query<{ scanned: string; last_error: string | null }>(`select scanned::text, last_error from chain_cursor where network = $1`, [ETHEREUM])).rows[0];
  /**
   * A send of `network` in `state`, as the sends' confirm would queue it (docs/decisions/live-chains.md
   * "Sends"). The hot wallet holds no coin here, so the sender cannot sign or pay for any: the open
   * ones stay open while the test counts them.
   */
  const insertSend = (network: string, state: string) =>
    db.query(
      `insert into chain_send (network, withdrawal_id, customer_id, from_address, to_address, currency, amount_units, state, created_at, updated_at)
       values ($1, gen_random_uuid(), 'chains-overview', $2, $3, 'eth', 1000, $4, now(), now())`,
      [network, gas.address.toLowerCase(), Wallet.createRandom().address.toLowerCase(), state],
    );

  beforeAll(async () => {
    chain = await startTestChain();
    proxy = new FailingProxy(chain.url);
    await proxy.start();
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), "chains-overview-"));
    const phrase = (Wallet.createRandom().mnemonic as { phrase: string }).phrase;
    writeFileSync(join(dataDir, "mnemonic.txt"), `${phrase}\n`, { mode: 0o600 });
    gas = HDNodeWallet.fromPhrase(phrase, "", "m/44'/60'/7'/0/0");
    await (await chain.wallet(1).sendTransaction({ to: gas.address, value: parseEther("1.5") })).wait();
    guardTransactions();
    app = await createApp(loadConfig(env({
      ROLE: "all",
      CUSTODY_MNEMONIC_FILE: join(dataDir, "mnemonic.txt"),
      CHAIN_ETHEREUM_RPC_URL: proxy.url,
      CHAIN_ETHEREUM_CONFIRMATIONS: "3",
      CHAIN_POLYGON_RPC_URL: chain.url,
      CHAIN_POLYGON_START_BLOCK: "10000000",
      CHAIN_RPC_TIMEOUT_S: "1",
    })), { validateResponses: true });
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    operator = await new Walk(live().express).operatorToken();
    await waitFor("the follower's first run", async () => ((await cursor()) ? true : undefined), WAIT_MS);
  });

  afterAll(async () => {
    await app?.close();
    await db?.end();
    await database?.drop();
    await proxy?.stop().catch(() => {});
    await chain?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("answers an operator session with each live network in configuration order, the node asked as it answers", async () => {
    await chain.mine(2);
    const head = Number(await chain.provider.send("eth_blockNumber", []));
    await insertSend(ETHEREUM, "queued");
    await insertSend(ETHEREUM, "broadcast");
    await insertSend(ETHEREUM, "confirmed");
    await insertSend(ETHEREUM, "failed");
    await insertSend(POLYGON, "queued");
    const [ethereum, polygon] = await waitFor("the follower at the head", async () => {
      const data = await listed();
      return data[0]?.scanned === head ? data : undefined;
    }, WAIT_MS);
    expect(ethereum).toEqual({
      network: ETHEREUM,
      chain_id: chain.chainId,
      head,
      scanned: head,
      confirmations: 3,
      gas_wallet: { address: gas.address, balance: "1.50000000" },
      pending_sends: 2,
      error: null,
    });
    // no cursor (the start block is not mined): scanned null, no failure; the node is asked all the same
    expect(polygon).toEqual({
      network: POLYGON,
      chain_id: chain.chainId,
      head,
      scanned: null,
      confirmations: 50,
      gas_wallet: { address: gas.address, balance: "1.50000000" },
      pending_sends: 1,
      error: null,
    });

    // the balance is asked as the answer is made, not read from what the watcher stored
    await (await chain.wallet(1).sendTransaction({ to: gas.address, value: parseEther("0.123456789") })).wait();
    const [after] = await listed();
    expect(after?.gas_wallet.balance).toBe("1.62345678"); // rounded down to 8 decimals
    expect(after?.head).toBe(head + 1);
  });

  it("shows the follower's last node failure, and null again once the node answers it", async () => {
    proxy.failing.add("eth_getBlockByNumber");
    try {
      await chain.mine(1);
      const failed = await waitFor("the follower's failure", async () => {
        const [ethereum] = await listed();
        return ethereum?.error ? ethereum : undefined;
      }, WAIT_MS);
      expect(failed.error).toContain("The networks/ethereum node failed eth_getBlockByNumber");
      expect(failed.scanned).toBeLessThan(failed.head);
    } finally {
      proxy.failing.clear();
    }
    const healed = await waitFor("the failure cleared", async () => {
      const [ethereum] = await listed();
      return ethereum?.error === null && ethereum.scanned === ethereum.head ? ethereum : undefined;
    }, WAIT_MS);
    expect(healed.error).toBeNull();
  });

  it("answers 504 GATEWAY_TIMEOUT when a node does not answer within CHAIN_RPC_TIMEOUT_S", async () => {
    proxy.hang = true;
    try {
      const started = Date.now();
      const res = await chains();
      expect(res.status, JSON.stringify(res.body)).toBe(504);
      expect(res.body.errors[0].code).toBe("GATEWAY_TIMEOUT");
      expect(Date.now() - started).toBeLessThan(5_000); // one call's timeout (1 s), not more
    } finally {
      proxy.hang = false;
    }
    expect((await chains()).status).toBe(200);
  });

  it("answers 502 BAD_GATEWAY when a node answers errors or refuses the connection", async () => {
    proxy.failAll = true;
    try {
      const res = await chains();
      expect(res.status, JSON.stringify(res.body)).toBe(502);
      expect(res.body.errors[0].code).toBe("BAD_GATEWAY");
      expect(res.body.errors[0].message).toContain("networks/ethereum");
    } finally {
      proxy.failAll = false;
    }
    await proxy.stop();
    try {
      const res = await chains();
      expect(res.status, JSON.stringify(res.body)).toBe(502);
      expect(res.body.errors[0].code).toBe("BAD_GATEWAY");
    } finally {
      await proxy.start();
    }
    expect((await chains()).status).toBe(200);
  });

  it("is for an operator session only: 401 without a credential, 403 for the others", async () => {
    const express = live().express;
    expect((await request(express).get(`${BASE}/chains`)).status).toBe(401);
    const walk = new Walk(express);
    const { customerId, key } = await walk.tenant("chains-overview");
    expect((await request(express).get(`${BASE}/chains`).set("x-api-key", key)).status).toBe(403);
    const session = await request(express).post(`${BASE}/sessions`).send({ customer_id: customerId, customer_secret: key });
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    const customer = await request(express).get(`${BASE}/chains`).set("Authorization", `Bearer ${session.body.data.token as string}`);
    expect(customer.status).toBe(403);
    expect(customer.body.errors[0].code).toBe("FORBIDDEN");
    const { token } = await walk.activeUserWithToken(key);
    expect((await request(express).get(`${BASE}/chains`).set("Authorization", `Bearer ${token}`)).status).toBe(403);
  });

  it("shows the open sends and the gas wallet's stored balance on /metrics, without asking the node", async () => {
    const metrics = await waitFor("the gas watcher's balance", async () => {
      const res = await request(live().express).get("/metrics");
      expect(res.status).toBe(200);
      return sample(res.text, `chain_gas_wallet_balance{network="${ETHEREUM}"}`) !== undefined ? res.text : undefined;
    }, WAIT_MS);
    expect(sample(metrics, `chain_gas_wallet_balance{network="${ETHEREUM}"}`)).toBeGreaterThanOrEqual(1.5);
    expect(sample(metrics, `chain_gas_wallet_balance{network="${POLYGON}"}`)).toBeGreaterThanOrEqual(1.5);
    expect(sample(metrics, `chain_pending_sends{network="${ETHEREUM}"}`)).toBe(2);
    expect(sample(metrics, `chain_pending_sends{network="${POLYGON}"}`)).toBe(1);

    const stored = (await db.query<{ network: string; address: string; balance: string }>(`select network, address, balance::text from chain_gas_balance order by network`)).rows;
    expect(stored.map((r) => [r.network, r.address])).toEqual([[ETHEREUM, gas.address.toLowerCase()], [POLYGON, gas.address.toLowerCase()]]);
    await db.query(`update chain_gas_balance set balance = 7.25 where network = $1`, [ETHEREUM]);
    await db.query(`update chain_send set state = 'confirmed' where network = $1 and state = 'queued'`, [ETHEREUM]);
    proxy.hang = true; // a scrape never waits for the node
    try {
      const res = await request(live().express).get("/metrics");
      expect(sample(res.text, `chain_gas_wallet_balance{network="${ETHEREUM}"}`)).toBe(7.25);
      expect(sample(res.text, `chain_pending_sends{network="${ETHEREUM}"}`)).toBe(1);
    } finally {
      proxy.hang = false;
    }
  });

  it("answers an empty array when no network is live", async () => {
    const plain = await createApp(loadConfig(env({ ROLE: "api" })), { validateResponses: true });
    try {
      const token = await new Walk(plain.express).operatorToken();
      const res = await request(plain.express).get(`${BASE}/chains`).set("Authorization", `Bearer ${token}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data).toEqual([]);
    } finally {
      await plain.close();
    }
  });
});

/**
 * A withdrawal's on-chain send across a SIGKILL of the service (docs/decisions/live-chains.md
 * "Sends": the nonce and the signed bytes are stored in one transaction before any broadcast):
 * killed between signing and broadcast, and between the broadcast and its recording, the service
 * started again broadcasts the same bytes; the destination is paid exactly once and the hot
 * wallet's nonces have no gap. The service runs as a child process; the node is a real Anvil
 * behind a pass-through that can hold `eth_sendRawTransaction` before or after forwarding it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HDNodeWallet, Wallet, parseEther } from "ethers";
import pg from "pg";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOT_WALLET_INDEX, serviceWalletPath } from "../../src/providers/evm/keys.js";
import { createTestDatabase } from "../support/app.js";
import { startTestChain, type TestChain } from "../support/anvil.js";
import { NodeProxy } from "../support/node-proxy.js";
import { BASE, Walk } from "../support/fixtures.js";
import { startService, type ServiceProcess } from "../support/service-process.js";
import { waitFor } from "../support/wait.js";
import { codeIn, type Mail } from "../support/withdrawals-scene.js";

/** What the pass-through does with `eth_sendRawTransaction`: forward it, hold it unsent, or forward it and hold the answer. */
type RawMode = "pass" | "hold-before" | "hold-after";

/** A JSON-RPC pass-through to Anvil (tests/support/node-proxy.ts) that records every raw transaction it is given. */
class RawGate extends NodeProxy {
  mode: RawMode = "pass";
  /** Every `eth_sendRawTransaction` parameter seen, in order, with whether it reached the node. */
  readonly raws: { raw: string; forwarded: boolean }[] = [];

  protected override async answer(body: Buffer, res: ServerResponse): Promise<void> {
    const calls = [JSON.parse(body.toString())].flat() as { method: string; params: unknown[] }[];
    const raw = calls.find((c) => c.method === "eth_sendRawTransaction");
    const mode = this.mode;
    if (raw) this.raws.push({ raw: raw.params[0] as string, forwarded: mode !== "hold-before" });
    if (raw && mode === "hold-before") return; // never sent, never answered
    const answer = await this.send(body);
    const text = Buffer.from(await answer.arrayBuffer());
    if (raw && mode === "hold-after") return; // the node has it; the caller never hears so
    res.writeHead(answer.status, { "content-type": "application/json" });
    res.end(text);
  }
}

const CONFIRMATIONS = 2;

let chain: TestChain;
let gate: RawGate;
let rpcUrl: string;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let dataDir: string;
let db: pg.Client;
let hot: string;
let service: ServiceProcess | undefined;
let key: string;
let userId: string;
let email: string;

const env = (): Record<string, string> => ({
  DATABASE_URL: database.url,
  ROLE: "all",
  DATA_DIR: dataDir,
  JOB_LOCK_LIFETIME_S: "3",
  RATE_LIMIT_IP: "off",
  RATE_LIMIT_CREDENTIAL: "off",
  RATE_LIMIT_AUTH_FAILURES: "off",
  RATE_LIMIT_CODES: "off",
  CUSTODY_MNEMONIC_FILE: join(dataDir, "mnemonic.txt"),
  CHAIN_ETHEREUM_RPC_URL: rpcUrl,
  CHAIN_ETHEREUM_CONFIRMATIONS: String(CONFIRMATIONS),
  CHAIN_RPC_TIMEOUT_S: "60",
});

async function start(): Promise<ServiceProcess> {
  service = await startService(env(), "http");
  return service;
}

async function kill9(): Promise<void> {
  await service?.stop("SIGKILL");
  service = undefined;
}

const sendRow = async (withdrawalId: string) =>
  (await db.query<{ state: string; nonce: string | null; raw_tx: string | null; tx_hashes: string[] }>(`select state, nonce::text, raw_tx, tx_hashes from chain_send where withdrawal_id = $1`, [withdrawalId])).rows[0];

/** Initiates and confirms a withdrawal of `amount` eth to `to` through the running service; its id. */
async function withdraw(amount: number, to: string): Promise<string> {
  const base = service!.base;
  const res = await request(base).post(`${BASE}/users/${userId}/accounts/crypto/withdrawals`).set("x-api-key", key).send({ currency: "eth", amount, address: to });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const id = res.body.data.id as string;
  const mails = await request(base).get(`${BASE}/sandbox/mail`).set("x-api-key", key).query({ to: email });
  const mail = (mails.body.data as Mail[]).find((m) => m.text.includes(id))!;
  const confirmed = await request(base).post(`${BASE}/users/${userId}/accounts/crypto/withdrawals/${id}/confirm`).set("x-api-key", key).send({ code: codeIn(mail, id) });
  expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
  return id;
}

/** Waits until withdrawal `id`'s send is confirmed (mining a block now and then). */
async function confirmedSend(id: string): Promise<{ nonce: number; hashes: string[] }> {
  const row = await waitFor(`the send of ${id} confirmed`, async () => {
    await chain.mine(1);
    const r = await sendRow(id);
    return r?.state === "confirmed" ? r : undefined;
  }, 60_000);
  return { nonce: Number(row.nonce), hashes: row.tx_hashes };
}

beforeAll(async () => {
  chain = await startTestChain();
  gate = new RawGate(chain.url);
  await gate.start();
  rpcUrl = gate.url;
  database = await createTestDatabase();
  db = new pg.Client({ connectionString: database.url });
  dataDir = mkdtempSync(join(tmpdir(), "live-sends-crash-"));
  const mnemonic = Wallet.createRandom().mnemonic!.phrase;
  writeFileSync(join(dataDir, "mnemonic.txt"), mnemonic, { mode: 0o600 });
  hot = HDNodeWallet.fromPhrase(mnemonic, undefined, serviceWalletPath(HOT_WALLET_INDEX)).address;
  await (await chain.wallet(1).sendTransaction({ to: hot, value: parseEther("50") })).wait();
  await start();
  await db.connect();
  const walk = new Walk(service!.base);
  ({ key } = await walk.tenant("live-sends-crash"));
  const user = await walk.user(key);
  userId = user.user_id as string;
  email = user.email as string;
  expect((await request(service!.base).post(`${BASE}/users/${userId}/activate`).set("x-api-key", key)).status).toBe(200);
  const wallet = await request(service!.base).post(`${BASE}/users/${userId}/wallets`).set("x-api-key", key).send({ name: "Live", networks: [{ name: "networks/ethereum", currency: "eth" }] });
  expect(wallet.status, JSON.stringify(wallet.body)).toBe(201);
  const walletId = wallet.body.data.wallet_id as string;
  const address = (wallet.body.data.addresses as { address: string }[])[0]!.address;
  await (await chain.wallet(2).sendTransaction({ to: address, value: parseEther("5") })).wait();
  await waitFor("the deposit credited", async () => {
    await chain.mine(1);
    const b = await request(service!.base).get(`${BASE}/wallets/${walletId}/balance`).set("x-api-key", key);
    return (b.body.data.balance as { currency: string; available: string }[]).some((x) => x.currency === "eth" && x.available === "5.00000000") ? true : undefined;
  }, 60_000);
}, 180_000);

afterAll(async () => {
  await kill9();
  await db?.end();
  await database?.drop();
  await gate?.stop();
  await chain?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe("a send across SIGKILL", () => {
  it("killed between signing and broadcast: the restart broadcasts the stored bytes, paid once, no nonce gap", async () => {
    const to = Wallet.createRandom().address;
    gate.mode = "hold-before";
    const id = await withdraw(0.5, to);
    await waitFor("the signed bytes held at the gate", async () => (gate.raws.length > 0 ? true : undefined), 30_000);
    const stored = await sendRow(id);
    expect(stored).toMatchObject({ state: "queued", nonce: "0" });
    expect(stored!.raw_tx).toBe(gate.raws[0]!.raw);
    await kill9();
    expect(await chain.provider.getBalance(to)).toBe(0n);

    gate.mode = "pass";
    await start();
    const done = await confirmedSend(id);
    expect(done).toEqual({ nonce: 0, hashes: [expect.stringMatching(/^0x[0-9a-f]{64}$/)] });
    expect(gate.raws.filter((r) => r.forwarded).every((r) => r.raw === stored!.raw_tx)).toBe(true);
    expect(await chain.provider.getBalance(to)).toBe(parseEther("0.5"));
    expect(await chain.provider.getTransactionCount(hot, "latest")).toBe(1);
  }, 150_000);

  it("killed between the broadcast and its recording: the restart sends the same bytes again, paid once, no nonce gap", async () => {
    const to = Wallet.createRandom().address;
    gate.raws.length = 0;
    gate.mode = "hold-after";
    const id = await withdraw(0.25, to);
    await waitFor("the bytes forwarded to the node", async () => (gate.raws.length > 0 ? true : undefined), 30_000);
    await waitFor("the transaction mined", async () => ((await chain.provider.getBalance(to)) > 0n ? true : undefined), 30_000);
    expect((await sendRow(id))?.state).toBe("queued"); // the service never heard the node's answer
    await kill9();

    gate.mode = "pass";
    await start();
    const done = await confirmedSend(id);
    expect(done.nonce).toBe(1);
    expect(done.hashes).toHaveLength(1);
    expect(await chain.provider.getBalance(to)).toBe(parseEther("0.25"));
    expect(await chain.provider.getTransactionCount(hot, "latest")).toBe(2);

    const next = await withdraw(0.125, Wallet.createRandom().address);
    expect((await confirmedSend(next)).nonce).toBe(2);
  }, 150_000);
});

/**
 * The service's side of the scan row of `npm run bench` (`BENCH_ONLY=scan`; docs/performance.md
 * "Chains: the scan row"): the deposit wallets created through the API, the scan watched from the
 * database (the follower's cursor and the credited deposits, with the service's VmRSS), and the
 * live phase's delay from the threshold block to the credit.
 */
import pg from "pg";
import { userBody } from "../../tests/support/user-body.js";
import { cpuSeconds, processTree, statusKb, type ServerProcess } from "./processes.js";
import { assertAlive, median } from "./report.js";
import { depositTransfer, mineBlock, SENDERS, type ScanChain } from "./scan-chain.js";
import { call, seed } from "./seed.js";

/** The live network of the row. */
export const SCAN_NETWORK = "networks/ethereum";
/** Wallets created per user. */
const WALLETS_PER_USER = 10;
/** Wallets created at once. */
const SEED_PARALLEL = 8;
/** Milliseconds between two looks at the database while the scan runs (RSS every {@link RSS_EVERY}-th look). */
const POLL_MS = 25;
const RSS_EVERY = 10;
/** A stretch without any move longer than this (ms) is a wait between the follower's runs: a batch or a credit takes far less. */
const STALL_MS = 600;

/**
 * Through the service at `base`: the benchmark's customer and owner key (scripts/bench/seed.ts),
 * then `wallets` wallets on ethereum (eth and usdt), {@link WALLETS_PER_USER} per VERIFIED user.
 * @returns each wallet's deposit address, lower case. @throws SeedError naming the failed call.
 */
export async function seedScanWallets(base: string, masterKey: string, wallets: number): Promise<string[]> {
  const { ownerKey } = await seed(base, masterKey, { users: 0, products: 0 });
  const v1 = `${base}/api/v1`;
  const owner = { "x-api-key": ownerKey };
  const users: string[] = [];
  for (let i = 0; i < Math.ceil(wallets / WALLETS_PER_USER); i++) {
    const body = userBody(
      { last_name: `Scan${String.fromCharCode(65 + (i % 26))}`, email: `scan${i}@bench.example`, phone_number: `2025551${String(i).padStart(3, "0")}` },
      { id_number: `123-46-${String(6000 + i)}` },
    );
    const user = await call<{ user_id: string }>(v1, "POST", "/users", owner, body);
    await call(v1, "POST", `/users/${user.user_id}/activate`, owner);
    users.push(user.user_id);
  }
  const addresses: string[] = new Array<string>(wallets);
  let next = 0;
  await Promise.all(
    Array.from({ length: SEED_PARALLEL }, async () => {
      while (next < wallets) {
        const i = next++;
        const networks = [{ name: SCAN_NETWORK, currency: "eth" }, { name: SCAN_NETWORK, currency: "usdt" }];
        const wallet = await call<{ addresses: { address: string }[] }>(v1, "POST", `/users/${users[Math.floor(i / WALLETS_PER_USER)]}/wallets`, owner, { name: `Scan ${i}`, networks });
        const address = wallet.addresses[0]?.address;
        if (!address) throw new Error(`wallet ${i} has no deposit address`);
        addresses[i] = address.toLowerCase();
      }
    }),
  );
  return addresses;
}

/** What the database says of the follower now: its cursor (null before its first run) and the deposits by status. */
async function look(db: pg.Client): Promise<{ scanned: number | null; done: number; seen: number }> {
  const { rows } = await db.query<{ scanned: string | null; done: string; seen: string }>(
    `select (select scanned::text from chain_cursor where network = $1) as scanned,
            (select count(*) from chain_deposit where network = $1 and status = 'done')::text as done,
            (select count(*) from chain_deposit where network = $1)::text as seen`,
    [SCAN_NETWORK],
  );
  const row = rows[0] as { scanned: string | null; done: string; seen: string };
  return { scanned: row.scanned === null ? null : Number(row.scanned), done: Number(row.done), seen: Number(row.seen) };
}

/** CPU seconds of the processes of the tree of `pid` now, by pid (none without `pid`). */
const treeCpu = (pid: number | undefined): Map<number, number> => new Map(pid === undefined ? [] : processTree(pid).map((p) => [p, cpuSeconds(p) || 0] as [number, number]));

/** The scan as watched: when it began and ended, the RSS samples, the CPU and the stalls. */
export interface WatchedScan {
  /** ms (performance.now) the service was spawned, answered /healthz, its cursor appeared, the cursor reached the head, and the last deposit was credited. */
  spawnedAt: number;
  readyAt: number;
  cursorAt: number;
  headAt: number;
  doneAt: number;
  /** Seconds from the cursor's appearance to every deposit credited. */
  seconds: number;
  /** VmRSS samples in MB, every {@link POLL_MS} × {@link RSS_EVERY} ms from the cursor's appearance to the end. */
  rssMb: number[];
  /** CPU seconds of the service (from its first run or its /healthz answer, whichever came later) and of Anvil (from the first run) to the last credit. */
  serviceCpu: number;
  anvilCpu: number;
  /** CPU seconds of PostgreSQL's processes over the scan (NaN with `DATABASE_URL`: not on this machine's tree). */
  dbCpu: number;
  /**
   * The scan's seconds by what ended each stretch between two moves seen: over {@link STALL_MS} with
   * neither the cursor nor the credited count moving (waits between the follower's runs), else the
   * cursor moving (a batch stored) or the credited count moving (credits). Approximate (looks every {@link POLL_MS} ms).
   */
  stalledS: number;
  scanS: number;
  creditS: number;
  /** Deposit rows the follower wrote (every status). */
  seen: number;
}

/**
 * Starts the service (`start`) and watches its follower scan from block 0 to `head` until
 * `deposits` deposits are credited, every {@link POLL_MS} ms from before the spawn (the follower's
 * first run may come before `/healthz` answers); VmRSS every {@link RSS_EVERY}-th look once the
 * service is up. @returns the figures and the service (still running).
 * @throws Error when the service does not start or exits, or after `timeoutS` seconds, with where the follower got.
 */
export async function watchScan(databaseUrl: string, dbPid: number | undefined, start: () => Promise<ServerProcess>, anvilPid: number, head: number, deposits: number, timeoutS: number): Promise<WatchedScan & { service: ServerProcess }> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  let service: ServerProcess | undefined;
  let failed: unknown;
  let readyAt = Number.NaN;
  const starting = start().then(
    (s) => {
      service = s;
      readyAt = performance.now();
    },
    (e: unknown) => void (failed = e),
  );
  try {
    const spawnedAt = performance.now();
    let cursorAt = Number.NaN;
    let headAt = Number.NaN;
    let lastMove = spawnedAt;
    let stalledMs = 0;
    let scanMs = 0;
    let creditMs = 0;
    let last = { scanned: null as number | null, done: 0, seen: 0 };
    let cpu0 = { service: 0, anvil: 0 };
    let db0 = new Map<number, number>();
    const rssMb: number[] = [];
    for (let i = 0; ; i++) {
      const now = performance.now();
      if (failed !== undefined) throw failed;
      const seen = await look(db);
      if (seen.scanned !== null && Number.isNaN(cursorAt)) {
        cursorAt = now;
        lastMove = now;
        cpu0 = { service: service ? cpuSeconds(service.pid) : Number.NaN, anvil: cpuSeconds(anvilPid) };
        db0 = treeCpu(dbPid);
      }
      if (!Number.isNaN(cursorAt)) {
        if (service && Number.isNaN(cpu0.service)) cpu0.service = cpuSeconds(service.pid);
        if (seen.scanned !== last.scanned || seen.done !== last.done) {
          const stretch = now - lastMove;
          if (stretch > STALL_MS) stalledMs += stretch;
          else if (seen.scanned !== last.scanned) scanMs += stretch;
          else creditMs += stretch;
          lastMove = now;
        }
        if (service && i % RSS_EVERY === 0) rssMb.push(statusKb(service.pid, "VmRSS") / 1024);
        if (Number.isNaN(headAt) && (seen.scanned ?? -1) >= head) headAt = now;
        if (service && (seen.scanned ?? -1) >= head && seen.done >= deposits) {
          rssMb.push(statusKb(service.pid, "VmRSS") / 1024);
          return {
            service,
            spawnedAt,
            readyAt,
            cursorAt,
            headAt,
            doneAt: now,
            seconds: (now - cursorAt) / 1000,
            rssMb,
            serviceCpu: cpuSeconds(service.pid) - cpu0.service,
            anvilCpu: cpuSeconds(anvilPid) - cpu0.anvil,
            dbCpu: dbPid === undefined ? Number.NaN : [...treeCpu(dbPid)].reduce((sum, [p, now]) => sum + now - (db0.get(p) ?? 0), 0),
            stalledS: stalledMs / 1000,
            scanS: scanMs / 1000,
            creditS: creditMs / 1000,
            seen: seen.seen,
          };
        }
      }
      last = seen;
      if (service) assertAlive([service]);
      if (now - spawnedAt > timeoutS * 1000) throw new Error(`the follower did not finish the scan within ${timeoutS} s: cursor ${seen.scanned ?? "none"} of ${head}, ${seen.done} of ${deposits} deposits credited`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    await db.end();
    await starting;
  }
}

/** The RSS verdict: start, peak and end (MB), and whether it stayed flat by {@link FLAT_RULE}. */
export function rssVerdict(samples: readonly number[]): { start: number; peak: number; end: number; flat: boolean; climb: number } {
  const start = samples[0] ?? Number.NaN;
  const end = samples[samples.length - 1] ?? Number.NaN;
  const q = Math.max(1, Math.floor(samples.length / 4));
  const climb = median(samples.slice(-q)) - median(samples.slice(q, 2 * q));
  return { start, peak: Math.max(...samples), end, flat: end - start < FLAT_GROWTH_MB && climb < FLAT_CLIMB_MB, climb };
}
/** "Flat": the end within this many MB of the start… */
export const FLAT_GROWTH_MB = 50;
/** …and the last quarter's median RSS within this many MB of the second quarter's (no steady climb once warm). */
export const FLAT_CLIMB_MB = 25;
export const FLAT_RULE = `end − start < ${FLAT_GROWTH_MB} MB and the last quarter's median within ${FLAT_CLIMB_MB} MB of the second quarter's`;

/** The live phase's figures: the delays from the threshold block to the credit, ms. */
export interface LiveDelays {
  delaysMs: number[];
  blocks: number;
  intervalMs: number;
}

/**
 * The live phase: after the scan, `count` blocks one every `intervalMs` ms, each with one deposit
 * (native and token alternately, to `addresses` round-robin) and up to 3 transfers to strangers,
 * then empty blocks at the same pace until every one is credited. For each, the delay from the
 * moment `evm_mine` of its threshold block (its block + `confirmations` − 1) answered to its
 * `chain_deposit.credited_at` (PostgreSQL's clock on this machine).
 * @throws Error when they are not all credited within `timeoutS` seconds, or the service exits.
 */
export async function liveDelays(o: { chain: ScanChain; databaseUrl: string; service: ServerProcess; addresses: readonly string[]; firstIndex: number; count: number; intervalMs: number; confirmations: number; timeoutS: number }): Promise<LiveDelays> {
  const db = new pg.Client({ connectionString: o.databaseUrl });
  await db.connect();
  try {
    const startHeight = Number(await o.chain.rpc.call<string>("eth_blockNumber"));
    const minedAt = new Map<number, number>();
    const began = Date.now();
    let blocks = 0;
    for (;;) {
      const due = began + blocks * o.intervalMs;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      const transfers =
        blocks < o.count
          ? [depositTransfer(o.firstIndex + blocks, o.addresses[(o.firstIndex + blocks) % o.addresses.length] as string), ...[1, 2, 3].map((k) => ({ to: `0x${String(k).repeat(40)}`, token: k % 2 === 0, amount: 1000n, deposit: false }))]
          : [];
      const mined = await mineBlock(o.chain, transfers, (blocks % SENDERS) + 1);
      minedAt.set(mined.height, mined.minedAt);
      blocks++;
      assertAlive([o.service]);
      if (blocks >= o.count + o.confirmations - 1) {
        const { rows } = await db.query<{ n: string }>(`select count(*)::text as n from chain_deposit where network = $1 and block_height > $2 and status = 'done'`, [SCAN_NETWORK, startHeight]);
        if (Number(rows[0]?.n) >= o.count) break;
      }
      if (Date.now() - began > o.timeoutS * 1000) throw new Error(`the live deposits were not all credited within ${o.timeoutS} s`);
    }
    const { rows } = await db.query<{ height: string; credited: string }>(
      `select block_height::text as height, (extract(epoch from credited_at) * 1000)::text as credited from chain_deposit where network = $1 and block_height > $2`,
      [SCAN_NETWORK, startHeight],
    );
    if (rows.length !== o.count) throw new Error(`${rows.length} live deposits recorded, not ${o.count}`);
    const delaysMs = rows.map((r) => {
      const threshold = minedAt.get(Number(r.height) + o.confirmations - 1);
      if (threshold === undefined) throw new Error(`no mining time of the threshold block of a deposit at ${r.height}`);
      return Number(r.credited) - threshold;
    });
    return { delaysMs, blocks, intervalMs: o.intervalMs };
  } finally {
    await db.end();
  }
}

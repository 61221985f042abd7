/**
 * A local three-node PostgreSQL cluster managed by Patroni, as production runs it (docs/operations.md
 * "Failover"): one etcd (Patroni's store), three Patroni nodes each running a PostgreSQL 15 of
 * Debian's packages, and HAProxy routing to the leader. The configurations are the templates of
 * ops/ha/ (patroni.yml.template, haproxy.cfg.template) filled with free loopback ports and a
 * temporary folder. PostgreSQL refuses to run as root, so Patroni (and the PostgreSQL it starts)
 * runs as the user `postgres`, on data folders owned by it. Every process is started and stopped
 * by its process id: SIGKILL or SIGSTOP of one node's Patroni and its PostgreSQL together are the
 * faults of tests/process/failover.test.ts.
 *
 * Needs the Debian packages `patroni`, `etcd-server` and `haproxy` (installed by .ci/run), and
 * PostgreSQL 15's binaries in /usr/lib/postgresql/15/bin: {@link haPrerequisites} names what is missing.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { freePort } from "../../src/db/embedded.js";
import { sleep, waitFor } from "./wait.js";

const ROOT = resolve(import.meta.dirname, "../..");
const PG_BIN_DIR = "/usr/lib/postgresql/15/bin";
const BINARIES = { patroni: "/usr/bin/patroni", etcd: "/usr/bin/etcd", haproxy: "/usr/sbin/haproxy" } as const;
const SUPERUSER_PASSWORD = "ha-test-superuser";
const REPLICATION_PASSWORD = "ha-test-replicator";
/** Connections in a row through HAProxy that must reach the primary before the cluster counts as up. */
const PRIMARY_STREAK = 6;

/** Patroni's timing in the test: promotion within about TTL + LOOP_WAIT seconds of a leader's last renewal (LOOP_WAIT + 2 × RETRY_TIMEOUT ≤ TTL). */
export const HA_TIMING = { ttl: 10, loopWait: 2, retryTimeout: 4 } as const;

/**
 * What this machine lacks to run the cluster, as readable lines (empty when nothing is missing):
 * the binaries of `patroni`, `etcd-server`, `haproxy` and PostgreSQL 15, with the apt-get line.
 */
export function haPrerequisites(): string[] {
  const missing: string[] = [];
  const packages: string[] = [];
  if (!existsSync(BINARIES.patroni)) packages.push("patroni");
  if (!existsSync(BINARIES.etcd)) packages.push("etcd-server");
  if (!existsSync(BINARIES.haproxy)) packages.push("haproxy");
  if (!existsSync(join(PG_BIN_DIR, "postgres"))) packages.push("postgresql-15");
  if (packages.length > 0) {
    missing.push(`missing ${packages.join(", ")}: DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${packages.join(" ")} (.ci/run installs them)`);
  }
  return missing;
}

/** Replaces every `${NAME}` of `template` with `values[NAME]`. @throws when a name has no value. */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\$\{([A-Z0-9_]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for \${${name}} in the template`);
    return value;
  });
}

/** A member of the cluster as Patroni's GET /cluster lists it. */
export interface Member {
  name: string;
  role: string;
  state: string;
  timeline?: number;
  lag?: number | string;
}

/** One Patroni node: its ports, folders and, while it runs, its Patroni process. */
export interface HaNode {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
  configFile: string;
  /** The running Patroni process; undefined while the node is down. */
  patroni?: ChildProcess;
  /** Everything its Patroni wrote (its PostgreSQL logs to the data folder's log/). */
  output: string;
}

/** A time-stamped line of what the cluster helper did (faults, restarts). */
export interface HaEvent { at: number; what: string }

/** Whether process `pid` exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The direct children of `pid`, from /proc (Linux). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** `pid` and all its descendants. */
function tree(pid: number): number[] {
  const all = [pid];
  for (let n = 0; n < all.length; n++) all.push(...childrenOf(all[n]!));
  return all;
}

/** Sends `signal` to each pid, ignoring those already gone. */
function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** The running cluster. */
export class HaCluster {
  readonly events: HaEvent[] = [];
  private etcd?: ChildProcess;
  private haproxy?: ChildProcess;
  private etcdOutput = "";
  private haproxyOutput = "";
  private frozen = new Map<string, number[]>();

  private constructor(
    readonly dir: string,
    readonly nodes: HaNode[],
    readonly etcdPort: number,
    readonly etcdPeerPort: number,
    readonly haproxyPort: number,
    private readonly user: { uid: number; gid: number },
    /** Where each Patroni's output (and PostgreSQL's, which Patroni relays), HAProxy's and the faults are logged; kept after {@link stop}, as evidence. */
    readonly logDir: string,
  ) {}

  /** `postgres://postgres:…@127.0.0.1:<HAProxy port>/<database>`: the leader, through HAProxy. */
  url(database = "postgres"): string {
    return `postgres://postgres:${SUPERUSER_PASSWORD}@127.0.0.1:${this.haproxyPort}/${database}`;
  }

  /** A direct URL to one node's PostgreSQL (not through HAProxy). */
  nodeUrl(node: HaNode, database = "postgres"): string {
    return `postgres://postgres:${SUPERUSER_PASSWORD}@127.0.0.1:${node.pgPort}/${database}`;
  }

  private log(what: string): void {
    this.events.push({ at: Date.now(), what });
    appendFileSync(join(this.logDir, "events.log"), `${new Date().toISOString()} ${what}\n`);
  }

  /**
   * Starts etcd, the three Patroni nodes and HAProxy in a temporary folder, and waits for a leader
   * with a synchronous standby and a second replica, reachable through HAProxy.
   * @throws with the missing packages ({@link haPrerequisites}), or with the processes' output when
   * the cluster is not up within 90 s.
   */
  static async start(): Promise<HaCluster> {
    const missing = haPrerequisites();
    if (missing.length > 0) throw new Error(`the failover test needs Patroni, etcd and HAProxy: ${missing.join("; ")}`);
    const user = {
      uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim()),
      gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim()),
    };
    const dir = mkdtempSync(join(tmpdir(), "ha-cluster-"));
    chmodSync(dir, 0o755);
    chownSync(dir, user.uid, user.gid);
    const ports = await distinctPorts(9);
    const nodes: HaNode[] = [1, 2, 3].map((n, i) => ({
      name: `node${n}`,
      pgPort: ports[i * 2]!,
      restPort: ports[i * 2 + 1]!,
      dataDir: join(dir, `node${n}`, "data"),
      configFile: join(dir, `node${n}`, "patroni.yml"),
      output: "",
    }));
    const cluster = new HaCluster(dir, nodes, ports[6]!, ports[7]!, ports[8]!, user, mkdtempSync(join(tmpdir(), "ha-cluster-logs-")));
    try {
      await cluster.startEtcd();
      cluster.writeConfigs();
      for (const node of nodes) cluster.startPatroni(node);
      await cluster.waitForHealthy(90_000);
      cluster.startHaproxy();
      await cluster.waitForHaproxy(30_000);
    } catch (error) {
      const detail = cluster.diagnostics();
      await cluster.stop();
      throw new Error(`${(error as Error).message}\n${detail}`, { cause: error });
    }
    return cluster;
  }

  private async startEtcd(): Promise<void> {
    const data = join(this.dir, "etcd");
    const client = `http://127.0.0.1:${this.etcdPort}`;
    const peer = `http://127.0.0.1:${this.etcdPeerPort}`;
    this.etcd = spawn(BINARIES.etcd, [
      "--name", "etcd", "--data-dir", data,
      "--listen-client-urls", client, "--advertise-client-urls", client,
      "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
      "--initial-cluster", `etcd=${peer}`, "--initial-cluster-state", "new",
      // Patroni uses the v2 API (ops/ha/patroni.yml.template says why)
      "--enable-v2=true",
    ], { stdio: ["ignore", "pipe", "pipe"] });
    this.etcd.stdout?.on("data", (c: Buffer) => (this.etcdOutput += c.toString()));
    this.etcd.stderr?.on("data", (c: Buffer) => (this.etcdOutput += c.toString()));
    await waitFor("etcd to answer /health", async () => {
      if (this.etcd?.exitCode !== null) throw new Error(`etcd exited: ${this.etcdOutput.slice(-2000)}`);
      const res = await fetch(`${client}/health`, { signal: AbortSignal.timeout(1000) }).then((r) => r.json() as Promise<{ health?: string }>, () => undefined);
      return res?.health === "true" ? true : undefined;
    }, 30_000);
  }

  private writeConfigs(): void {
    const template = readFileSync(join(ROOT, "ops/ha/patroni.yml.template"), "utf8");
    for (const node of this.nodes) {
      const folder = join(this.dir, node.name);
      mkdirSync(folder, { recursive: true });
      chownSync(folder, this.user.uid, this.user.gid);
      writeFileSync(node.configFile, fillTemplate(template, {
        PATRONI_SCOPE: "custody-ha-test",
        NODE_NAME: node.name,
        REST_LISTEN: `127.0.0.1:${node.restPort}`,
        REST_CONNECT: `127.0.0.1:${node.restPort}`,
        ETCD_HOSTS: `127.0.0.1:${this.etcdPort}`,
        TTL: String(HA_TIMING.ttl),
        LOOP_WAIT: String(HA_TIMING.loopWait),
        RETRY_TIMEOUT: String(HA_TIMING.retryTimeout),
        MAX_CONNECTIONS: "200",
        PG_LISTEN: `127.0.0.1:${node.pgPort}`,
        PG_CONNECT: `127.0.0.1:${node.pgPort}`,
        DATA_DIR: node.dataDir,
        PG_BIN_DIR,
        PGPASS_FILE: join(folder, "pgpass"),
        SUPERUSER_PASSWORD,
        REPLICATION_PASSWORD,
        SOCKET_DIR: folder,
        CLIENT_NETWORK: "127.0.0.1/32",
      }));
      chownSync(node.configFile, this.user.uid, this.user.gid);
    }
  }

  private startPatroni(node: HaNode): void {
    const child = spawn(BINARIES.patroni, [node.configFile], {
      uid: this.user.uid,
      gid: this.user.gid,
      cwd: join(this.dir, node.name),
      env: { PATH: "/usr/bin:/bin", HOME: join(this.dir, node.name), LANG: "C.UTF-8" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const record = (c: Buffer) => {
      node.output += c.toString();
      appendFileSync(join(this.logDir, `${node.name}.log`), c);
    };
    child.stdout?.on("data", record);
    child.stderr?.on("data", record);
    node.patroni = child;
  }

  private startHaproxy(): void {
    const template = readFileSync(join(ROOT, "ops/ha/haproxy.cfg.template"), "utf8");
    const values: Record<string, string> = { HAPROXY_BIND: `127.0.0.1:${this.haproxyPort}` };
    this.nodes.forEach((node, i) => {
      values[`NODE${i + 1}_NAME`] = node.name;
      values[`NODE${i + 1}_PG`] = `127.0.0.1:${node.pgPort}`;
      values[`NODE${i + 1}_REST_PORT`] = String(node.restPort);
    });
    const file = join(this.dir, "haproxy.cfg");
    writeFileSync(file, fillTemplate(template, values));
    this.haproxy = spawn(BINARIES.haproxy, ["-f", file, "-db"], { stdio: ["ignore", "pipe", "pipe"] });
    const record = (c: Buffer) => {
      this.haproxyOutput += c.toString();
      appendFileSync(join(this.logDir, "haproxy.log"), `${new Date().toISOString()} ${c.toString()}`);
    };
    this.haproxy.stdout?.on("data", record);
    this.haproxy.stderr?.on("data", record);
  }

  /**
   * Waits until connections through HAProxy reach the primary only: HAProxy starts with every
   * server up until its checks mark the replicas down (fall 2 × inter 1 s), so this waits past
   * that and then for {@link PRIMARY_STREAK} connections in a row to the primary.
   */
  private async waitForHaproxy(timeoutMs: number): Promise<void> {
    const startedAt = Date.now();
    let streak = 0;
    await waitFor("HAProxy to lead to the primary only", async () => {
      if (this.haproxy?.exitCode !== null) throw new Error(`haproxy exited: ${this.haproxyOutput.slice(-2000)}`);
      streak = (await this.isPrimaryThroughProxy()) ? streak + 1 : 0;
      return streak >= PRIMARY_STREAK && Date.now() - startedAt > 3_000 ? true : undefined;
    }, timeoutMs);
  }

  /** Whether a fresh connection through HAProxy answers as a primary (not in recovery). */
  async isPrimaryThroughProxy(): Promise<boolean> {
    const client = new pg.Client({ connectionString: this.url(), connectionTimeoutMillis: 2000, query_timeout: 2000 });
    client.on("error", () => {});
    try {
      await client.connect();
      const { rows } = await client.query<{ r: boolean }>("select pg_is_in_recovery() as r");
      return rows[0]?.r === false;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  }

  /** The nodes whose Patroni runs and is not frozen. */
  live(): HaNode[] {
    return this.nodes.filter((n) => n.patroni !== undefined && !this.frozen.has(n.name));
  }

  /** GET /cluster from the first live node that answers within 1 s; undefined when none does. */
  async members(): Promise<Member[] | undefined> {
    for (const node of this.live()) {
      const body = await fetch(`http://127.0.0.1:${node.restPort}/cluster`, { signal: AbortSignal.timeout(1000) })
        .then((r) => (r.ok ? (r.json() as Promise<{ members: Member[] }>) : undefined), () => undefined);
      if (body) return body.members;
    }
    return undefined;
  }

  /** The live node that answers 200 to GET /primary (holds the leader lock), if any. */
  async leader(): Promise<HaNode | undefined> {
    for (const node of this.live()) {
      const status = await fetch(`http://127.0.0.1:${node.restPort}/primary`, { signal: AbortSignal.timeout(1000) }).then((r) => r.status, () => 0);
      if (status === 200) return node;
    }
    return undefined;
  }

  /** Waits for a leader other than `not` (by name) and returns it. */
  async waitForLeader(timeoutMs: number, not: string[] = []): Promise<HaNode> {
    return waitFor(`a Patroni leader${not.length > 0 ? ` other than ${not.join(", ")}` : ""}`, async () => {
      const leader = await this.leader();
      return leader && !not.includes(leader.name) ? leader : undefined;
    }, timeoutMs);
  }

  /**
   * Waits until `count` nodes run: a leader, a synchronous standby and the rest replicas, all
   * running (streaming), as GET /cluster lists them.
   */
  async waitForHealthy(timeoutMs: number, count = 3): Promise<Member[]> {
    let last: Member[] | undefined;
    return waitFor(`${count} Patroni members running with a leader and a synchronous standby`, async () => {
      for (const node of this.nodes) {
        if (node.patroni && node.patroni.exitCode !== null) throw new Error(`patroni ${node.name} exited with ${node.patroni.exitCode}`);
      }
      const members = await this.members();
      last = members;
      if (!members || members.length < count) return undefined;
      const running = members.filter((m) => m.state === "running" || m.state === "streaming");
      const hasLeader = members.some((m) => m.role === "leader" && m.state === "running");
      const hasSync = members.some((m) => m.role === "sync_standby");
      return running.length >= count && hasLeader && hasSync ? members : undefined;
    }, timeoutMs).catch((error: Error) => {
      throw new Error(`${error.message}; last seen: ${JSON.stringify(last)}\n${this.diagnostics()}`, { cause: error });
    });
  }

  /** The pid of `node`'s postmaster, from its postmaster.pid; undefined when none runs. */
  postmasterPid(node: HaNode): number | undefined {
    try {
      const pid = Number(readFileSync(join(node.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
      return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  /** The pid of the leader's postmaster (through GET /primary), if there is a leader. */
  async leaderPid(): Promise<number | undefined> {
    const leader = await this.leader();
    return leader ? this.postmasterPid(leader) : undefined;
  }

  /** The processes of a node: its Patroni and its PostgreSQL's whole tree. */
  private processesOf(node: HaNode): number[] {
    const pids: number[] = [];
    if (node.patroni?.pid !== undefined) pids.push(...tree(node.patroni.pid));
    const postmaster = this.postmasterPid(node);
    if (postmaster !== undefined) pids.push(...tree(postmaster));
    return [...new Set(pids)];
  }

  /** SIGKILLs `node`'s Patroni and its PostgreSQL (the postmaster and every backend): a node that dies at once. */
  async kill(node: HaNode): Promise<void> {
    const pids = this.processesOf(node);
    signalAll(pids, "SIGKILL");
    this.frozen.delete(node.name);
    const patroni = node.patroni;
    node.patroni = undefined;
    this.log(`SIGKILL ${node.name} (pids ${pids.join(",")})`);
    if (patroni && patroni.exitCode === null && patroni.signalCode === null) await new Promise((r) => patroni.once("exit", r));
    await waitFor(`${node.name}'s processes to be gone`, () => (pids.every((p) => !alive(p) || isZombie(p)) ? true : undefined), 10_000);
  }

  /** SIGSTOPs `node`'s Patroni and its PostgreSQL: a node that hangs (no answer, connections stay open). */
  freeze(node: HaNode): void {
    const pids = this.processesOf(node);
    signalAll(pids, "SIGSTOP");
    this.frozen.set(node.name, pids);
    this.log(`SIGSTOP ${node.name} (pids ${pids.join(",")})`);
  }

  /** SIGCONTs what {@link freeze} stopped. */
  thaw(node: HaNode): void {
    const pids = this.frozen.get(node.name) ?? [];
    signalAll(pids, "SIGCONT");
    this.frozen.delete(node.name);
    this.log(`SIGCONT ${node.name}`);
  }

  /** Starts `node`'s Patroni again on its data folder (it recovers, rewinds and follows the leader). */
  restartNode(node: HaNode): void {
    if (node.patroni) throw new Error(`${node.name} still runs`);
    node.output += `\n--- restarted at ${new Date().toISOString()} ---\n`;
    this.startPatroni(node);
    this.log(`restart ${node.name}`);
  }

  /** The last lines of each process's output, for a failure message. */
  diagnostics(): string {
    const tail = (s: string) => s.split("\n").slice(-25).join("\n");
    return [
      `full logs: ${this.logDir}`,
      `etcd:\n${tail(this.etcdOutput)}`,
      `haproxy:\n${tail(this.haproxyOutput)}`,
      ...this.nodes.map((n) => `${n.name} (pg ${n.pgPort}, rest ${n.restPort}):\n${tail(n.output)}`),
    ].join("\n");
  }

  /** Stops everything (SIGKILL by pid: thawed first) and removes the temporary folder. */
  async stop(): Promise<void> {
    for (const node of this.nodes) {
      if (this.frozen.has(node.name)) this.thaw(node);
      const pids = this.processesOf(node);
      signalAll(pids, "SIGKILL");
      node.patroni = undefined;
    }
    for (const child of [this.haproxy, this.etcd]) if (child?.pid !== undefined && child.exitCode === null) signalAll([child.pid], "SIGKILL");
    await sleep(200);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Whether `pid` is a zombie (exited, not yet reaped by its parent). */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/** `n` distinct free ports. */
async function distinctPorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

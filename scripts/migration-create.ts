/**
 * `npm run migration:create [name]`: writes a TypeScript migration into src/db/migrations with the
 * difference between the entities and the schema the committed migrations build. It migrates a
 * throw-away embedded PostgreSQL first, so the diff holds only what the entities added.
 * Add the new class to src/db/migrations/index.ts afterwards.
 */
import { mkdtempSync, rmSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { initORM } from "../src/db/orm.js";
import { ENTITIES } from "../src/modules/entities.js";

const dir = mkdtempSync(join(tmpdir(), "migration-create-"));
chmodSync(dir, 0o755);
const db = await startEmbeddedPostgres(dir, "migrations", { persistent: false });
try {
  const orm = await initORM(db.url, ENTITIES);
  const result = await orm.migrator.create(resolve(import.meta.dirname, "../src/db/migrations"), false, false, process.argv[2]);
  if (result.diff.up.length === 0) console.log("The entities match the committed migrations: nothing to write.");
  else console.log(`Wrote ${result.fileName}: add it to src/db/migrations/index.ts.`);
  await orm.close(true);
} finally {
  await db.stop();
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Writes the SQL snapshots (docs/architecture.md "SQL snapshots"): every statement a file of `src/`
 * exports — a `PreparedStatement` (`{ name, text }`, src/db/sql.ts) or a constant string of
 * SQL — with its text as PostgreSQL receives it, into `sql/<the file's path under src/>.sql`, so that
 * a reviewer sees each change of a statement in the diff. `.ci/run` runs it and fails when the
 * committed snapshots differ. Statements built at run time (a function of their shape) and SQL
 * written inside a function are not covered.
 *
 * Usage: `npm run sql:snapshots` (writes `sql/`, removing snapshots of files that export none any more).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(root, "src");
const out = join(root, "sql");

/** The TypeScript files under `dir`, sorted. */
function sources(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sources(path));
    else if (entry.name.endsWith(".ts")) files.push(path);
  }
  return files;
}

/** Whether `value` is a `PreparedStatement`. */
const isStatement = (value: unknown): value is { name: string; text: string } =>
  typeof value === "object" && value !== null && typeof (value as { name?: unknown }).name === "string" && typeof (value as { text?: unknown }).text === "string";

/** Whether `value` is a constant string of SQL. */
const isSql = (value: unknown): value is string => typeof value === "string" && /^\s*(select|insert|update|delete|with)\s/i.test(value);

/** The snapshot text of one source file's exported statements, or null when it exports none. */
async function snapshotOf(file: string): Promise<string | null> {
  // Only files that hold SQL are imported: the entry point (src/main.ts) starts the service.
  if (file === join(src, "main.ts") || !/\b(select|insert|update|delete)\b/i.test(readFileSync(file, "utf8"))) return null;
  const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const statements = Object.entries(module)
    .flatMap(([exported, value]): [string, string][] => (isStatement(value) ? [[`${exported}: ${value.name}`, value.text]] : isSql(value) ? [[exported, value]] : []))
    .sort(([a], [b]) => a.localeCompare(b));
  if (statements.length === 0) return null;
  const where = relative(root, file);
  const parts = statements.map(([label, text]) => `-- ${label}\n${text.trimEnd()};\n`);
  return `-- The named statements ${where} exports (written by scripts/sql-snapshots.ts; do not edit).\n\n${parts.join("\n")}`;
}

rmSync(out, { recursive: true, force: true });
let written = 0;
for (const file of sources(src)) {
  const text = await snapshotOf(file);
  if (text === null) continue;
  const target = join(out, relative(src, file).replace(/\.ts$/, ".sql"));
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
  written++;
}
console.log(`sql/: ${written} snapshot files`);
process.exit(0);

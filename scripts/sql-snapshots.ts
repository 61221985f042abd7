/**
 * Writes the SQL snapshots (docs/architecture.md "SQL snapshots"): every statement a file of `src/`
 * exports — a `PreparedStatement` (`{ name, text }`, src/db/sql.ts) or a constant string of
 * SQL — with its text as PostgreSQL receives it, into `sql/<the file's path under src/>.sql`, so that
 * a reviewer sees each change of a statement in the diff. `.ci/run` runs it and fails when the
 * committed snapshots differ. The outbox's statements over each channel's table, built when a
 * channel is first used, are written too, from the service's three channels
 * (`sql/modules/outbox/channels.sql`). The credit wallet's write statements of the shapes not
 * exported (built at run time, one per shape) are not covered.
 *
 * Usage: `npm run sql:snapshots` (writes `sql/`, removing snapshots of files that export none any more).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { OutboxChannel } from "../src/modules/outbox/channel.js";

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
/**
 * The outbox's statements over the service's channels (src/modules/outbox/repository/index.ts
 * `outboxStatements`): the channels are made with settings and secrets that no statement depends
 * on (their policies' numbers are bound values), and nothing is sent.
 */
async function channelSnapshot(): Promise<string> {
  const { outboxStatements } = await import("../src/modules/outbox/repository/index.js");
  const { webhookChannel } = await import("../src/modules/webhooks/channel.js");
  const { creditChannel } = await import("../src/modules/credit/notifications/channel.js");
  const { MailService } = await import("../src/modules/mail/service.js");
  const { SecretBox } = await import("../src/modules/identity/secrets.js");
  const { pino } = await import("pino");
  const logger = pino({ enabled: false });
  const box = new SecretBox("sql-snapshots: no statement depends on this key");
  const settings = { timeoutS: 10, retryBaseS: 30, allowPrivate: false };
  const mail = new MailService(undefined as never, undefined, "snapshots@example.com", logger);
  const channels = [mail.channel, webhookChannel({ box, settings, logger }), creditChannel(box, settings, logger)] as OutboxChannel<unknown>[];
  const parts = channels.flatMap((channel) =>
    outboxStatements(channel).map((statement) => `-- ${channel.name}: ${statement.name}\n${statement.text.trimEnd()};\n`),
  );
  return `-- The outbox's statements over each channel's table (written by scripts/sql-snapshots.ts; do not edit).\n\n${parts.join("\n")}`;
}

const channelsFile = join(out, "modules", "outbox", "channels.sql");
mkdirSync(dirname(channelsFile), { recursive: true });
writeFileSync(channelsFile, await channelSnapshot());
written++;
console.log(`sql/: ${written} snapshot files`);
process.exit(0);

/**
 * The rule of docs/architecture.md "Reaching the database", checked on the sources: outside
 * `src/db/` and the repositories (`repository.ts`, or a file under a `repository/` folder) no file
 * of `src/` holds SQL text; nowhere in `src/` does SQL run through MikroORM's `execute` (which
 * formats values into the text) or Kysely's `CompiledQuery`; and every `PreparedStatement` the
 * repositories export has a name of its own (PostgreSQL prepares each name once per connection:
 * two texts under one name would run the wrong one).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const src = join(root, "src");

/** Every TypeScript file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Whether `file` may hold SQL text: src/db/ or a repository. */
function mayHoldSql(file: string): boolean {
  const path = relative(src, file).split(sep).join("/");
  return path.startsWith("db/") || path.endsWith("/repository.ts") || path === "repository.ts" || path.includes("/repository/");
}

/** `code` without its comments (line and block), strings kept. */
function withoutComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

/** The string and template literals of `code` that read as SQL statements. */
function sqlLiterals(code: string): string[] {
  const literals = code.match(/`(?:\\.|[^`\\])*`|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g) ?? [];
  const statement = /\b(select\b[\s\S]*\bfrom\b|insert\s+into\b|delete\s+from\b|update\s+\w+\s+set\b|pg_advisory_xact_lock)/i;
  return literals.filter((literal) => statement.test(literal));
}

const files = sources(src);

describe("SQL lives in src/db/ and the repositories (docs/architecture.md \"Reaching the database\")", () => {
  it("finds the repositories it guards (the check can see SQL)", () => {
    const repositories = files.filter((f) => mayHoldSql(f) && !relative(src, f).startsWith("db"));
    expect(repositories.length).toBeGreaterThan(10);
    const ledger = readFileSync(join(src, "modules", "ledger", "repository.ts"), "utf8");
    expect(sqlLiterals(withoutComments(ledger)).length).toBeGreaterThan(3);
  });

  it("no other file of src/ holds SQL text", () => {
    const offenders = files
      .filter((f) => !mayHoldSql(f))
      .flatMap((f) => sqlLiterals(withoutComments(readFileSync(f, "utf8"))).map((literal) => `${relative(root, f)}: ${literal.slice(0, 80)}`));
    expect(offenders).toEqual([]);
  });

  it("nothing runs SQL through MikroORM's execute or Kysely's CompiledQuery", () => {
    const offenders = files
      .filter((f) => !relative(src, f).startsWith(join("db", "migrations")))
      .filter((f) => /\.execute(<[^>]*>)?\(|CompiledQuery|numberPlaceholders/.test(withoutComments(readFileSync(f, "utf8"))))
      .map((f) => relative(root, f));
    expect(offenders).toEqual([]);
  });

  it("every exported statement has a name of its own and `$n` placeholders only", async () => {
    const byName = new Map<string, string[]>();
    for (const file of files.filter((f) => mayHoldSql(f) && !relative(src, f).startsWith(join("db", "migrations")))) {
      const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      for (const [exported, value] of Object.entries(module)) {
        if (typeof value !== "object" || value === null) continue;
        const { name, text } = value as { name?: unknown; text?: unknown };
        if (typeof name !== "string" || typeof text !== "string") continue;
        expect(text, `${exported} of ${relative(root, file)}`).not.toMatch(/\s\?(\s|,|\)|::)/);
        const seen = byName.get(name) ?? [];
        if (!seen.includes(text)) seen.push(text);
        byName.set(name, seen);
      }
    }
    expect(byName.size).toBeGreaterThan(50);
    expect([...byName].filter(([, texts]) => texts.length > 1).map(([name]) => name)).toEqual([]);
  });
});

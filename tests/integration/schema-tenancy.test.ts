/**
 * docs/sharding.md "Every table" says, for every table of the schema, how it would be sharded by
 * customer (distributed, reference or local) and which column leads to the customer. After
 * migrating a fresh database this test holds the page to the schema: every table of `public` has a
 * row (a new table fails here until the page says how it shards), every row names a table that
 * exists, and every distributed table's tenant column is a column of that table.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initORM, type MikroORM } from "../../src/db/orm.js";
import { ENTITIES } from "../../src/modules/entities.js";
import { createTestDatabase } from "../support/app.js";

/** One row of the page's table. */
interface TenancyRow {
  table: string;
  kind: "distributed" | "reference" | "local";
  /** The column leading to the customer, or null for `—`. */
  tenantColumn: string | null;
}

const PAGE = resolve(import.meta.dirname, "../../docs/sharding.md");
const HEADER = /^\|\s*table\s*\|\s*kind\s*\|\s*tenant column\s*\|\s*notes\s*\|\s*$/;

/** A cell's text without the backticks of code spans. */
const cell = (text: string): string => text.trim().replace(/^`(.*)`$/, "$1").trim();

/**
 * The rows of the one markdown table of `markdown` whose header is `table | kind | tenant column |
 * notes`. @throws Error when there is no such table, or it is not the only one, or a row is
 * malformed (wrong cell count, unknown kind, a table listed twice).
 */
function parseTenancyTable(markdown: string): TenancyRow[] {
  const lines = markdown.split("\n");
  const headers = lines.flatMap((line, i) => (HEADER.test(line) ? [i] : []));
  if (headers.length !== 1) throw new Error(`docs/sharding.md: expected one "table | kind | tenant column | notes" table, found ${headers.length}`);
  const rows: TenancyRow[] = [];
  for (let i = (headers[0] as number) + 2; i < lines.length && (lines[i] as string).trim().startsWith("|"); i++) {
    const line = (lines[i] as string).trim();
    // Split on the pipes that separate cells (none of the cells holds a pipe of its own).
    const cells = line.slice(1, line.endsWith("|") ? -1 : undefined).split("|");
    if (cells.length !== 4) throw new Error(`docs/sharding.md: row with ${cells.length} cells: ${line}`);
    const [table, kind, tenant] = cells.map(cell) as [string, string, string];
    if (kind !== "distributed" && kind !== "reference" && kind !== "local") throw new Error(`docs/sharding.md: unknown kind "${kind}" for ${table}`);
    if (rows.some((r) => r.table === table)) throw new Error(`docs/sharding.md: ${table} listed twice`);
    rows.push({ table, kind, tenantColumn: tenant === "—" || tenant === "-" || tenant === "" ? null : tenant });
  }
  return rows;
}

let orm: MikroORM;
let drop: () => Promise<void>;
let page: TenancyRow[];
let columns: Map<string, Set<string>>;

beforeAll(async () => {
  page = parseTenancyTable(readFileSync(PAGE, "utf8"));
  const db = await createTestDatabase();
  drop = db.drop;
  orm = await initORM(db.url, ENTITIES);
  const rows = await orm.em.getConnection().execute<{ table_name: string; column_name: string }[]>(
    `select c.table_name, c.column_name
       from information_schema.columns c
       join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      where c.table_schema = 'public' and t.table_type = 'BASE TABLE'`,
  );
  columns = new Map();
  for (const r of rows) {
    const set = columns.get(r.table_name) ?? new Set<string>();
    set.add(r.column_name);
    columns.set(r.table_name, set);
  }
});
afterAll(async () => {
  await orm.close(true);
  await drop();
});

describe("docs/sharding.md against the migrated schema", () => {
  it("is migrated and the page has a table of rows", async () => {
    expect(await orm.migrator.getPending()).toEqual([]);
    // The ORM's tables and the migration-only ones (src/db/orm.ts FOREIGN_TABLES) are all there.
    for (const table of ["customer", "wallet", "credit_wallet", "agenda_jobs", "rate_limit", "mikro_orm_migrations"]) expect(columns.has(table), table).toBe(true);
    expect(page.length).toBeGreaterThan(0);
  });

  it("lists every table of the public schema", () => {
    const listed = new Set(page.map((r) => r.table));
    const unlisted = [...columns.keys()].filter((t) => !listed.has(t)).sort();
    expect(unlisted, "tables with no row in docs/sharding.md \"Every table\"").toEqual([]);
  });

  it("lists no table the schema lacks", () => {
    const missing = page.map((r) => r.table).filter((t) => !columns.has(t));
    expect(missing, "rows of docs/sharding.md naming no table of the schema").toEqual([]);
  });

  it("gives every distributed table a tenant column it has", () => {
    const wrong = page
      .filter((r) => r.kind === "distributed" && r.tenantColumn !== null && !columns.get(r.table)?.has(r.tenantColumn))
      .map((r) => `${r.table}.${r.tenantColumn as string}`);
    expect(wrong, "distributed tables lacking the tenant column docs/sharding.md gives").toEqual([]);
  });

  it("names no tenant column for reference and local tables", () => {
    expect(page.filter((r) => r.kind !== "distributed" && r.tenantColumn !== null).map((r) => r.table)).toEqual([]);
  });
});

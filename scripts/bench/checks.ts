/**
 * The benchmark's checks of what the load wrote (scripts/bench.ts): rows per table (one withdrawal
 * pair, or one transfer, of the service and of the baseline must write the same), the ledger's
 * invariants as `LedgerService.verify` states them, and `npm run ledger:check` itself
 * (scripts/ledger-check.ts) on the benchmark's database.
 */
import { execFile } from "node:child_process";
import pg from "pg";
import { ROOT } from "./processes.js";

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** Rows of each of `tables` (trusted names) in the database at `url`. */
export function tableCounts(url: string, tables: readonly string[]): Promise<Record<string, number>> {
  return withClient(url, async (client) => {
    const out: Record<string, number> = {};
    for (const t of tables) out[t] = Number((await client.query<{ n: string }>(`select count(*) as n from ${t}`)).rows[0]?.n);
    return out;
  });
}

/**
 * Rows that `write` adds to each of `tables`: counted before and after it.
 * @returns the difference per table, and what `write` returned.
 */
export async function rowsWrittenBy<T>(url: string, tables: readonly string[], write: () => Promise<T>): Promise<{ rows: Record<string, number>; value: T }> {
  const before = await tableCounts(url, tables);
  const value = await write();
  const after = await tableCounts(url, tables);
  return { rows: Object.fromEntries(tables.map((t) => [t, (after[t] ?? 0) - (before[t] ?? 0)])), value };
}

/**
 * The ledger's invariants (src/modules/ledger/service.ts `LedgerService.verify`): entries and
 * currencies whose postings do not sum to zero, accounts whose cache is not what their postings
 * give (the wallet buckets `available` and `held` cache the sum; external, liquidity and fees
 * accounts cache nothing), wallet buckets below zero by their cache or their postings.
 * @returns one line per kind of problem found; empty when the ledger is consistent.
 */
export function ledgerProblems(url: string): Promise<string[]> {
  return withClient(url, async (client) => {
    const count = async (sql: string): Promise<number> => Number((await client.query<{ n: string }>(`select count(*) as n from (${sql}) x`)).rows[0]?.n);
    const checks: [string, string][] = [
      ["unbalanced journal entries", `select entry_id from ledger_posting group by entry_id, currency having sum(amount) <> 0`],
      ["unbalanced currencies", `select currency from ledger_posting group by currency having sum(amount) <> 0`],
      [
        "caches differing from their postings",
        `select a.id from ledger_account a left join (select account_id, sum(amount) as total from ledger_posting group by account_id) s on s.account_id = a.id
          where a.balance is distinct from (case when a.bucket in ('available', 'held') then coalesce(s.total, 0) else null end)`,
      ],
      [
        "negative wallet buckets",
        `select a.id from ledger_account a left join (select account_id, sum(amount) as total from ledger_posting group by account_id) s on s.account_id = a.id
          where a.bucket in ('available', 'held') and (a.balance < 0 or coalesce(s.total, 0) < 0)`,
      ],
    ];
    const problems: string[] = [];
    for (const [what, sql] of checks) {
      const n = await count(sql);
      if (n > 0) problems.push(`${n} ${what}`);
    }
    return problems;
  });
}

/**
 * `npm run ledger:check` (scripts/ledger-check.ts, through tsx with this Node) on the database of
 * `env.DATABASE_URL`. @returns whether it exited 0, and its last line ("The ledger is consistent." or
 * not; when it failed, its first error line).
 */
export function runLedgerCheck(env: Record<string, string>): Promise<{ clean: boolean; verdict: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "scripts/ledger-check.ts"],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", TMPDIR: process.env.TMPDIR ?? "/tmp", ...env }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const lines = `${stdout}\n${stderr}`.split("\n").map((l) => l.trim()).filter((l) => l !== "");
        const verdict = error === null ? lines[lines.length - 1] : (lines.find((l) => /^(\w*Error:|The ledger)/.test(l)) ?? lines[0]);
        done({ clean: error === null, verdict: verdict ?? `no output (${error?.message ?? "exit 0"})` });
      },
    );
  });
}

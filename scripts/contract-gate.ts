/**
 * Breaking-change gate (`npm run contract:gate`, run by .ci/run after the Redocly lint).
 *
 * Diffs each emitted document (generated/openapi/{platform,credit}.openapi.yaml) against its copy
 * of the last release (spec/released/, whose version is spec/released/VERSION) with optic's
 * breaking-change checks (`optic diff <released> <current> --check`, offline, telemetry off).
 * Non-breaking changes pass. A breaking change passes only when CHANGELOG.md names it:
 *
 * - under a `### Breaking` heading of a version section newer than spec/released/VERSION
 *   (a `## [x.y.z]` heading above the released version's; `## [Unreleased]` does not count);
 * - naming it means writing, in backticks, either the operation optic reports it on
 *   (`` `POST /v2/wallet/credits/{walletId}/block` ``) or, for a change inside an operation that
 *   is still there, the name optic quotes in its message (`` `availableAmount` `` for "cannot
 *   remove response property 'availableAmount'"; one mention covers every operation it affects).
 *   A removed operation must be named by its operation.
 *
 * Usage: tsx scripts/contract-gate.ts [--root <dir>] [--cache <dir>]  (root: a tree with
 * spec/released/, generated/openapi/ and CHANGELOG.md; default the repository. cache: a folder
 * where optic's result for a pair of documents is kept by their content and reused by later runs
 * on the same pair, for callers that run the gate on several trees sharing documents, such as
 * tests/integration/contract-gate.test.ts; optic takes seconds per document). Exit 0 passes, 1
 * fails (each unnamed breaking change is printed), 2 on a missing file or an optic failure.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const DOCUMENTS = ["platform", "credit"] as const;

/** One breaking change optic reports: the operation (or "(document)") and the failed check's message. */
export interface Finding {
  document: string;
  operation: string;
  /** `removed` when optic reports the operation as removed. */
  operationChange: string;
  rule: string;
  message: string;
}

/** Strips ANSI colour codes. */
function plain(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, "");
}

/**
 * The failed checks of `optic diff --check` text output, grouped under the operation lines
 * (`x METHOD /path: <change>`). For a removed operation only the removal itself is kept (optic
 * also lists every response and property of it).
 */
export function parseOpticOutput(document: string, output: string): Finding[] {
  const findings: Finding[] = [];
  let operation = "(document)";
  let operationChange = "";
  for (const raw of plain(output).split("\n")) {
    const op = /^[x✓] ((?:GET|PUT|POST|DELETE|PATCH|HEAD|OPTIONS|TRACE) \S+):\s*(\S*)/.exec(raw);
    if (op) {
      operation = op[1]!;
      operationChange = op[2] ?? "";
      continue;
    }
    const failed = /^\s*x \[([^\]]+)\] (.*?)\s*$/.exec(raw);
    if (!failed) continue;
    if (operationChange === "removed" && findings.some((f) => f.document === document && f.operation === operation)) continue;
    findings.push({ document, operation, operationChange, rule: failed[1]!, message: failed[2]! });
  }
  return findings;
}

/** The name a check's message quotes (`'availableAmount'`), if any. */
export function quotedName(message: string): string | undefined {
  return /'([^']+)'/.exec(message)?.[1];
}

/** Compares dotted numeric versions (1.10.0 > 1.9.0); non-numeric parts compare as 0. */
function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/).map((p) => Number.parseInt(p, 10) || 0);
  const pb = b.split(/[.-]/).map((p) => Number.parseInt(p, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The text under `### Breaking` of every version section above the released version's heading
 * and newer than it. Throws when the released version has no heading.
 */
export function breakingNotes(changelog: string, releasedVersion: string): { versions: string[]; text: string } {
  const lines = changelog.split("\n");
  const versions: string[] = [];
  const notes: string[] = [];
  let current: string | undefined; // the newer version section we are in
  let inBreaking = false;
  for (const line of lines) {
    const heading = /^## \[([^\]]+)\]/.exec(line);
    if (heading) {
      const version = heading[1]!;
      if (version === releasedVersion) return { versions, text: notes.join("\n") };
      inBreaking = false;
      current = /^unreleased$/i.test(version) || compareVersions(version, releasedVersion) <= 0 ? undefined : version;
      if (current) versions.push(current);
      continue;
    }
    if (/^##? /.test(line)) {
      current = undefined;
      inBreaking = false;
      continue;
    }
    if (/^### /.test(line)) {
      inBreaking = current !== undefined && /^### Breaking\b/i.test(line);
      continue;
    }
    if (inBreaking) notes.push(line);
  }
  throw new Error(`CHANGELOG.md has no "## [${releasedVersion}]" section (spec/released/VERSION)`);
}

/** Whether the Breaking notes name a finding (see the rule at the top of this file). */
export function isNamed(finding: Finding, notes: string): boolean {
  if (notes.includes(`\`${finding.operation}\``)) return true;
  if (finding.operationChange === "removed" || finding.operation === "(document)") return false;
  const name = quotedName(finding.message);
  return name !== undefined && notes.includes(`\`${name}\``);
}

/** What one `optic diff --check` printed, and its exit code. */
interface OpticResult {
  code: number;
  output: string;
}

/**
 * `optic diff <released> <current> --check`, or its result kept in `cacheDir` from an earlier run
 * on documents of the same content (the key is the SHA-256 of both). Only a finished check is
 * kept (exit 0: passed, 1: failed checks), not a crash. A result is written to a temporary name
 * and renamed, so a concurrent run reads a whole one or none.
 */
async function opticDiff(released: string, current: string, cacheDir: string | undefined): Promise<OpticResult> {
  if (!cacheDir) return runOptic(released, current);
  const hash = createHash("sha256").update(readFileSync(released)).update("\0").update(readFileSync(current)).digest("hex");
  const entry = join(cacheDir, `${hash}.json`);
  if (existsSync(entry)) return JSON.parse(readFileSync(entry, "utf8")) as OpticResult;
  const result = await runOptic(released, current);
  if (result.code === 0 || result.code === 1) {
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(`${entry}.${process.pid}`, JSON.stringify(result));
    renameSync(`${entry}.${process.pid}`, entry);
  }
  return result;
}

/**
 * Runs optic's breaking-change checks on two documents; the findings ([] when they pass).
 * `cacheDir`: see {@link opticDiff}.
 */
export async function diffDocument(document: string, released: string, current: string, cacheDir?: string): Promise<Finding[]> {
  if (readFileSync(released, "utf8") === readFileSync(current, "utf8")) return [];
  const { code, output } = await opticDiff(released, current, cacheDir);
  if (code === 0) return [];
  const findings = parseOpticOutput(document, output);
  if (findings.length === 0) throw new Error(`optic diff exited ${code} without a failed check:\n${output}`);
  return findings;
}

/** One `optic diff <released> <current> --check`, offline, telemetry off: its exit code and report. */
async function runOptic(released: string, current: string): Promise<OpticResult> {
  const optic = join(dirname(createRequire(import.meta.url).resolve("@useoptic/optic/package.json")), "build", "index.js");
  // optic's logger reads LOG_LEVEL too: the service's `silent` would hide its whole report
  const env = { ...process.env, OPTIC_TELEMETRY_LEVEL: "off", NO_COLOR: "1", FORCE_COLOR: "0", CI: "true", LOG_LEVEL: "info" };
  // optic ends with process.exit, which can cut off a piped stdout: its report goes to a file
  const outDir = mkdtempSync(join(tmpdir(), "contract-gate-"));
  const outFile = join(outDir, "optic.txt");
  const fd = openSync(outFile, "w");
  let code: number;
  try {
    code = await new Promise<number>((done, fail) => {
      const child = spawn(process.execPath, [optic, "diff", released, current, "--check"], { env, cwd: dirname(current), stdio: ["ignore", fd, fd] });
      child.on("error", fail);
      child.on("exit", (exitCode, signal) => done(exitCode ?? (signal ? 2 : 0)));
    });
  } finally {
    closeSync(fd);
  }
  const output = readFileSync(outFile, "utf8");
  rmSync(outDir, { recursive: true, force: true });
  return { code, output };
}

/** The gate on a tree: what it prints, and whether it passes. `cacheDir`: see {@link opticDiff}. */
export async function runGate(root: string, cacheDir?: string): Promise<{ ok: boolean; report: string[] }> {
  const releasedVersion = readFileSync(join(root, "spec", "released", "VERSION"), "utf8").trim();
  const changelog = readFileSync(join(root, "CHANGELOG.md"), "utf8");
  const { versions, text } = breakingNotes(changelog, releasedVersion);
  const report: string[] = [];
  let ok = true;
  for (const document of DOCUMENTS) {
    const released = join(root, "spec", "released", `${document}.openapi.yaml`);
    const current = join(root, "generated", "openapi", `${document}.openapi.yaml`);
    const findings = await diffDocument(document, released, current, cacheDir);
    const unnamed = findings.filter((f) => !isNamed(f, text));
    if (findings.length === 0) report.push(`${document}: no breaking change against ${releasedVersion}`);
    else if (unnamed.length === 0) report.push(`${document}: ${findings.length} breaking change(s), all named under ### Breaking of ${versions.join(", ")}`);
    else {
      ok = false;
      report.push(`${document}: breaking change(s) against ${releasedVersion} not named under "### Breaking" of a newer CHANGELOG.md version:`);
      const seen = new Set<string>();
      for (const f of unnamed) {
        const name = quotedName(f.message);
        const hint = f.operationChange === "removed" || !name ? `\`${f.operation}\`` : `\`${f.operation}\` or \`${name}\``;
        const line = `  ${f.operation}${f.operationChange ? ` (${f.operationChange})` : ""}: [${f.rule}] ${f.message} — name ${hint}`;
        if (!seen.has(line)) report.push(line);
        seen.add(line);
      }
    }
  }
  if (!ok) {
    report.push(
      `Either undo the change, or add a version section newer than ${releasedVersion} to CHANGELOG.md (## [x.y.z] - date, above ## [${releasedVersion}]) with a "### Breaking" list naming each change as shown (docs/contract.md "The breaking-change gate" and "Releasing").`,
    );
  }
  return { ok, report };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const option = (name: string): string | undefined => {
    const index = process.argv.indexOf(name);
    return index > 0 && process.argv[index + 1] ? resolve(process.argv[index + 1]!) : undefined;
  };
  const root = option("--root") ?? fileURLToPath(new URL("..", import.meta.url));
  try {
    const { ok, report } = await runGate(root, option("--cache"));
    for (const line of report) (ok ? console.log : console.error)(line);
    console.log(ok ? "contract gate: passed" : "contract gate: FAILED");
    process.exit(ok ? 0 : 1);
  } catch (error) {
    console.error(`contract gate: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  }
}

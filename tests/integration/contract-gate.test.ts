/**
 * The breaking-change gate (scripts/contract-gate.ts, `npm run contract:gate`): optic's checks of
 * each emitted document against spec/released/, and the CHANGELOG rule (a breaking change must be
 * named under `### Breaking` of a version newer than spec/released/VERSION). Run on temporary
 * copies of the tree: a removed operation and a removed required response field fail the gate,
 * naming both; the same with a new version's Breaking list passes; an additive change passes;
 * the repository as it is passes. Each optic diff takes seconds (many more on a busy machine), so
 * the four gate runs happen once, one after the other, in a `beforeAll` under a whole-run time
 * limit (tests/contract/whole-run.ts, docs/testing.md), sharing optic's results through the gate's
 * `--cache`: the platform document, the same in every tree, is diffed once, and so is each credit
 * document. The `it`s assert on the runs.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse, stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { breakingNotes, isNamed, parseOpticOutput, type Finding } from "../../scripts/contract-gate.js";
import { WHOLE_RUN_MS } from "../contract/whole-run.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const GATE = join(ROOT, "scripts", "contract-gate.ts");
const TSX = createRequire(import.meta.url).resolve("tsx/cli");
const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A copy of what the gate reads: spec/released/, the emitted YAML documents, CHANGELOG.md. */
function treeCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), "contract-gate-"));
  dirs.push(dir);
  cpSync(join(ROOT, "spec", "released"), join(dir, "spec", "released"), { recursive: true });
  mkdirSync(join(dir, "generated", "openapi"), { recursive: true });
  for (const name of ["platform", "credit"]) cpSync(join(ROOT, "generated", "openapi", `${name}.openapi.yaml`), join(dir, "generated", "openapi", `${name}.openapi.yaml`));
  cpSync(join(ROOT, "CHANGELOG.md"), join(dir, "CHANGELOG.md"));
  return dir;
}

type Doc = { paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, { required?: string[]; properties: Record<string, unknown> }> } };
function editCredit(dir: string, edit: (doc: Doc) => void): void {
  const file = join(dir, "generated", "openapi", "credit.openapi.yaml");
  const doc = parse(readFileSync(file, "utf8")) as Doc;
  edit(doc);
  writeFileSync(file, stringify(doc));
}

/** Removes the Block operation and the required `availableAmount` of every credit wallet answer. */
function breakCredit(doc: Doc): void {
  delete doc.paths["/v2/wallet/credits/{walletId}/block"];
  const wallet = doc.components.schemas.CreditWallet!;
  wallet.required = wallet.required!.filter((name) => name !== "availableAmount");
  delete wallet.properties.availableAmount;
}

function addNewVersion(dir: string, section: string): void {
  const file = join(dir, "CHANGELOG.md");
  writeFileSync(file, readFileSync(file, "utf8").replace("## [0.1.0]", `${section}\n## [0.1.0]`));
}

/** Where the gate runs of this file keep optic's results (`--cache`). */
const OPTIC_CACHE = mkdtempSync(join(tmpdir(), "contract-gate-cache-"));
dirs.push(OPTIC_CACHE);

/** `tsx scripts/contract-gate.ts [--root dir] --cache <this file's cache>`: exit code and output. */
function gate(root?: string): Promise<{ code: number; output: string }> {
  const args = [TSX, GATE, ...(root ? ["--root", root] : []), "--cache", OPTIC_CACHE];
  return new Promise((done) => {
    execFile(process.execPath, args, { cwd: ROOT, env: { ...process.env, OPTIC_TELEMETRY_LEVEL: "off" } }, (error, stdout, stderr) =>
      done({ code: error ? (typeof error.code === "number" ? error.code : 2) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

/** A gate run: exit code and output. */
type GateRun = Awaited<ReturnType<typeof gate>>;

describe("contract gate on temporary copies of the tree", () => {
  /** The four gate runs, in the order they ran. */
  let runs: { repository: GateRun; broken: GateRun; brokenAndNamed: GateRun; additive: GateRun };

  beforeAll(async () => {
    // The repository first: its run diffs both documents and leaves their results in the cache.
    const repository = await gate();

    const unnamedDir = treeCopy();
    editCredit(unnamedDir, breakCredit);
    // a Breaking list in [Unreleased] does not count
    const changelog = join(unnamedDir, "CHANGELOG.md");
    writeFileSync(changelog, readFileSync(changelog, "utf8").replace("## [Unreleased]\n", "## [Unreleased]\n\n### Breaking\n\n- `POST /v2/wallet/credits/{walletId}/block` and `availableAmount` removed.\n"));
    const broken = await gate(unnamedDir);

    const namedDir = treeCopy();
    editCredit(namedDir, breakCredit);
    addNewVersion(
      namedDir,
      "## [0.2.0] - 2026-12-01\n\n### Breaking\n\n- `POST /v2/wallet/credits/{walletId}/block` is gone.\n- Credit wallets no longer carry `availableAmount`.\n",
    );
    const brokenAndNamed = await gate(namedDir);

    const additiveDir = treeCopy();
    editCredit(additiveDir, (doc) => {
      doc.components.schemas.CreditWallet!.properties.nickname = { type: "string", description: "A name the tenant gives the wallet." };
      const statements = structuredClone(doc.paths["/v2/wallet/credits/{walletId}/statements"]!) as { get: { operationId: string } };
      statements.get.operationId = "listCreditWalletStatementsAgain";
      doc.paths["/v2/wallet/credits/{walletId}/statements-again"] = statements;
    });
    const additive = await gate(additiveDir);
    runs = { repository, broken, brokenAndNamed, additive };
  }, WHOLE_RUN_MS);

  it("the repository as it is passes (its documents are the released ones or additive changes of them)", () => {
    const result = runs.repository;
    expect(result.output).toContain("contract gate: passed");
    expect(result.code).toBe(0);
    // As long as the other cases: with changes since the release, optic diffs every operation.
  });

  it("fails on a removed operation and a removed required response field, naming both", () => {
    const result = runs.broken;
    expect(result.code).toBe(1);
    expect(result.output).toContain("contract gate: FAILED");
    expect(result.output).toMatch(/POST \/v2\/wallet\/credits\/\{walletId\}\/block \(removed\): \[prevent operation removal\]/);
    expect(result.output).toMatch(/GET \/v2\/wallet\/credits\/\{walletId\}: \[prevent removing response property\] cannot remove response property 'availableAmount'/);
    expect(result.output).not.toMatch(/^platform: breaking/m);
  });

  it("the same change passes with a new version whose Breaking list names both", () => {
    const result = runs.brokenAndNamed;
    expect(result.output).toMatch(/credit: \d+ breaking change\(s\), all named under ### Breaking of 0\.2\.0/);
    expect(result.code).toBe(0);
  });

  it("an additive change passes without a CHANGELOG entry: an optional response field and a new operation", () => {
    const result = runs.additive;
    expect(result.output).toContain("credit: no breaking change against 0.1.0");
    expect(result.code).toBe(0);
  });

  it("shares optic's results between the runs: one optic diff per distinct pair of documents", () => {
    // Each repository document that differs from its release (the platform one is the same in every
    // tree), then the broken credit document (two trees) and the one with the additions.
    const changed = ["platform", "credit"].filter(
      (name) => readFileSync(join(ROOT, "spec", "released", `${name}.openapi.yaml`), "utf8") !== readFileSync(join(ROOT, "generated", "openapi", `${name}.openapi.yaml`), "utf8"),
    );
    expect(readdirSync(OPTIC_CACHE).filter((name) => name.endsWith(".json"))).toHaveLength(changed.length + 2);
  });
});

describe("contract gate: the CHANGELOG rule", () => {
  const changelog = [
    "# Changelog",
    "## [Unreleased]",
    "### Breaking",
    "- `GET /a` (unreleased: does not count)",
    "## [0.3.0] - 2026-12-02",
    "### Breaking",
    "- `GET /b`",
    "### Added",
    "- `GET /c` (not under Breaking)",
    "## [0.2.0] - 2026-12-01",
    "### Breaking",
    "- `held`",
    "## [0.1.0] - 2026-11-23",
    "### Breaking",
    "- `GET /d` (the released version itself)",
  ].join("\n");
  const finding = (operation: string, message: string, operationChange = ""): Finding => ({
    document: "platform",
    operation,
    operationChange,
    rule: "r",
    message,
  });

  it("reads the Breaking lists of the versions newer than the released one only", () => {
    const { versions, text } = breakingNotes(changelog, "0.1.0");
    expect(versions).toEqual(["0.3.0", "0.2.0"]);
    expect(text).toContain("`GET /b`");
    expect(text).toContain("`held`");
    expect(text).not.toContain("GET /a");
    expect(text).not.toContain("GET /c");
    expect(text).not.toContain("GET /d");
    expect(breakingNotes(changelog, "0.2.0").versions).toEqual(["0.3.0"]);
    expect(() => breakingNotes(changelog, "0.9.0")).toThrow(/no "## \[0\.9\.0\]" section/);
  });

  it("a change is named by its operation, or inside an existing operation by the quoted name; a removed operation by its operation only", () => {
    const { text } = breakingNotes(changelog, "0.1.0");
    expect(isNamed(finding("GET /b", "cannot remove response property 'x'"), text)).toBe(true);
    expect(isNamed(finding("GET /z", "cannot remove response property 'held'"), text)).toBe(true);
    expect(isNamed(finding("GET /z", "cannot remove response property 'other'"), text)).toBe(false);
    expect(isNamed(finding("GET /held", "cannot remove an operation. 'held'", "removed"), text)).toBe(false);
    expect(isNamed(finding("GET /c", "cannot remove response property 'y'"), text)).toBe(false);
  });

  it("parses optic's check output: one finding for a removed operation, one per failed check elsewhere", () => {
    const output = [
      "x Credit Core API a.yaml",
      "x POST /v/block: removed",
      "  x [prevent operation removal] cannot remove an operation. This is a breaking change.",
      "  - response 200: ",
      "    x [prevent response status code removal] must not remove response status code 200. This is a breaking change.",
      "x GET /v/wallet: ",
      "  - response 200: ",
      "        x [prevent removing response property] cannot remove response property 'availableAmount'. This is a breaking change.",
    ].join("\n");
    expect(parseOpticOutput("credit", output)).toEqual([
      { document: "credit", operation: "POST /v/block", operationChange: "removed", rule: "prevent operation removal", message: "cannot remove an operation. This is a breaking change." },
      {
        document: "credit",
        operation: "GET /v/wallet",
        operationChange: "",
        rule: "prevent removing response property",
        message: "cannot remove response property 'availableAmount'. This is a breaking change.",
      },
    ]);
  });
});

/**
 * The layers of src are a lint rule (eslint.config.js): main → app → http → modules → providers →
 * domain, with db and jobs as infrastructure the modules reach through their ports only. Snippets
 * planted at paths of each zone are linted through ESLint's Node API with the repository's own
 * configuration: an upward import is an error of `npm run lint`, a downward one passes. So are the
 * size bounds of src (400 lines a file, 80 a function).
 */
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { ESLint, type Linter } from "eslint";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const eslint = new ESLint({ cwd: root });

/** The messages of `code` linted as the file `filePath` (repository-relative; it need not exist). */
async function lint(filePath: string, code: string): Promise<Linter.LintMessage[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result?.messages ?? [];
}

/** The messages of the layer rule only. */
async function layerErrors(filePath: string, code: string): Promise<Linter.LintMessage[]> {
  return (await lint(filePath, code)).filter((m) => m.ruleId === "no-restricted-imports" || m.ruleId === "no-restricted-syntax");
}

describe("the layer rule of src", () => {
  it("refuses an import of http from the domain", async () => {
    const errors = await layerErrors("src/domain/planted.ts", `import type { Surface } from "../http/envelope.js";\nexport type Planted = Surface;\n`);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ ruleId: "no-restricted-imports", severity: 2, line: 1 });
    expect(errors[0]?.message).toContain("src/domain may import");
  });

  it("refuses an import of http from a module, at any depth of the modules folder", async () => {
    const code = `import { errorBody } from "../../http/envelope.js";\nexport const planted = errorBody;\n`;
    const errors = await layerErrors("src/modules/x/planted.ts", code);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ ruleId: "no-restricted-imports", severity: 2 });
    expect(errors[0]?.message).toContain("src/modules may import");
    const deeper = await layerErrors("src/modules/x/y/planted.ts", code.replace("../../http", "../../../http"));
    expect(deeper.map((m) => m.ruleId)).toEqual(["no-restricted-imports"]);
  });

  it("refuses the other upward and sideways imports the layers forbid", async () => {
    const cases: [file: string, specifier: string][] = [
      ["src/domain/planted.ts", "../../generated/types/platform.js"], // contract types stay out of the domain
      ["src/domain/credit/planted.ts", "../../providers/provider.js"],
      ["src/providers/planted.ts", "../modules/identity/entities.js"],
      ["src/providers/planted.ts", "../../generated/types/platform.js"],
      ["src/db/planted.ts", "../modules/users/entities.js"], // the entity list is assembled outside db
      ["src/db/migrations/planted.ts", "../../http/envelope.js"],
      ["src/jobs/planted.ts", "../modules/webhooks/service.js"],
      ["src/modules/x/planted.ts", "../../jobs/scheduler.js"], // the Agenda implementation, not the port
      ["src/modules/x/planted.ts", "../../db/orm.js"],
      ["src/modules/x/planted.ts", "../../config.js"],
      ["src/modules/x/planted.ts", "../../app.js"],
      ["src/http/planted.ts", "../app.js"],
      ["src/http/platform/planted.ts", "../../main.js"],
      ["src/app.ts", "./main.js"],
    ];
    for (const [file, specifier] of cases) {
      const errors = await layerErrors(file, `export * from "${specifier}";\n`);
      expect(errors.map((m) => m.ruleId), `${file} → ${specifier}`).toEqual(["no-restricted-imports"]);
    }
  });

  it("refuses a dynamic import and a type import() the same way", async () => {
    const errors = await layerErrors(
      "src/modules/x/planted.ts",
      `export const load = () => import("../../http/envelope.js");\nexport type Planted = typeof import("../../app.js");\n`,
    );
    expect(errors.map((m) => [m.ruleId, m.line])).toEqual([
      ["no-restricted-syntax", 1],
      ["no-restricted-syntax", 2],
    ]);
  });

  it("lets each layer import downwards and the modules use the infrastructure's ports", async () => {
    const legal: [file: string, specifiers: string[]][] = [
      ["src/domain/planted.ts", ["./errors.js", "./credit/index.js"]],
      ["src/domain/credit/planted.ts", ["../errors.js", "./events.js"]],
      ["src/providers/planted.ts", ["../domain/errors.js", "./chains.js", "../db/sql.js"]],
      ["src/db/planted.ts", ["../domain/text.js", "./sql.js"]],
      ["src/db/migrations/planted.ts", ["../../domain/text.js"]],
      ["src/jobs/planted.ts", ["./port.js", "../db/sql.js", "../domain/ids.js"]],
      [
        "src/modules/x/planted.ts",
        [
          "../users/service.js",
          "../../providers/provider.js",
          "../../domain/paging.js",
          "../../db/sql.js",
          "../../db/secret-file.js",
          "../../jobs/port.js",
          "../../../generated/types/platform.js",
        ],
      ],
      ["src/modules/x/y/planted.ts", ["../../../domain/errors.js", "../../other/service.js", "../../../../generated/types/credit.js"]],
      ["src/http/platform/planted.ts", ["../envelope.js", "../../modules/users/service.js", "../../db/unavailable.js", "../../config.js", "../../../generated/types/platform.js"]],
      ["src/app.ts", ["./http/surface.js", "./modules/entities.js", "./db/orm.js", "./jobs/scheduler.js", "./config.js", "../generated/types/credit.js"]],
      ["src/main.ts", ["./app.js", "./db/orm.js"]],
    ];
    for (const [file, specifiers] of legal) {
      const code = specifiers.map((s) => `export * from "${s}";\n`).join("");
      expect(await layerErrors(file, code), file).toEqual([]);
    }
  });

  it("puts every source file but src/main.ts in a zone", async () => {
    const files = readdirSync(join(root, "src"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(50);
    const unzoned: string[] = [];
    for (const file of files) {
      const config = (await eslint.calculateConfigForFile(join(root, "src", file))) as { rules?: Record<string, unknown> };
      if (config.rules?.["no-restricted-imports"] === undefined && file !== "main.ts") unzoned.push(file);
    }
    expect(unzoned).toEqual([]);
  });

  it("leaves tests and scripts outside the zones", async () => {
    expect(await layerErrors("tests/unit/planted.test.ts", `export * from "../../src/http/envelope.js";\n`)).toEqual([]);
    expect(await layerErrors("scripts/planted.ts", `export * from "../src/app.js";\n`)).toEqual([]);
  });
});

describe("the size bounds of src", () => {
  it("refuse a file over 400 lines and a function over 80, blank lines and comments not counted", async () => {
    const body = Array.from({ length: 81 }, (_, i) => `  total += ${i};`).join("\n");
    const fn = `export function planted(): number {\n  let total = 0;\n${body}\n  return total;\n}\n`;
    const rules = (await lint("src/domain/planted.ts", fn)).map((m) => m.ruleId);
    expect(rules).toEqual(["max-lines-per-function"]);
    const commented = body.split("\n").slice(0, 70).map((line) => `${line}\n\n  // a comment`).join("\n");
    const padded = `export function fits(): number {\n  let total = 0;\n${commented}\n  return total;\n}\n`;
    expect(await lint("src/domain/planted.ts", padded)).toEqual([]);
    const long = Array.from({ length: 401 }, (_, i) => `export const c${i} = ${i};`).join("\n");
    expect((await lint("src/domain/planted.ts", long)).map((m) => m.ruleId)).toEqual(["max-lines"]);
    expect(await lint("tests/unit/planted.test.ts", long)).toEqual([]);
  });
});

/**
 * `npm run generate`: spec/ (TypeSpec) → generated/openapi/{platform,credit}.openapi.{yaml,json}
 * → generated/types/{platform,credit}.ts (openapi-typescript) → generated/client/platform/ (a
 * fetch client of the platform document by @hey-api/openapi-ts, the Pact consumer's client:
 * tests/contract/pact/, docs/contract.md).
 *
 * Deterministic: running it twice leaves no diff; CI fails when it changes committed files.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createClient } from "@hey-api/openapi-ts";
import { parse } from "yaml";

const root = resolve(import.meta.dirname, "..");
const bin = (name: string): string => join(root, "node_modules", ".bin", name);
const surfaces = [
  { service: "Platform", name: "platform" },
  { service: "Credit", name: "credit" },
] as const;

const outDir = mkdtempSync(join(tmpdir(), "tsp-"));
try {
  execFileSync(bin("tsp"), ["compile", join(root, "spec/main.tsp"), "--output-dir", outDir], {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit"],
  });
  const openapiDir = join(root, "generated/openapi");
  const typesDir = join(root, "generated/types");
  mkdirSync(openapiDir, { recursive: true });
  mkdirSync(typesDir, { recursive: true });
  for (const { service, name } of surfaces) {
    const yamlText = readFileSync(join(outDir, "openapi3", `${service}.openapi.yaml`), "utf8");
    const yamlPath = join(openapiDir, `${name}.openapi.yaml`);
    writeFileSync(yamlPath, yamlText);
    writeFileSync(join(openapiDir, `${name}.openapi.json`), JSON.stringify(parse(yamlText), null, 2) + "\n");
    execFileSync(bin("openapi-typescript"), [yamlPath, "--output", join(typesDir, `${name}.ts`)], {
      cwd: root,
      stdio: ["ignore", "ignore", "inherit"],
    });
  }
} finally {
  rmSync(outDir, { recursive: true, force: true });
}

/**
 * The generated client's runtime (`client/client.gen.ts`) names `BodyInit`, a global of the DOM
 * lib only; this project compiles for Node (lib ES2023 and @types/node), whose fetch types carry the
 * same union as `RequestInit["body"]`. Declared once beside the clients rather than adding the
 * whole DOM lib to the project.
 */
const FETCH_TYPES = `// Written by scripts/generate.ts: the DOM lib's \`BodyInit\`, which the generated fetch client names,
// as Node's fetch types (@types/node) define it. This project does not compile with the DOM lib.
type BodyInit = NonNullable<RequestInit["body"]>;
`;

const clientDir = join(root, "generated/client");
mkdirSync(clientDir, { recursive: true });
const generatedClients = await createClient({
  input: join(root, "generated/openapi/platform.openapi.json"),
  // `.js` specifiers: the project resolves modules as NodeNext.
  output: { path: join(clientDir, "platform"), module: { extension: ".js" } },
  plugins: ["@hey-api/client-fetch"],
  logs: { level: "error", file: false },
});
// On an unreadable input it prints the report and answers no client instead of throwing.
if (generatedClients.length !== 1) throw new Error("@hey-api/openapi-ts generated no client from generated/openapi/platform.openapi.json");
writeFileSync(join(clientDir, "fetch-types.d.ts"), FETCH_TYPES);

/**
 * `npm run generate`: spec/ (TypeSpec) → generated/openapi/{platform,credit}.openapi.{yaml,json}
 * → generated/types/{platform,credit}.ts (openapi-typescript).
 *
 * Deterministic: running it twice leaves no diff; CI fails when it changes committed files.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
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

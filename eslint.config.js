// Lint configuration (flat config): ESLint recommended + typescript-eslint recommended, for src,
// tests and scripts. Generated files and the build output (dist/) are not linted. On src only: the
// layer zones below, at most 400 lines a file and 80 lines a function.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";

/*
 * Layers of src, each importing only downwards: main → app → http → modules → providers → domain,
 * with db and jobs as infrastructure beside them. Every relative import that leaves a file's own
 * zone must name one of the zone's allowed targets (src-relative; a folder allows everything in it,
 * a file only itself); anything else is an error of `no-restricted-imports` (static imports and
 * `export … from`) or of `no-restricted-syntax` (`import()` and `typeof import()`). Packages from
 * node_modules are not restricted. tests/, scripts/ and bench/ are outside the zones.
 *
 * - domain: nothing outside src/domain (pure rules, no contract types, no I/O layers).
 * - providers: domain, and src/db/sql.ts (the transaction a provider's state is written in).
 * - db (infrastructure): domain. Never modules: the ORM's entity list is assembled from the
 *   modules' and providers' own lists in src/modules/entities.ts and handed to src/db/orm.ts by the app.
 * - jobs (infrastructure): db and domain. Never modules.
 * - modules: other modules, providers, domain, generated/types (the contract's vocabulary), and
 *   the infrastructure through these ports only:
 *     src/db/sql.ts          statements and transactions (the `Db` and `Tx` port);
 *     src/db/secret-file.ts  the mode-0600 secret files under DATA_DIR;
 *     src/jobs/port.ts       the job queue's interface (the Agenda implementation,
 *                            src/jobs/scheduler.ts, is the app's to build and pass in).
 *   Never http, app, main, config or logging: settings arrive as constructor arguments.
 * - http: everything below it (modules, providers, domain, db, jobs, config, logging,
 *   generated/types); never app or main.
 * - app (src/app.ts): everything but main; its wiring (src/wiring.ts, the services and surfaces it
 *   builds): everything but app and main. main (src/main.ts) is the top: unrestricted.
 * - config.ts, logging.ts: domain only.
 * docs/architecture.md "Layers" states the same table for readers.
 */
const GENERATED_TYPES = "../generated/types/";
/** @type {{ name: string, files: string, folder: boolean, allowed: string[] }[]} */
const ZONES = [
  { name: "src/domain", files: "domain", folder: true, allowed: [] },
  { name: "src/providers", files: "providers", folder: true, allowed: ["domain/", "db/sql.js"] },
  { name: "src/db", files: "db", folder: true, allowed: ["domain/"] },
  { name: "src/jobs", files: "jobs", folder: true, allowed: ["db/", "domain/"] },
  {
    name: "src/modules",
    files: "modules",
    folder: true,
    allowed: ["providers/", "domain/", "db/sql.js", "db/secret-file.js", "jobs/port.js", GENERATED_TYPES],
  },
  {
    name: "src/http",
    files: "http",
    folder: true,
    allowed: ["modules/", "providers/", "domain/", "db/", "jobs/", "config.js", "logging.js", GENERATED_TYPES],
  },
  {
    name: "src/app.ts",
    files: "app.ts",
    folder: false,
    allowed: ["wiring.js", "http/", "modules/", "providers/", "domain/", "db/", "jobs/", "config.js", "logging.js", GENERATED_TYPES],
  },
  {
    name: "src/wiring.ts",
    files: "wiring.ts",
    folder: false,
    allowed: ["http/", "modules/", "providers/", "domain/", "db/", "jobs/", "config.js", "logging.js", GENERATED_TYPES],
  },
  { name: "src/config.ts", files: "config.ts", folder: false, allowed: ["domain/"] },
  { name: "src/logging.ts", files: "logging.ts", folder: false, allowed: ["domain/"] },
];
/** Deepest folder nesting under src the zones cover (src/modules/x/y/z/file.ts is 4). */
const MAX_DEPTH = 5;

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** A target as a regex source matched right after the specifier has climbed to src/. */
const targetSource = (target) => (target.endsWith("/") ? escape(target) : `${escape(target)}$`);

/**
 * The regex sources of the specifiers a file of `zone`, `depth` folders below src, may not use: a
 * relative specifier that climbs to src/ (or above it) and then names no allowed target.
 */
function forbiddenSources(zone, depth) {
  const allowed = zone.allowed.map(targetSource);
  if (depth === 0) {
    // A file at the root of src: "./x" is a sibling in src, "../x" leaves src.
    const up = "\\.\\./";
    const inSrc = allowed.filter((source) => !source.startsWith(up));
    const outside = allowed.filter((source) => source.startsWith(up)).map((source) => source.slice(up.length));
    return [`^\\./(?!${inSrc.join("|") || "$^"})`, `^\\.\\./(?!${outside.join("|") || "$^"})`];
  }
  // Its own zone's folder is allowed: climbing to src/ and coming back in is no escape.
  const own = zone.folder ? [targetSource(`${zone.files}/`)] : [];
  return [`^(?:\\.\\./){${depth}}(?!${[...own, ...allowed].join("|")})`];
}

/** The config blocks of the layer rule: one per zone and folder depth (the regexes count `../`). */
function layerBlocks() {
  const blocks = [];
  for (const zone of ZONES) {
    const message = `${zone.name} may import, outside its own zone, only: ${zone.allowed.join(", ") || "nothing"} (src-relative; docs/architecture.md "Layers").`;
    const depths = zone.folder ? Array.from({ length: MAX_DEPTH }, (_, i) => i + 1) : [0];
    for (const depth of depths) {
      const files = zone.folder ? `src/${zone.files}/${"*/".repeat(depth - 1)}*.ts` : `src/${zone.files}`;
      const sources = forbiddenSources(zone, depth);
      blocks.push({
        files: [files],
        rules: {
          "no-restricted-imports": ["error", { patterns: sources.map((regex) => ({ regex, message })) }],
          "no-restricted-syntax": [
            "error",
            ...sources.flatMap((source) => [
              { selector: `ImportExpression > Literal.source[value=/${source.replace(/\//g, "\\/")}/]`, message },
              { selector: `TSImportType Literal[value=/${source.replace(/\//g, "\\/")}/]`, message },
            ]),
          ],
        },
      });
    }
  }
  return blocks;
}

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "generated/", "scratch/", ".data/", "coverage/", "tests/contract/pact/pacts/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs" },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  // Size of src: a file over 400 lines or a function over 80 (blank lines and comments not
  // counted) is split; a declarative table belongs in a module-level constant, not in a function.
  {
    files: ["src/**/*.ts"],
    rules: {
      "max-lines": ["error", { max: 400 }],
      "max-lines-per-function": ["error", { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  ...layerBlocks(),
);

// Three projects (docs/testing.md): `unit` needs nothing outside the process; `integration` and
// `process` need the run's PostgreSQL (tests/support/global-setup.ts starts one and shares it
// between them) and the system packages the tests drive (tests/support/prerequisites.ts checks
// them first). `process` holds the tests that spawn the service or PostgreSQL as child processes.
// `npm test` runs all three; `vitest run --project unit` starts no PostgreSQL. The reporters are
// the run's: one closing count line for all projects (tests/support/summary-reporter.ts).
import { defineConfig } from "vitest/config";

const NEEDS_SERVICES = ["tests/support/prerequisites.ts", "tests/support/global-setup.ts"];

export default defineConfig({
  test: {
    reporters: ["default", "./tests/support/summary-reporter.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
    env: { PACT_DO_NOT_TRACK: "true", LOG_LEVEL: "silent" },
    projects: [
      { extends: true, test: { name: "unit", include: ["tests/unit/**/*.test.ts"] } },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["tests/**/*.test.ts"],
          exclude: ["tests/unit/**", "tests/process/**"],
          globalSetup: NEEDS_SERVICES,
        },
      },
      { extends: true, test: { name: "process", include: ["tests/process/**/*.test.ts"], globalSetup: NEEDS_SERVICES } },
    ],
  },
});

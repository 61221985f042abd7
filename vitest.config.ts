import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    globalSetup: ["tests/support/global-setup.ts"],
    reporters: ["default", "./tests/support/summary-reporter.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
    env: { PACT_DO_NOT_TRACK: "true", LOG_LEVEL: "silent" },
  },
});

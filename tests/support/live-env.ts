/**
 * The environment of a test app on a live EVM network (docs/decisions/live-chains.md
 * "Configuration"): the test database and keys, no rate limits, logs silent unless `LIVE_LOG`
 * names a pino level (`LIVE_LOG=warn npx vitest run tests/integration/live-sends.test.ts`), and
 * `DATA_DIR` for the custody mnemonic. The test adds its `CHAIN_*` variables, `ROLE` and the rest.
 */
import { TEST_MASTER_KEY, TEST_SECRETS_KEY } from "./app.js";

/** The variables every live-network test sets, then `extra` (which may override them). */
export function liveEnv(databaseUrl: string, dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    MASTER_API_KEY: TEST_MASTER_KEY,
    SECRETS_KEY: TEST_SECRETS_KEY,
    LOG_LEVEL: process.env.LIVE_LOG ?? "silent",
    RATE_LIMIT_IP: "off",
    RATE_LIMIT_CREDENTIAL: "off",
    RATE_LIMIT_AUTH_FAILURES: "off",
    RATE_LIMIT_CODES: "off",
    DATA_DIR: dataDir,
    ...extra,
  };
}

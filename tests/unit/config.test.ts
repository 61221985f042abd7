/** Configuration is validated at start with one clear message per bad value. */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";

describe("loadConfig", () => {
  it("applies the documented defaults (docs/operations.md#configuration)", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      host: "127.0.0.1",
      role: "all",
      dataDir: "./.data",
      sessionTtlS: 3600,
      userTokenTtlS: 900,
      custodyProvider: "sandbox",
      bodyLimitBytes: 1_048_576,
      allowPrivateNetworkTargets: false,
    });
    expect(c.databaseUrl).toBeUndefined();
    expect(c.masterApiKey).toBeUndefined();
  });

  it("reads every variable", () => {
    const c = loadConfig({
      PORT: "9000",
      HOST: "0.0.0.0",
      ROLE: "api",
      DATABASE_URL: "postgres://u:p@db:5432/x",
      MASTER_API_KEY: "m".repeat(32),
      SECRETS_KEY: "s".repeat(40),
      SESSION_TTL_S: "120",
      USER_TOKEN_TTL_S: "60",
      ALLOW_PRIVATE_NETWORK_TARGETS: "true",
    });
    expect(c).toMatchObject({ port: 9000, host: "0.0.0.0", role: "api", databaseUrl: "postgres://u:p@db:5432/x", sessionTtlS: 120, userTokenTtlS: 60, allowPrivateNetworkTargets: true });
  });

  it("reads the rate-limit buckets as <requests>/<window seconds> or off, and the withdrawal code limits (docs/decisions/requests-and-validation.md#rate-limits, docs/decisions/withdrawals.md#the-code)", () => {
    const defaults = loadConfig({});
    expect(defaults).toMatchObject({
      rateLimitIp: { points: 6000, windowS: 60 },
      rateLimitCredential: { points: 3000, windowS: 60 },
      rateLimitAuthFailures: { points: 20, windowS: 300 },
      rateLimitCodes: { points: 10, windowS: 60 },
      trustProxy: 0,
      withdrawalCodeMaxTotalAttempts: 15,
      withdrawalCodeMaxResends: 3,
      withdrawalCodeResendIntervalS: 30,
    });
    const c = loadConfig({ RATE_LIMIT_IP: "100/10", RATE_LIMIT_CREDENTIAL: "off", TRUST_PROXY: "2", WITHDRAWAL_CODE_MAX_RESENDS: "0" });
    expect(c).toMatchObject({ rateLimitIp: { points: 100, windowS: 10 }, rateLimitCredential: null, trustProxy: 2, withdrawalCodeMaxResends: 0 });
    for (const bad of ["100", "0/10", "10/0", "ten/10", "1/2/3", "-1/5"]) {
      expect(() => loadConfig({ RATE_LIMIT_CODES: bad }), bad).toThrow(/RATE_LIMIT_CODES must be <requests>\/<window seconds>/);
    }
  });

  it("reports every bad value at once, naming the variable", () => {
    let error: unknown;
    try {
      loadConfig({ PORT: "eighty", ROLE: "boss", MASTER_API_KEY: "short", DATABASE_URL: "mysql://x", SESSION_TTL_S: "5", ALLOW_PRIVATE_NETWORK_TARGETS: "maybe" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    // DATABASE_URL without SECRETS_KEY is a seventh (docs/decisions/credentials-and-tokens.md "Secrets at rest")
    expect(problems).toHaveLength(7);
    for (const name of ["PORT", "ROLE", "MASTER_API_KEY", "DATABASE_URL", "SESSION_TTL_S", "ALLOW_PRIVATE_NETWORK_TARGETS", "SECRETS_KEY"]) {
      expect(problems.some((p) => p.startsWith(name))).toBe(true);
    }
  });

  it("requires SECRETS_KEY (≥ 32 characters) with DATABASE_URL, and only then (docs/decisions/credentials-and-tokens.md#secrets-at-rest)", () => {
    let error: unknown;
    try {
      loadConfig({ DATABASE_URL: "postgres://u:p@db:5432/x" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toHaveLength(1);
    expect((error as ConfigError).problems[0]).toMatch(/^SECRETS_KEY must be set \(at least 32 characters\) when DATABASE_URL is set/);
    expect(() => loadConfig({ DATABASE_URL: "postgres://u:p@db:5432/x", SECRETS_KEY: "short" })).toThrow(/SECRETS_KEY must be at least 32 characters long/);
    expect(loadConfig({ DATABASE_URL: "postgres://u:p@db:5432/x", SECRETS_KEY: "s".repeat(32) }).secretsKey).toBe("s".repeat(32));
    expect(loadConfig({}).secretsKey).toBeUndefined();
  });

  it("reads DATABASE_SESSION_URL (a postgres URL, with DATABASE_URL only) and DATABASE_POOL_MODE (session or transaction; docs/operations.md#pgbouncer)", () => {
    const base = { DATABASE_URL: "postgres://u:p@pgbouncer:6432/x", SECRETS_KEY: "s".repeat(32) };
    const c = loadConfig({ ...base, DATABASE_SESSION_URL: "postgres://u:p@db:5432/x", DATABASE_POOL_MODE: "transaction" });
    expect([c.databaseSessionUrl, c.databasePoolMode]).toEqual(["postgres://u:p@db:5432/x", "transaction"]);
    expect([loadConfig(base).databaseSessionUrl, loadConfig(base).databasePoolMode]).toEqual([undefined, "session"]);
    expect(() => loadConfig({ ...base, DATABASE_SESSION_URL: "mysql://db/x" })).toThrow(/DATABASE_SESSION_URL must be a postgres/);
    expect(() => loadConfig({ DATABASE_SESSION_URL: "postgres://u:p@db:5432/x" })).toThrow(/DATABASE_SESSION_URL .* needs DATABASE_URL/);
    expect(() => loadConfig({ ...base, DATABASE_POOL_MODE: "statement" })).toThrow(/DATABASE_POOL_MODE/);
  });

  it("reads METRICS_TOKEN: unset by default, at least 16 printable characters without spaces (docs/operations.md#configuration)", () => {
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ METRICS_TOKEN: "m".repeat(16) }).metricsToken).toBe("m".repeat(16));
    for (const bad of ["short", `${"m".repeat(16)} x`]) {
      expect(() => loadConfig({ METRICS_TOKEN: bad }), bad).toThrow(/METRICS_TOKEN must be at least 16 printable characters/);
    }
  });

  it("reads the job, webhook and poller settings with their defaults and bounds (docs/operations.md#configuration)", () => {
    expect(loadConfig({})).toMatchObject({
      pollerIntervalS: 30,
      imapTimeoutS: 15,
      outboxIntervalS: 10,
      webhookTimeoutS: 10,
      webhookRetryBaseS: 5,
      jobLockLifetimeS: 120,
      shutdownTimeoutS: 25,
    });
    const c = loadConfig({
      POLLER_INTERVAL_S: "2",
      IMAP_TIMEOUT_S: "3",
      OUTBOX_INTERVAL_S: "1",
      WEBHOOK_TIMEOUT_S: "4",
      WEBHOOK_RETRY_BASE_S: "1",
      JOB_LOCK_LIFETIME_S: "5",
      SHUTDOWN_TIMEOUT_S: "6",
    });
    expect(c).toMatchObject({ pollerIntervalS: 2, imapTimeoutS: 3, outboxIntervalS: 1, webhookTimeoutS: 4, webhookRetryBaseS: 1, jobLockLifetimeS: 5, shutdownTimeoutS: 6 });
    let error: unknown;
    try {
      loadConfig({ POLLER_INTERVAL_S: "0", WEBHOOK_TIMEOUT_S: "61", JOB_LOCK_LIFETIME_S: "1", OUTBOX_INTERVAL_S: "soon" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((p) => p.split(" ")[0]).sort()).toEqual(["JOB_LOCK_LIFETIME_S", "OUTBOX_INTERVAL_S", "POLLER_INTERVAL_S", "WEBHOOK_TIMEOUT_S"]);
  });
});

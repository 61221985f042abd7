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

describe("the live EVM networks (docs/decisions/live-chains.md#configuration)", () => {
  const USDT = "0xdAC17F958D2ee523a2206206994597C13D831ec7";
  const USDC = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48";
  /** The problems `env` raises. */
  const problems = (env: Record<string, string>): string[] => {
    try {
      loadConfig(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as ConfigError).problems;
    }
    return [];
  };

  it("has none by default: every network is the sandbox's, and no CHAIN_* but the RPC timeout is read", () => {
    const c = loadConfig({ CHAIN_ETHEREUM_TOKENS: "not a list", CHAIN_POLYGON_CONFIRMATIONS: "0", CHAIN_ETHEREUM_START_BLOCK: "-1" });
    expect(c.liveChains).toEqual([]);
    expect(c.custodyMnemonicFile).toBeUndefined();
    expect(c.chainRpcTimeoutS).toBe(10);
  });

  it("makes a network live with its RPC URL, with the defaults of each network", () => {
    const c = loadConfig({ CHAIN_POLYGON_RPC_URL: "https://polygon.example/rpc", CHAIN_ETHEREUM_RPC_URL: "http://127.0.0.1:8545" });
    expect(c.liveChains).toEqual([
      { network: "networks/ethereum", rpcUrl: "http://127.0.0.1:8545", confirmations: 12, tokens: [], maxFeeGwei: 200, giveUpS: 3600, startBlock: undefined, sweepMin: {} },
      { network: "networks/polygon", rpcUrl: "https://polygon.example/rpc", confirmations: 50, tokens: [], maxFeeGwei: 3000, giveUpS: 3600, startBlock: undefined, sweepMin: {} },
    ]);
    expect(loadConfig({ CHAIN_POLYGON_RPC_URL: "https://polygon.example/rpc" }).liveChains.map((l) => l.network)).toEqual(["networks/polygon"]);
  });

  it("reads every variable of a live network, the mnemonic file and the RPC timeout", () => {
    const c = loadConfig({
      CHAIN_ETHEREUM_RPC_URL: "https://node.example/v3/key",
      CHAIN_ETHEREUM_CONFIRMATIONS: "3",
      CHAIN_ETHEREUM_TOKENS: `usdt=${USDT}:6`,
      CHAIN_ETHEREUM_MAX_FEE_GWEI: "75",
      CHAIN_ETHEREUM_GIVE_UP_S: "600",
      CHAIN_ETHEREUM_START_BLOCK: "0",
      CHAIN_ETHEREUM_SWEEP_MIN: "eth=0.05, usdt=50",
      CUSTODY_MNEMONIC_FILE: "/run/secrets/mnemonic",
      CHAIN_RPC_TIMEOUT_S: "2",
    });
    expect(c.liveChains).toEqual([
      { network: "networks/ethereum", rpcUrl: "https://node.example/v3/key", confirmations: 3, tokens: [{ currency: "usdt", contract: USDT.toLowerCase(), decimals: 6 }], maxFeeGwei: 75, giveUpS: 600, startBlock: 0, sweepMin: { eth: "0.05", usdt: "50" } },
    ]);
    expect(c).toMatchObject({ custodyMnemonicFile: "/run/secrets/mnemonic", chainRpcTimeoutS: 2 });
    expect(loadConfig({ CHAIN_ETHEREUM_RPC_URL: "http://n", CHAIN_ETHEREUM_START_BLOCK: "19000000" }).liveChains[0]?.startBlock).toBe(19_000_000);
  });

  it("reads a token list: currency=contract:decimals, comma-separated, spaces and empty items ignored, contracts in lower case", () => {
    const c = loadConfig({ CHAIN_POLYGON_RPC_URL: "http://n", CHAIN_POLYGON_TOKENS: ` usdt=${USDT}:6 , usdc=${USDC}:6,,wbtc8=${USDT.toLowerCase()}:0, dai=${USDC}:36,` });
    expect(c.liveChains[0]?.tokens).toEqual([
      { currency: "usdt", contract: USDT.toLowerCase(), decimals: 6 },
      { currency: "usdc", contract: USDC.toLowerCase(), decimals: 6 },
      { currency: "wbtc8", contract: USDT.toLowerCase(), decimals: 0 },
      { currency: "dai", contract: USDC.toLowerCase(), decimals: 36 },
    ]);
  });

  it.each([
    ["a contract too short", "usdt=0xdac17f958d2ee523a2206206994597c13d831ec:6"],
    ["a contract without 0x", `usdt=${USDT.slice(2)}:6`],
    ["no decimals", `usdt=${USDT}`],
    ["decimals past 36", `usdt=${USDT}:37`],
    ["an upper-case currency", `USDT=${USDT}:6`],
    ["a one-letter currency", `u=${USDT}:6`],
    ["a currency twice", `usdt=${USDT}:6,usdt=${USDC}:6`],
    ["another separator", `usdt:${USDT}:6`],
    ["semicolons between items", `usdt=${USDT}:6;usdc=${USDC}:6`],
  ])("refuses a token list with %s, naming the variable and the item", (_case, list) => {
    const found = problems({ CHAIN_ETHEREUM_RPC_URL: "http://n", CHAIN_ETHEREUM_TOKENS: list });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^CHAIN_ETHEREUM_TOKENS must list <currency>=<0x contract address>:<decimals 0-36>/);
  });

  it.each([
    ["a currency the network does not hold", "usdc=10"],
    ["more than 8 decimals", "eth=0.000000001"],
    ["a negative amount", "eth=-1"],
    ["a currency twice", "eth=1,eth=2"],
    ["no amount", "eth"],
  ])("refuses a sweep minimum list with %s, naming the variable and the item", (_case, list) => {
    const found = problems({ CHAIN_ETHEREUM_RPC_URL: "http://n", CHAIN_ETHEREUM_TOKENS: `usdt=${USDT}:6`, CHAIN_ETHEREUM_SWEEP_MIN: list });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^CHAIN_ETHEREUM_SWEEP_MIN must list <currency>=<decimal amount, at most 8 decimals>/);
  });

  it("reports every bad value of a live network at once, naming each variable", () => {
    const found = problems({
      CHAIN_POLYGON_RPC_URL: "ws://node.example",
      CHAIN_POLYGON_CONFIRMATIONS: "0",
      CHAIN_POLYGON_MAX_FEE_GWEI: "1000001",
      CHAIN_POLYGON_GIVE_UP_S: "59",
      CHAIN_POLYGON_START_BLOCK: "-1",
      CHAIN_RPC_TIMEOUT_S: "121",
    });
    expect(found.map((p) => p.split(" ")[0]).sort()).toEqual([
      "CHAIN_POLYGON_CONFIRMATIONS",
      "CHAIN_POLYGON_GIVE_UP_S",
      "CHAIN_POLYGON_MAX_FEE_GWEI",
      "CHAIN_POLYGON_RPC_URL",
      "CHAIN_POLYGON_START_BLOCK",
      "CHAIN_RPC_TIMEOUT_S",
    ]);
    expect(problems({ CHAIN_ETHEREUM_RPC_URL: "http://n", CHAIN_ETHEREUM_CONFIRMATIONS: "1001" })).toEqual(['CHAIN_ETHEREUM_CONFIRMATIONS must be an integer from 1 to 1000, got "1001"']);
  });
});

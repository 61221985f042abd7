/**
 * Service configuration, read once from environment variables and validated at start.
 * Every bad value is reported with its variable name; the process refuses to start on any.
 * Defaults follow decisions.md §1–§4.
 */

/** Process role (decisions.md §1): serve the API, run the background jobs, or both. */
export type Role = "api" | "worker" | "all";

/** The validated configuration. Durations are in seconds, sizes in bytes. */
export interface Config {
  /** TCP port (`PORT`, default 8080). */
  port: number;
  /** Bind address (`HOST`, default 127.0.0.1). */
  host: string;
  /** `ROLE`: api, worker or all (default). */
  role: Role;
  /** `DATABASE_URL`; when absent an embedded PostgreSQL runs under `dataDir`. */
  databaseUrl: string | undefined;
  /** `DATA_DIR` (default `./.data`): embedded PostgreSQL data and local state. */
  dataDir: string;
  /** `MASTER_API_KEY` (≥ 32 characters); when absent the first start generates one and prints it once. */
  masterApiKey: string | undefined;
  /** `SECRETS_KEY` (≥ 32 characters): key of the keyed hashes and token signatures; generated and kept in the database when absent. */
  secretsKey: string | undefined;
  /** `SESSION_TTL_S` (default 3600). */
  sessionTtlS: number;
  /** `USER_TOKEN_TTL_S` (default 900). */
  userTokenTtlS: number;
  /** `CUSTODY_PROVIDER`: only `sandbox` is built in (decisions.md §3). */
  custodyProvider: "sandbox";
  /** `SANDBOX_SEED`: seed of the sandbox's deterministic data. */
  sandboxSeed: string;
  /** `BODY_LIMIT_BYTES` (default 1 MiB): larger request bodies answer 413. */
  bodyLimitBytes: number;
  /** `LOG_LEVEL` (default info; `silent` turns logs off). */
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /** `ALLOW_PRIVATE_NETWORK_TARGETS` (default false; decisions.md §5). */
  allowPrivateNetworkTargets: boolean;
}

/** Raised by {@link loadConfig} with one line per invalid variable. */
export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join("\n  - ")}`);
    this.name = "ConfigError";
  }
}

/**
 * Reads and validates the configuration from `env` (default `process.env`).
 * @throws ConfigError listing every invalid variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const str = (name: string, fallback: string): string => {
    const v = env[name];
    return v === undefined || v === "" ? fallback : v;
  };
  const optional = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v === "" ? undefined : v;
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = optional(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return n;
  };
  const oneOf = <T extends string>(name: string, fallback: T, allowed: readonly T[]): T => {
    const raw = str(name, fallback);
    if (!(allowed as readonly string[]).includes(raw)) {
      problems.push(`${name} must be one of ${allowed.join(", ")}, got "${raw}"`);
      return fallback;
    }
    return raw as T;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = optional(name);
    if (raw === undefined) return fallback;
    if (raw === "true" || raw === "1") return true;
    if (raw === "false" || raw === "0") return false;
    problems.push(`${name} must be true or false, got "${raw}"`);
    return fallback;
  };
  const secret = (name: string): string | undefined => {
    const v = optional(name);
    if (v !== undefined && v.length < 32) problems.push(`${name} must be at least 32 characters long`);
    return v;
  };

  const databaseUrl = optional("DATABASE_URL");
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  const config: Config = {
    port: int("PORT", 8080, 0, 65535),
    host: str("HOST", "127.0.0.1"),
    role: oneOf("ROLE", "all", ["api", "worker", "all"] as const),
    databaseUrl,
    dataDir: str("DATA_DIR", "./.data"),
    masterApiKey: secret("MASTER_API_KEY"),
    secretsKey: secret("SECRETS_KEY"),
    sessionTtlS: int("SESSION_TTL_S", 3600, 60, 86_400 * 30),
    userTokenTtlS: int("USER_TOKEN_TTL_S", 900, 60, 86_400),
    custodyProvider: oneOf("CUSTODY_PROVIDER", "sandbox", ["sandbox"] as const),
    sandboxSeed: str("SANDBOX_SEED", "sandbox-default-seed"),
    bodyLimitBytes: int("BODY_LIMIT_BYTES", 1_048_576, 1024, 100 * 1_048_576),
    logLevel: oneOf("LOG_LEVEL", "info", ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const),
    allowPrivateNetworkTargets: bool("ALLOW_PRIVATE_NETWORK_TARGETS", false),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

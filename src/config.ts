/**
 * Service configuration, read once from environment variables and validated at start.
 * Every bad value is reported with its variable name; the process refuses to start on any.
 * Defaults follow docs/operations.md "Configuration".
 */
import { DEFAULT_ALLOWLIST_COOLDOWN_S, MAX_ALLOWLIST_COOLDOWN_S } from "./domain/allowlist.js";
import { DEFAULT_TRANSFER_CAPS, DEFAULT_WITHDRAWAL_CAPS, type CapSet } from "./domain/limits.js";
import { readLiveChains, type LiveChain } from "./domain/live-chains.js";

export { LIVE_NETWORKS, type LiveChain } from "./domain/live-chains.js";
export { DEFAULT_TRANSFER_CAPS, DEFAULT_WITHDRAWAL_CAPS } from "./domain/limits.js";

/** Process role (docs/decisions/surfaces-and-process.md "Roles and background jobs"): serve the API, run the background jobs, or both. */
export type Role = "api" | "worker" | "all";

/** A rate-limit bucket's size (src/http/rate-limits.ts): `points` requests per fixed window of `windowS` seconds. */
export interface RateQuota {
  points: number;
  windowS: number;
}

/** Default bucket sizes: `RATE_LIMIT_IP`, `RATE_LIMIT_CREDENTIAL`, `RATE_LIMIT_AUTH_FAILURES`, `RATE_LIMIT_CODES`. */
export const DEFAULT_RATE_LIMITS = {
  ip: { points: 6000, windowS: 60 },
  credential: { points: 3000, windowS: 60 },
  authFailures: { points: 20, windowS: 300 },
  codes: { points: 10, windowS: 60 },
} as const satisfies Record<string, RateQuota>;

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
  /**
   * `DATABASE_SESSION_URL` (default: `DATABASE_URL`): a direct connection to the same database for
   * what needs a session of its own: the migrations' advisory lock, the job scheduler (its
   * LISTEN/NOTIFY channel and job table) and the shutdown's cancellation of this process's
   * statements. Set it when `DATABASE_URL` goes through a transaction pooler (docs/operations.md "PgBouncer").
   */
  databaseSessionUrl: string | undefined;
  /**
   * `DATABASE_POOL_MODE` (`session`, default, or `transaction`): `transaction` when `DATABASE_URL`
   * goes through a pooler in transaction mode (PgBouncer `pool_mode = transaction`): the hot-path
   * statements are then sent unnamed, never as named prepared statements (a later transaction may
   * run on another server connection, where the name does not exist).
   */
  databasePoolMode: "session" | "transaction";
  /** `DATABASE_WAIT_S` (default 10, 1 to 120): how long a request may wait on the database, seconds; then 503 (docs/operations.md "Database waits"). */
  databaseWaitS: number;
  /** `DATA_DIR` (default `./.data`): embedded PostgreSQL data and local state. */
  dataDir: string;
  /** `MASTER_API_KEY` (≥ 32 characters); when absent the first start generates one and prints it once. */
  masterApiKey: string | undefined;
  /**
   * `SECRETS_KEY` (≥ 32 characters): key of the keyed hashes and token signatures. Required with
   * `DATABASE_URL`; with the embedded PostgreSQL, when absent, generated once into
   * `DATA_DIR/secrets.key` (mode 0600), never into the database (src/modules/identity/bootstrap.ts).
   */
  secretsKey: string | undefined;
  /** `SESSION_TTL_S` (default 3600). */
  sessionTtlS: number;
  /** `USER_TOKEN_TTL_S` (default 900). */
  userTokenTtlS: number;
  /** `CUSTODY_PROVIDER`: only `sandbox` is built in (docs/decisions/provider-and-sandbox.md "One provider interface, one built-in provider"). */
  custodyProvider: "sandbox";
  /** `SANDBOX_SEED`: seed of the sandbox's deterministic data. */
  sandboxSeed: string;
  /** `BODY_LIMIT_BYTES` (default 1 MiB): larger request bodies answer 413. */
  bodyLimitBytes: number;
  /** `METRICS_TOKEN` (≥ 16 characters): when set, `/metrics` requires `Authorization: Bearer <token>` (401 otherwise); unset: `/metrics` is open. */
  metricsToken: string | undefined;
  /** `LOG_LEVEL` (default info; `silent` turns logs off). */
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /** `ALLOW_PRIVATE_NETWORK_TARGETS` (default false; docs/decisions/notifications.md "The SSRF guard"). */
  allowPrivateNetworkTargets: boolean;
  /** `SMTP_URL` (e.g. `smtp://user:pass@host:587`); unset: emails go to the sandbox outbox (`GET /sandbox/mail`). */
  smtpUrl: string | undefined;
  /** `MAIL_FROM` (default `Custody Platform <no-reply@custody.invalid>`). */
  mailFrom: string;
  /** `WITHDRAWAL_CODE_TTL_S` (default 600): lifetime of a withdrawal confirmation code. */
  withdrawalCodeTtlS: number;
  /** `WITHDRAWAL_CODE_MAX_ATTEMPTS` (default 5): wrong codes before confirm answers 403 until Resend Code. */
  withdrawalCodeMaxAttempts: number;
  /** `WITHDRAWAL_CODE_MAX_TOTAL_ATTEMPTS` (default 15): wrong codes over a withdrawal's life; the last one cancels it and releases its hold. */
  withdrawalCodeMaxTotalAttempts: number;
  /** `WITHDRAWAL_CODE_MAX_RESENDS` (default 3): Resend Code calls a withdrawal allows. */
  withdrawalCodeMaxResends: number;
  /** `WITHDRAWAL_CODE_RESEND_INTERVAL_S` (default 30): seconds between a code and the next Resend Code (429 before). */
  withdrawalCodeResendIntervalS: number;
  /** `RATE_LIMIT_IP` (default 6000/60): requests per client address and window; `off` disables. */
  rateLimitIp: RateQuota | null;
  /** `RATE_LIMIT_CREDENTIAL` (default 3000/60): authenticated requests per credential and window; `off` disables. */
  rateLimitCredential: RateQuota | null;
  /** `RATE_LIMIT_AUTH_FAILURES` (default 20/300): failed authentications per client address before it is refused for the window; `off` disables. */
  rateLimitAuthFailures: RateQuota | null;
  /** `RATE_LIMIT_CODES` (default 10/60): Confirm Withdrawal and Resend Code calls per user and window; `off` disables. */
  rateLimitCodes: RateQuota | null;
  /**
   * `RATE_LIMIT_SYNC_MS` (default 1000, 0 to 60000): milliseconds between two syncs of each
   * process's memory-first rate-limit buckets with the shared table; 0 counts every request in
   * PostgreSQL instead (exact across replicas, a round trip per bucket; docs/decisions/requests-and-validation.md "Rate limits").
   */
  rateLimitSyncMs: number;
  /** `TRUST_PROXY` (default 0): reverse proxies in front of the service whose `X-Forwarded-For` names the client address. */
  trustProxy: number;
  /** `HEADERS_TIMEOUT_S` (default 10): time a client has to send the request line and headers; then 408 and the connection closes (docs/security.md). */
  headersTimeoutS: number;
  /** `REQUEST_TIMEOUT_S` (default 30, at least `HEADERS_TIMEOUT_S`): time a client has to send a whole request, body included; then 408 and the connection closes. */
  requestTimeoutS: number;
  /** `MAX_CONNECTIONS_PER_ADDRESS` (default 64; 0 = no limit): open connections one client address may hold; more are answered 429 and closed. Counted on the socket's address, so behind a proxy set it to cover the proxy's connections. */
  maxConnectionsPerAddress: number;
  /** `MAX_BODY_BYTES_IN_FLIGHT` (default 64 MiB; 0 = no bound): bytes of request bodies the process reads at once; a body that does not fit answers 503 with `Retry-After: 1` (docs/security.md). */
  maxBodyBytesInFlight: number;
  /**
   * `MAX_BODY_BYTES_PER_CALLER` (default 0 = a quarter of `MAX_BODY_BYTES_IN_FLIGHT`, at least
   * `BODY_LIMIT_BYTES`): bytes of bodies one credential, and one client address, may have the process
   * read at once; a body over it answers 429 with `Retry-After: 1` and the connection closes (docs/security.md).
   */
  maxBodyBytesPerCaller: number;
  /** `POLLER_INTERVAL_S` (default 30): seconds between two polls of an enabled email poller. */
  pollerIntervalS: number;
  /** `IMAP_TIMEOUT_S` (default 15): connection, greeting and socket timeout of IMAP sessions. */
  imapTimeoutS: number;
  /** `OUTBOX_INTERVAL_S` (default 10): how often workers look for due webhook deliveries and emails (new ones are sent at once; this catches retries and anything a crash left behind). */
  outboxIntervalS: number;
  /** `PAYOUT_INTERVAL_S` (default 1): seconds between two rounds of the fiat payout settlement job (docs/decisions/fiat.md "Fiat withdrawals"). */ payoutIntervalS: number;
  /** `WEBHOOK_TIMEOUT_S` (default 10): timeout of one webhook HTTP attempt, connection included. */
  webhookTimeoutS: number;
  /**
   * `INBOUND_SECRET_OVERLAP_S` (default 86400, 0 to 2592000): seconds the previous inbound webhook
   * secret still verifies after Create Inbound Webhook rotated it (docs/decisions/withdrawals.md
   * "PINs pushed by the provider").
   */
  inboundSecretOverlapS: number;
  /** `WEBHOOK_RETRY_BASE_S` (default 5): first retry delay of a failed webhook delivery; later ones triple (capped at 8 h) with ±20 % jitter, 17 attempts over about three days. */
  webhookRetryBaseS: number;
  /** `JOB_LOCK_LIFETIME_S` (default 120): how long a job stays locked to a worker; after a crash another worker takes it once this has passed. */
  jobLockLifetimeS: number;
  /** `SHUTDOWN_TIMEOUT_S` (default 25): on SIGTERM, how long open requests and running jobs may take to finish. */
  shutdownTimeoutS: number;
  /**
   * `CLOCK_MOVE_BUDGET_S` (default 5, 1 to 60): how long one Set or Advance Sandbox Clock call may
   * run the due steps (counted from its arrival) before it answers where the clock stopped with
   * `complete: false` (docs/security.md "The sandbox clock").
   */
  clockMoveBudgetS: number;
  /** `WITHDRAWAL_CAPS` (JSON `{"btc": {"perWithdrawal": "2", "daily": "5", "monthly": "20"}, …}`), merged over {@link DEFAULT_WITHDRAWAL_CAPS}: the withdrawal caps of customers without their own. */
  withdrawalCaps: Record<string, CapSet>;
  /** `TRANSFER_CAPS` (the same JSON; `perTransaction` or `perWithdrawal`), merged over {@link DEFAULT_TRANSFER_CAPS}: the transfer caps of customers without their own. */
  transferCaps: Record<string, CapSet>;
  /** `ALLOWLIST_COOLDOWN_S` (default 86400, 0 to 2592000): seconds an added allowlist address stays `PENDING` before it is `ACTIVE`. */
  allowlistCooldownS: number;
  /** `AUTHORIZATION_TTL_DAYS` (default 7, 1 to 30): days an approved card authorization holds its amount; it expires at the first daily close (00:00 UTC) after that (docs/decisions/credit.md "Authorizations"). */
  authorizationTtlDays: number;
  /** `CARDS_PER_WALLET` (default 10, 1 to 1000): open cards (`ACTIVE` or `PAUSED`) a credit wallet may have (docs/decisions/cards.md). */
  cardsPerWallet: number;
  /** `QUOTE_TTL_S` (default 15, 1 to 300): seconds a trading quote stays firm (docs/decisions/trading.md). */
  quoteTtlS: number;
  /** `SANDBOX_SPREAD_BPS` (default 20, 0 to 1000): the sandbox's spread around its mid prices, basis points. */
  sandboxSpreadBps: number;
  /** `SANDBOX_FEE_BPS` (default 10, 0 to 1000): the sandbox's fee rate on an order's notional, basis points. */
  sandboxFeeBps: number;
  /** The live EVM networks: those with `CHAIN_<NET>_RPC_URL` set (docs/decisions/live-chains.md); empty: every network is the sandbox's. */
  liveChains: LiveChain[];
  /**
   * `CUSTODY_MNEMONIC_FILE`: the BIP-39 mnemonic the live networks' keys derive from. Unset while a
   * network is live: the first start writes `DATA_DIR/custody-mnemonic.txt` (24 words, mode 0600).
   */
  custodyMnemonicFile: string | undefined;
  /** `CHAIN_RPC_TIMEOUT_S` (default 10, 1 to 120): how long one call to a node may take before it counts as no answer (504 where an operation waits for it). */
  chainRpcTimeoutS: number;
}

/** Raised by {@link loadConfig} with one line per invalid variable. */
export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join("\n  - ")}`);
    this.name = "ConfigError";
  }
}

/**
 * Reads the variables of `env`, each as one type, collecting one line per invalid value in
 * `problems` (the fallback is used meanwhile, so every bad variable is reported at once).
 */
class EnvReader {
  readonly problems: string[] = [];

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /** The value, or `fallback` when unset or empty. */
  str(name: string, fallback: string): string {
    const v = this.env[name];
    return v === undefined || v === "" ? fallback : v;
  }

  /** The value, or undefined when unset or empty. */
  optional(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v === "" ? undefined : v;
  }

  /** A decimal integer from `min` to `max`. */
  int(name: string, fallback: number, min: number, max: number): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return n;
  }

  /** One of `allowed`. */
  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
    const raw = this.str(name, fallback);
    if (!(allowed as readonly string[]).includes(raw)) {
      this.problems.push(`${name} must be one of ${allowed.join(", ")}, got "${raw}"`);
      return fallback;
    }
    return raw as T;
  }

  /** `true`/`1` or `false`/`0`. */
  bool(name: string, fallback: boolean): boolean {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    if (raw === "true" || raw === "1") return true;
    if (raw === "false" || raw === "0") return false;
    this.problems.push(`${name} must be true or false, got "${raw}"`);
    return fallback;
  }

  /** A secret of at least 32 characters, or undefined when unset. */
  secret(name: string): string | undefined {
    const v = this.optional(name);
    if (v !== undefined && v.length < 32) this.problems.push(`${name} must be at least 32 characters long`);
    return v;
  }

  /** `<requests>/<window seconds>`, or `off` (null). */
  quota(name: string, fallback: RateQuota): RateQuota | null {
    const raw = this.optional(name);
    if (raw === undefined) return { ...fallback };
    if (raw === "off") return null;
    const match = /^(\d{1,9})\/(\d{1,6})$/.exec(raw);
    if (!match || Number(match[1]) < 1 || Number(match[2]) < 1) {
      this.problems.push(`${name} must be <requests>/<window seconds> (for example 600/60) or off, got "${raw}"`);
      return { ...fallback };
    }
    return { points: Number(match[1]), windowS: Number(match[2]) };
  }

  /**
   * Caps variable `name` (`WITHDRAWAL_CAPS`, `TRANSFER_CAPS`) merged over `defaults`: JSON
   * `{"<currency>": {"perWithdrawal" or "perTransaction", "daily", "monthly"}}` with decimal
   * strings (at most 12 integer digits and 8 decimals); currency codes lower-cased. The caps need
   * not be in order (Set Limits' rule is for customers).
   */
  caps(name: string, defaults: Readonly<Record<string, CapSet>>): Record<string, CapSet> {
    const raw = this.optional(name);
    if (raw === undefined) return { ...defaults };
    try {
      const parsed = JSON.parse(raw) as Record<string, { perWithdrawal?: unknown; perTransaction?: unknown; daily?: unknown; monthly?: unknown }>;
      const merged: Record<string, CapSet> = { ...defaults };
      for (const [code, cap] of Object.entries(parsed)) {
        const values = [cap.perTransaction ?? cap.perWithdrawal, cap.daily, cap.monthly];
        // The contract's DecimalAmount: at most 12 integer digits and 8 decimals (Get Limits answers them).
        if (!values.every((v) => typeof v === "string" && /^\d{1,12}(\.\d{1,8})?$/.test(v))) throw new Error(`caps of ${code}`);
        const [perTransaction, daily, monthly] = values as string[];
        merged[code.toLowerCase()] = { perTransaction, daily, monthly } as CapSet;
      }
      return merged;
    } catch {
      this.problems.push(`${name} must be JSON like {"btc": {"perWithdrawal": "2", "daily": "5", "monthly": "20"}} with decimal strings of at most 12 integer digits and 8 decimals`);
      return { ...defaults };
    }
  }

  /** `METRICS_TOKEN`: at least 16 printable characters without spaces, or undefined. */
  metricsToken(): string | undefined {
    const v = this.optional("METRICS_TOKEN");
    if (v !== undefined && (v.length < 16 || !/^[\x21-\x7e]+$/.test(v))) this.problems.push("METRICS_TOKEN must be at least 16 printable characters without spaces");
    return v;
  }
}

/**
 * Every variable, in the order its problems are reported: how its {@link Config} field is read
 * (name, default, bounds). A declarative table, one line per field.
 */
const VARIABLES: { [K in keyof Config]: (env: EnvReader) => Config[K] } = {
  port: (e) => e.int("PORT", 8080, 0, 65535),
  host: (e) => e.str("HOST", "127.0.0.1"),
  role: (e) => e.oneOf("ROLE", "all", ["api", "worker", "all"] as const),
  databaseUrl: (e) => e.optional("DATABASE_URL"),
  databaseSessionUrl: (e) => e.optional("DATABASE_SESSION_URL"),
  databasePoolMode: (e) => e.oneOf("DATABASE_POOL_MODE", "session", ["session", "transaction"] as const),
  databaseWaitS: (e) => e.int("DATABASE_WAIT_S", 10, 1, 120),
  dataDir: (e) => e.str("DATA_DIR", "./.data"),
  masterApiKey: (e) => e.secret("MASTER_API_KEY"),
  secretsKey: (e) => e.secret("SECRETS_KEY"),
  sessionTtlS: (e) => e.int("SESSION_TTL_S", 3600, 60, 86_400 * 30),
  userTokenTtlS: (e) => e.int("USER_TOKEN_TTL_S", 900, 60, 86_400),
  custodyProvider: (e) => e.oneOf("CUSTODY_PROVIDER", "sandbox", ["sandbox"] as const),
  sandboxSeed: (e) => e.str("SANDBOX_SEED", "sandbox-default-seed"),
  bodyLimitBytes: (e) => e.int("BODY_LIMIT_BYTES", 1_048_576, 1024, 100 * 1_048_576),
  metricsToken: (e) => e.metricsToken(),
  logLevel: (e) => e.oneOf("LOG_LEVEL", "info", ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const),
  allowPrivateNetworkTargets: (e) => e.bool("ALLOW_PRIVATE_NETWORK_TARGETS", false),
  smtpUrl: (e) => e.optional("SMTP_URL"),
  mailFrom: (e) => e.str("MAIL_FROM", "Custody Platform <no-reply@custody.invalid>"),
  withdrawalCodeTtlS: (e) => e.int("WITHDRAWAL_CODE_TTL_S", 600, 30, 86_400),
  withdrawalCodeMaxAttempts: (e) => e.int("WITHDRAWAL_CODE_MAX_ATTEMPTS", 5, 1, 100),
  withdrawalCodeMaxTotalAttempts: (e) => e.int("WITHDRAWAL_CODE_MAX_TOTAL_ATTEMPTS", 15, 1, 1000),
  withdrawalCodeMaxResends: (e) => e.int("WITHDRAWAL_CODE_MAX_RESENDS", 3, 0, 100),
  withdrawalCodeResendIntervalS: (e) => e.int("WITHDRAWAL_CODE_RESEND_INTERVAL_S", 30, 0, 3600),
  rateLimitIp: (e) => e.quota("RATE_LIMIT_IP", DEFAULT_RATE_LIMITS.ip),
  rateLimitCredential: (e) => e.quota("RATE_LIMIT_CREDENTIAL", DEFAULT_RATE_LIMITS.credential),
  rateLimitAuthFailures: (e) => e.quota("RATE_LIMIT_AUTH_FAILURES", DEFAULT_RATE_LIMITS.authFailures),
  rateLimitCodes: (e) => e.quota("RATE_LIMIT_CODES", DEFAULT_RATE_LIMITS.codes),
  rateLimitSyncMs: (e) => e.int("RATE_LIMIT_SYNC_MS", 1000, 0, 60_000),
  trustProxy: (e) => e.int("TRUST_PROXY", 0, 0, 10),
  headersTimeoutS: (e) => e.int("HEADERS_TIMEOUT_S", 10, 1, 600),
  requestTimeoutS: (e) => e.int("REQUEST_TIMEOUT_S", 30, 1, 3600),
  maxConnectionsPerAddress: (e) => e.int("MAX_CONNECTIONS_PER_ADDRESS", 64, 0, 100_000),
  maxBodyBytesInFlight: (e) => e.int("MAX_BODY_BYTES_IN_FLIGHT", 64 * 1_048_576, 0, 16 * 1024 * 1_048_576),
  maxBodyBytesPerCaller: (e) => e.int("MAX_BODY_BYTES_PER_CALLER", 0, 0, 16 * 1024 * 1_048_576),
  withdrawalCaps: (e) => e.caps("WITHDRAWAL_CAPS", DEFAULT_WITHDRAWAL_CAPS),
  transferCaps: (e) => e.caps("TRANSFER_CAPS", DEFAULT_TRANSFER_CAPS),
  allowlistCooldownS: (e) => e.int("ALLOWLIST_COOLDOWN_S", DEFAULT_ALLOWLIST_COOLDOWN_S, 0, MAX_ALLOWLIST_COOLDOWN_S),
  authorizationTtlDays: (e) => e.int("AUTHORIZATION_TTL_DAYS", 7, 1, 30),
  cardsPerWallet: (e) => e.int("CARDS_PER_WALLET", 10, 1, 1000),
  quoteTtlS: (e) => e.int("QUOTE_TTL_S", 15, 1, 300),
  sandboxSpreadBps: (e) => e.int("SANDBOX_SPREAD_BPS", 20, 0, 1000),
  sandboxFeeBps: (e) => e.int("SANDBOX_FEE_BPS", 10, 0, 1000),
  pollerIntervalS: (e) => e.int("POLLER_INTERVAL_S", 30, 1, 86_400),
  imapTimeoutS: (e) => e.int("IMAP_TIMEOUT_S", 15, 1, 300),
  outboxIntervalS: (e) => e.int("OUTBOX_INTERVAL_S", 10, 1, 3600),
  payoutIntervalS: (e) => e.int("PAYOUT_INTERVAL_S", 1, 1, 3600),
  webhookTimeoutS: (e) => e.int("WEBHOOK_TIMEOUT_S", 10, 1, 60),
  webhookRetryBaseS: (e) => e.int("WEBHOOK_RETRY_BASE_S", 5, 1, 3600),
  inboundSecretOverlapS: (e) => e.int("INBOUND_SECRET_OVERLAP_S", 86_400, 0, 2_592_000),
  jobLockLifetimeS: (e) => e.int("JOB_LOCK_LIFETIME_S", 120, 2, 3600),
  shutdownTimeoutS: (e) => e.int("SHUTDOWN_TIMEOUT_S", 25, 1, 600),
  clockMoveBudgetS: (e) => e.int("CLOCK_MOVE_BUDGET_S", 5, 1, 60),
  liveChains: (e) => readLiveChains(e),
  custodyMnemonicFile: (e) => e.optional("CUSTODY_MNEMONIC_FILE"),
  chainRpcTimeoutS: (e) => e.int("CHAIN_RPC_TIMEOUT_S", 10, 1, 120),
};

/** The checks of the connection URLs and of `SECRETS_KEY` with `DATABASE_URL`, reported before the per-variable problems. */
function checkConnections(e: EnvReader): void {
  const databaseUrl = e.optional("DATABASE_URL");
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    e.problems.push('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  const sessionUrl = e.optional("DATABASE_SESSION_URL");
  if (sessionUrl !== undefined && (databaseUrl === undefined || !/^postgres(ql)?:\/\//.test(sessionUrl))) {
    e.problems.push("DATABASE_SESSION_URL must be a postgres:// or postgresql:// URL to the database of DATABASE_URL, and needs DATABASE_URL");
  }
  // A generated key would have to live in the database every replica shares, where a dump gives it
  // away (docs/decisions/credentials-and-tokens.md "Secrets at rest"): with an external database the operator sets it.
  if (databaseUrl !== undefined && e.optional("SECRETS_KEY") === undefined) {
    e.problems.push(
      "SECRETS_KEY must be set (at least 32 characters) when DATABASE_URL is set; an install whose earlier version generated it keeps it in the secrets_key row of service_setting: set SECRETS_KEY to that value to keep its API keys and tokens valid",
    );
  }
  const smtpUrl = e.optional("SMTP_URL");
  if (smtpUrl !== undefined && !/^smtps?:\/\//.test(smtpUrl)) e.problems.push("SMTP_URL must be an smtp:// or smtps:// URL");
}

/**
 * Reads and validates the configuration from `env` (default `process.env`): {@link VARIABLES}, then the bounds between variables
 * (`REQUEST_TIMEOUT_S` ≥ `HEADERS_TIMEOUT_S`; `MAX_BODY_BYTES_IN_FLIGHT` 0 or ≥ `BODY_LIMIT_BYTES`; `MAX_BODY_BYTES_PER_CALLER` 0 or between `BODY_LIMIT_BYTES` and `MAX_BODY_BYTES_IN_FLIGHT`).
 * @throws ConfigError listing every invalid variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const reader = new EnvReader(env);
  checkConnections(reader);
  const config = Object.fromEntries(Object.entries(VARIABLES).map(([field, read]) => [field, read(reader)])) as unknown as Config;
  const { problems } = reader;
  if (config.requestTimeoutS < config.headersTimeoutS) problems.push("REQUEST_TIMEOUT_S must be at least HEADERS_TIMEOUT_S");
  if (config.maxBodyBytesInFlight > 0 && config.maxBodyBytesInFlight < config.bodyLimitBytes) problems.push("MAX_BODY_BYTES_IN_FLIGHT must be 0 or at least BODY_LIMIT_BYTES");
  if (config.maxBodyBytesPerCaller > 0 && (config.maxBodyBytesPerCaller < config.bodyLimitBytes || (config.maxBodyBytesInFlight > 0 && config.maxBodyBytesPerCaller > config.maxBodyBytesInFlight))) {
    problems.push("MAX_BODY_BYTES_PER_CALLER must be 0, or between BODY_LIMIT_BYTES and MAX_BODY_BYTES_IN_FLIGHT");
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * The compose topology (docs/operations.md "Containers"): no container engine runs here, so the
 * document itself is checked: two API replicas and a worker on one PostgreSQL, and the optional
 * PgBouncer profile in transaction mode with the session URL kept direct (docs/operations.md
 * "PgBouncer"). Every process's settings pass the service's own configuration check.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../../src/config.js";

interface Service {
  profiles?: string[];
  image?: string;
  deploy?: { replicas?: number };
  environment?: Record<string, string>;
  healthcheck?: { disable?: boolean; test?: string[] };
}

const compose = parse(readFileSync(new URL("../../docker-compose.yml", import.meta.url), "utf8")) as { services: Record<string, Service> };
const { db, api, worker, pgbouncer } = compose.services;

/** `${NAME:-default}` and `${NAME:?message}` as compose expands them with `vars` set. */
function expand(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::-([^}]*)|:\?[^}]*)?\}/g, (_m, name: string, fallback: string | undefined) => vars[name] ?? fallback ?? "");
}

const KEYS = { MASTER_API_KEY: "m".repeat(40), SECRETS_KEY: "s".repeat(40) };

describe("docker-compose.yml", () => {
  it("runs two API replicas and one worker on the one PostgreSQL", () => {
    expect(db?.image).toMatch(/^postgres:/);
    expect(api?.deploy?.replicas).toBe(2);
    expect(api?.environment?.ROLE).toBe("api");
    expect(worker?.environment?.ROLE).toBe("worker");
    expect(worker?.healthcheck?.disable).toBe(true);
    for (const service of [api, worker]) {
      const env = Object.fromEntries(Object.entries(service?.environment ?? {}).map(([k, v]) => [k, expand(String(v), KEYS)]));
      expect(env.DATABASE_URL).toBe("postgres://platform:platform@db:5432/platform");
      expect(() => loadConfig(env)).not.toThrow();
    }
  });

  it("offers PgBouncer in transaction mode as a profile; through it the pooled URL changes and the session URL stays direct", () => {
    expect(pgbouncer?.profiles).toEqual(["pgbouncer"]);
    expect(pgbouncer?.environment?.POOL_MODE).toBe("transaction");
    const vars = { ...KEYS, POOLED_DATABASE_URL: "postgres://platform:platform@pgbouncer:5432/platform", DATABASE_POOL_MODE: "transaction" };
    for (const service of [api, worker]) {
      const env = Object.fromEntries(Object.entries(service?.environment ?? {}).map(([k, v]) => [k, expand(String(v), vars)]));
      expect(env.DATABASE_URL).toContain("@pgbouncer:");
      expect(env.DATABASE_SESSION_URL).toContain("@db:5432/");
      const config = loadConfig(env);
      expect(config.databasePoolMode).toBe("transaction");
    }
  });
});

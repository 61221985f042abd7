/**
 * The compose topology (docs/operations.md "Containers" and "Failover"): no container engine runs
 * here, so the document itself is checked: three Patroni nodes with etcd behind HAProxy, two API
 * replicas and a worker reaching the database through HAProxy only, and the optional PgBouncer
 * profile in transaction mode with the session URL kept on HAProxy (docs/operations.md
 * "PgBouncer"). The database tier's templates carry the failover contract (strict synchronous
 * mode, the etcd v2 client, HAProxy's leader check). Every process's settings pass the service's
 * own configuration check. `tests/process/failover.test.ts` runs the same templates for real.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../../src/config.js";

interface Service {
  profiles?: string[];
  image?: string;
  command?: string[];
  deploy?: { replicas?: number };
  environment?: Record<string, string>;
  healthcheck?: { disable?: boolean; test?: string[] };
}

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
// `<<:` merge keys (YAML 1.1), as compose reads them
const compose = parse(read("docker-compose.yml"), { merge: true }) as { services: Record<string, Service> };
const { etcd, pg1, pg2, pg3, haproxy, api, worker, pgbouncer } = compose.services;

/** `${NAME:-default}` and `${NAME:?message}` as compose expands them with `vars` set. */
function expand(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::-([^}]*)|:\?[^}]*)?\}/g, (_m, name: string, fallback: string | undefined) => vars[name] ?? fallback ?? "");
}

const KEYS = { MASTER_API_KEY: "m".repeat(40), SECRETS_KEY: "s".repeat(40) };
const envOf = (service: Service | undefined, vars: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(service?.environment ?? {}).map(([k, v]) => [k, expand(String(v), vars)]));

describe("docker-compose.yml", () => {
  it("runs PostgreSQL as three Patroni nodes on one etcd (v2 API) behind HAProxy, with Patroni's timing rule", () => {
    expect(etcd?.environment?.ETCD_ENABLE_V2).toBe("true");
    const names = [pg1, pg2, pg3].map((node) => {
      expect(node?.command).toEqual(["patroni"]);
      const env = node?.environment ?? {};
      expect(env.ETCD_HOSTS).toBe("etcd:2379");
      expect(Number(env.LOOP_WAIT) + 2 * Number(env.RETRY_TIMEOUT)).toBeLessThanOrEqual(Number(env.TTL));
      return env.NODE_NAME;
    });
    expect(new Set(names)).toEqual(new Set(["pg1", "pg2", "pg3"]));
    expect(haproxy?.command).toEqual(["haproxy"]);
    expect([1, 2, 3].map((n) => haproxy?.environment?.[`NODE${n}_PG`])).toEqual(["pg1:5432", "pg2:5432", "pg3:5432"]);
  });

  it("keeps the failover contract in the templates: strict synchronous mode, pg_rewind, etcd's v2 client, HAProxy on GET /primary", () => {
    const patroni = parse(read("ops/ha/patroni.yml.template")) as { etcd?: unknown; etcd3?: unknown; bootstrap: { dcs: Record<string, unknown> & { postgresql: { use_pg_rewind: boolean } } } };
    expect(patroni.bootstrap.dcs).toMatchObject({ synchronous_mode: true, synchronous_mode_strict: true, postgresql: { use_pg_rewind: true } });
    expect(patroni.etcd).toBeDefined();
    expect(patroni.etcd3).toBeUndefined();
    const proxy = read("ops/ha/haproxy.cfg.template");
    expect(proxy).toMatch(/^\s*option httpchk GET \/primary$/m);
    expect(proxy).toMatch(/^\s*default-server .*on-marked-down shutdown-sessions/m);
  });

  it("runs two API replicas and one worker, both database URLs on HAProxy", () => {
    expect(api?.deploy?.replicas).toBe(2);
    expect(api?.environment?.ROLE).toBe("api");
    expect(worker?.environment?.ROLE).toBe("worker");
    expect(worker?.healthcheck?.disable).toBe(true);
    for (const service of [api, worker]) {
      const env = envOf(service, KEYS);
      expect(env.DATABASE_URL).toBe("postgres://platform:platform@haproxy:5432/platform");
      expect(env.DATABASE_SESSION_URL).toBe("postgres://platform:platform@haproxy:5432/platform");
      expect(() => loadConfig(env)).not.toThrow();
    }
  });

  it("offers PgBouncer in transaction mode as a profile in front of HAProxy; the session URL stays on HAProxy", () => {
    expect(pgbouncer?.profiles).toEqual(["pgbouncer"]);
    expect(pgbouncer?.environment?.POOL_MODE).toBe("transaction");
    expect(pgbouncer?.environment?.DATABASE_URL).toContain("@haproxy:5432/");
    const vars = { ...KEYS, POOLED_DATABASE_URL: "postgres://platform:platform@pgbouncer:5432/platform", DATABASE_POOL_MODE: "transaction" };
    for (const service of [api, worker]) {
      const env = envOf(service, vars);
      expect(env.DATABASE_URL).toContain("@pgbouncer:");
      expect(env.DATABASE_SESSION_URL).toContain("@haproxy:5432/");
      expect(loadConfig(env).databasePoolMode).toBe("transaction");
    }
  });
});

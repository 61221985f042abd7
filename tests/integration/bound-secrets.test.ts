/**
 * Secrets' hashes stay out of SQL text (docs/performance.md "What keeps the request path cheap"): MikroORM 7.2 inlines every
 * value into the statement it sends, so the statements that carry an API key's keyed hash (the
 * per-request credential lookup, a new credential's insert, the master key's hash) run on the
 * pool with bound parameters (src/db/sql.ts). The test watches both paths: every statement
 * the ORM formats (its `onQuery` hook) and every query sent on the pool.
 */
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { SecretBox } from "../../src/modules/identity/secrets.js";
import { TEST_MASTER_KEY, TEST_SECRETS_KEY, useTestApp } from "../support/app.js";
import { BASE, Walk } from "../support/fixtures.js";

const app = useTestApp();

describe("secrets' hashes in SQL", () => {
  it("are bound parameters of the pool's statements and never part of a statement's text", async () => {
    const walk = new Walk(app.express);
    const { customerId } = await walk.tenant("bound-secrets-co");

    const ormStatements: string[] = [];
    app.orm.config.set("onQuery", (sql: string, params: readonly unknown[]) => {
      ormStatements.push(`${sql} ${JSON.stringify(params)}`);
      return sql;
    });
    const pool = await app.orm.em.getConnection().getNativeClient();
    const poolQueries: { text: string; values: unknown[] }[] = [];
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    (pool as { query: unknown }).query = (config: string | pg.QueryConfig, values?: unknown[]) => {
      const text = typeof config === "string" ? config : config.text;
      poolQueries.push({ text, values: (typeof config === "string" ? values : (config.values ?? values)) ?? [] });
      return query(config, values);
    };
    try {
      const { secret } = await walk.ownerKey(customerId);
      const read = await app.api().get(`${BASE}/currencies`).set("x-api-key", secret);
      expect(read.status).toBe(200);
      const master = await app.api().get(`${BASE}/currencies`).set("x-api-key", TEST_MASTER_KEY);
      expect(master.status).toBe(403);

      const box = new SecretBox(TEST_SECRETS_KEY);
      const hashes = [box.hash(secret), box.hash(TEST_MASTER_KEY)];
      expect(ormStatements.length, "the ORM hook saw the requests' other statements").toBeGreaterThan(0);
      for (const hash of hashes) {
        expect(ormStatements.filter((s) => s.includes(hash)), "no ORM statement carries the hash").toEqual([]);
        expect(poolQueries.filter((q) => q.text.includes(hash)), "no pool statement text carries the hash").toEqual([]);
      }
      // The key's hash did reach the database: as a bound value of the credential insert and of the lookup.
      const bound = poolQueries.filter((q) => q.values.includes(hashes[0]));
      expect(bound.map((q) => q.text.trim().split(/\s+/)[0])).toEqual(["insert", "select"]);
    } finally {
      app.orm.config.set("onQuery", (sql: string) => sql);
      (pool as { query: unknown }).query = query;
    }
  });
});

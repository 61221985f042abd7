/**
 * The credential cache across replicas (docs/decisions/credentials-and-tokens.md "The credential
 * cache"): two service processes (`ROLE=api`) on one PostgreSQL, both under a steady read load
 * with one owner key, so both hold the key in their caches. The key is deleted through replica A:
 * every request A receives after the deletion answered is refused, and B refuses every request
 * sent later than its NOTIFY takes to arrive, far within the cache's bound (the bound is what a
 * lost notification would cost; tests/integration/credential-cache.test.ts shows it).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import request from "supertest";
import { createTestDatabase } from "../support/app.js";
import { BASE, Walk } from "../support/fixtures.js";
import { startService, type ServiceProcess } from "../support/service-process.js";
import { CREDENTIAL_CACHE_TTL_MS } from "../../src/modules/identity/credential-cache.js";

/** What the NOTIFY may take to reach the other replica under this load, ms (a third of the bound). */
const NOTICE_MS = 1000;
/** Requests in flight per replica. */
const IN_FLIGHT = 4;

let drop: () => Promise<void>;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  const db = await createTestDatabase();
  drop = db.drop;
  const env = { DATABASE_URL: db.url, ROLE: "api", LOG_LEVEL: "warn", RATE_LIMIT_IP: "off", RATE_LIMIT_CREDENTIAL: "off", RATE_LIMIT_AUTH_FAILURES: "off" };
  // both start at once on the fresh database: they take turns on the migrations (src/db/orm.ts `initORM`)
  services.push(...(await Promise.all([startService(env), startService(env)])));
}, 120_000);

afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  await drop?.();
});

/** One answered request: when it was sent and answered (epoch ms), and its status. */
interface Answer {
  sentAt: number;
  answeredAt: number;
  status: number;
}

/** Reads `/currencies` with `key` on `base`, `IN_FLIGHT` at a time, until `stop()` is true. */
async function load(base: string, key: string, stop: () => boolean): Promise<Answer[]> {
  const answers: Answer[] = [];
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (!stop()) {
        const sentAt = Date.now();
        const status = await fetch(`${base}/api/v1/currencies`, { headers: { "x-api-key": key } }).then(
          async (r) => (await r.arrayBuffer(), r.status),
          () => 0,
        );
        answers.push({ sentAt, answeredAt: Date.now(), status });
      }
    }),
  );
  return answers;
}

describe("two replicas under a read load", () => {
  it("a credential deleted through one replica is refused by the other within the NOTIFY's delay", { timeout: 60_000 }, async () => {
    const [a, b] = services as [ServiceProcess, ServiceProcess];
    const walk = new Walk(a.base);
    const { customerId, key, credentialId } = await walk.tenant("replica-cache");
    const operator = await walk.operatorToken();
    let stopped = false;
    const loads = Promise.all([load(a.base, key, () => stopped), load(b.base, key, () => stopped)]);
    await new Promise((r) => setTimeout(r, 1500));
    const deleted = await request(a.base).delete(`${BASE}/customers/${customerId}/credentials/${credentialId}`).set("Authorization", `Bearer ${operator}`);
    const deletedAt = Date.now();
    expect(deleted.status, JSON.stringify(deleted.body)).toBeLessThan(300);
    await new Promise((r) => setTimeout(r, NOTICE_MS + 1500));
    stopped = true;
    const [onA, onB] = await loads;

    // both served the key before (from their caches: nothing else changes between requests)
    for (const answers of [onA, onB]) {
      const before = answers.filter((x) => x.answeredAt < deletedAt - 200);
      expect(before.length).toBeGreaterThan(20);
      expect(before.every((x) => x.status === 200), JSON.stringify(before.filter((x) => x.status !== 200).slice(0, 3))).toBe(true);
    }
    // A: refused at once, from the first request sent after the deletion answered
    const afterOnA = onA.filter((x) => x.sentAt >= deletedAt);
    expect(afterOnA.length).toBeGreaterThan(20);
    expect(afterOnA.filter((x) => x.status !== 401)).toEqual([]);
    // B: the last 200 was sent before the NOTIFY could have taken NOTICE_MS, and everything after is refused
    const lastAdmittedOnB = Math.max(...onB.filter((x) => x.status === 200).map((x) => x.sentAt));
    expect(lastAdmittedOnB - deletedAt, `B admitted a request sent ${lastAdmittedOnB - deletedAt} ms after the deletion answered`).toBeLessThan(NOTICE_MS);
    expect(NOTICE_MS).toBeLessThan(CREDENTIAL_CACHE_TTL_MS);
    const afterOnB = onB.filter((x) => x.sentAt >= deletedAt + NOTICE_MS);
    expect(afterOnB.length).toBeGreaterThan(20);
    expect(afterOnB.filter((x) => x.status !== 401)).toEqual([]);
  });
});

/**
 * Memory-first rate limits across replicas (src/http/rate-limit-sync.ts; docs/decisions/
 * requests-and-validation.md "Rate limits"): two service processes on one PostgreSQL, each
 * counting one owner key's requests in memory and syncing every `RATE_LIMIT_SYNC_MS`. Both are
 * driven at a steady pace past the credential bucket; the requests admitted in the window must
 * stay within the stated bound, `points` plus what the other replica admits in one sync interval
 * (and a statement's time), and must reach `points` (the replicas do not starve each other). A
 * full bucket then refuses on both, without a database round trip of its own. The two start
 * together on a fresh database, so their migrations at start take turns.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../support/app.js";
import { Walk } from "../support/fixtures.js";
import { startService, type ServiceProcess } from "../support/service-process.js";

const POINTS = 150;
const SYNC_MS = 500;
/** Requests per second each replica is sent. */
const PACE = 60;

let drop: () => Promise<void>;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  const db = await createTestDatabase();
  drop = db.drop;
  const env = {
    DATABASE_URL: db.url,
    ROLE: "api",
    LOG_LEVEL: "warn",
    RATE_LIMIT_IP: "off",
    RATE_LIMIT_AUTH_FAILURES: "off",
    RATE_LIMIT_CREDENTIAL: `${POINTS}/60`,
    RATE_LIMIT_SYNC_MS: String(SYNC_MS),
  };
  // both start at once on the fresh database: they take turns on the migrations (src/db/orm.ts `initORM`)
  services.push(...(await Promise.all([startService(env), startService(env)])));
}, 120_000);

afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  await drop?.();
});

/** Sends `GET /currencies` with `key` to `base` at `PACE` per second for `ms`; @returns the statuses. */
async function drive(base: string, key: string, ms: number): Promise<number[]> {
  const statuses: Promise<number>[] = [];
  const started = Date.now();
  for (let n = 0; Date.now() - started < ms; n++) {
    statuses.push(fetch(`${base}/api/v1/currencies`, { headers: { "x-api-key": key } }).then((r) => r.status));
    const next = started + ((n + 1) * 1000) / PACE;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())));
  }
  return Promise.all(statuses);
}

describe("two replicas, one credential bucket", () => {
  it("admit about the bucket together: at least its points, at most its points plus one sync interval of the other replica", { timeout: 60_000 }, async () => {
    const [a, b] = services as [ServiceProcess, ServiceProcess];
    // a fresh owner key through replica A (the operator session and the customer are not limited by the credential bucket of this key)
    const { key } = await new Walk(a.base).tenant("replicas-corp");
    const [fromA, fromB] = await Promise.all([drive(a.base, key, 4000), drive(b.base, key, 4000)]);
    const admitted = [...fromA, ...fromB].filter((s) => s === 200).length;
    const refused = [...fromA, ...fromB].filter((s) => s === 429).length;
    expect(admitted + refused).toBe(fromA.length + fromB.length);
    // the other replica admits at most PACE × (SYNC_MS + 250 ms for the statement) / 1000 between two syncs
    const bound = POINTS + Math.ceil((PACE * (SYNC_MS + 250)) / 1000);
    expect(admitted, `admitted ${admitted} of ${fromA.length + fromB.length}; bound ${bound}`).toBeLessThanOrEqual(bound);
    expect(admitted).toBeGreaterThanOrEqual(POINTS);
    // both replicas know the bucket is full: the last requests of each are refused
    expect(fromA.slice(-5)).toEqual([429, 429, 429, 429, 429]);
    expect(fromB.slice(-5)).toEqual([429, 429, 429, 429, 429]);
  });
});

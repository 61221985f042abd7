/**
 * Memory-first rate limits across replicas (src/http/rate-limit-sync.ts; docs/decisions/
 * requests-and-validation.md "Rate limits"): two service processes on one PostgreSQL, each
 * counting one owner key's requests in memory and syncing every `RATE_LIMIT_SYNC_MS`. Both are
 * driven at a steady pace past the credential bucket; the requests admitted in the window must
 * stay within the stated bound, `points` plus what the other replica admits in one sync interval
 * (and a statement's time), and must reach `points` (the replicas do not starve each other). A
 * full bucket then refuses on both, without a database round trip of its own. A burst as fast as
 * the replicas answer passes the quota by at most one replica's share between syncs; failed guesses
 * from one address lock it out on both replicas within the same bound, while the partner's working
 * key from that address goes on. The two start together on a fresh database, so their migrations
 * at start take turns.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../support/app.js";
import { Walk } from "../support/fixtures.js";
import { startService, type ServiceProcess } from "../support/service-process.js";

const POINTS = 150;
const SYNC_MS = 500;
/** What one replica may spend of a key's bucket between two syncs (src/http/rate-limit-sync.ts `SYNC_SHARE`). */
const share = (points: number): number => Math.max(1, Math.floor(points / 4));
const AUTH_FAILURES = 20;
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
    RATE_LIMIT_AUTH_FAILURES: `${AUTH_FAILURES}/300`,
    RATE_LIMIT_CREDENTIAL: `${POINTS}/60`,
    TRUST_PROXY: "1",
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

/** Runs `count` calls of `call(i)` with at most `inFlight` at once; @returns the statuses in call order. */
async function burst(count: number, inFlight: number, call: (i: number) => Promise<number>): Promise<number[]> {
  const statuses: number[] = new Array<number>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) {
        const i = next++;
        statuses[i] = await call(i);
      }
    }),
  );
  return statuses;
}

describe("bounds across replicas (docs/security.md \"Failed authentications\", docs/decisions/requests-and-validation.md \"Across replicas\")", () => {
  it("600 requests of one key alternating between the replicas as fast as they answer pass the quota by at most one share", { timeout: 60_000 }, async () => {
    const [a, b] = services as [ServiceProcess, ServiceProcess];
    const { key } = await new Walk(a.base).tenant("replicas-burst");
    const statuses = await burst(600, 16, (i) => fetch(`${(i % 2 === 0 ? a : b).base}/api/v1/currencies`, { headers: { "x-api-key": key } }).then((r) => r.status));
    const admitted = statuses.filter((s) => s === 200).length;
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(admitted, `admitted ${admitted} of 600`).toBeGreaterThanOrEqual(POINTS);
    expect(admitted, `admitted ${admitted} of 600; bound ${POINTS + share(POINTS)}`).toBeLessThanOrEqual(POINTS + share(POINTS));
  });

  it("100 wrong keys from the partner's address, alternating between replicas: at most 20 + one share are checked, the partner's key answers 200 throughout", { timeout: 60_000 }, async () => {
    const [a, b] = services as [ServiceProcess, ServiceProcess];
    const { key } = await new Walk(a.base).tenant("replicas-lockout");
    const address = "198.18.0.10";
    const call = (service: ServiceProcess, headers: Record<string, string>) =>
      fetch(`${service.base}/api/v1/currencies`, { headers: { "x-forwarded-for": address, ...headers } }).then(async (r) => ({ status: r.status, text: await r.text() }));
    // the partner's key at work on both replicas first
    for (const service of [a, b]) expect((await call(service, { "x-api-key": key })).status).toBe(200);
    const guesses: number[] = [];
    const valid: number[] = [];
    for (let i = 0; i < 100; i++) {
      const service = i % 2 === 0 ? a : b;
      // wrong owner keys and wrong master keys, both guesses
      const wrong: Record<string, string> = i % 3 === 0 ? { "x-master-api-key": `not-the-master-key-${i}` } : { "x-api-key": `sk_wrong-${i}-${"0".repeat(40)}` };
      guesses.push((await call(service, wrong)).status);
      if (i % 5 === 0) valid.push((await call(i % 10 === 0 ? b : a, { "x-api-key": key })).status);
    }
    const checked = guesses.filter((s) => s === 401).length;
    expect(guesses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    expect(checked, `guesses checked: ${checked}`).toBeGreaterThanOrEqual(AUTH_FAILURES);
    expect(checked, `guesses checked: ${checked}`).toBeLessThanOrEqual(AUTH_FAILURES + share(AUTH_FAILURES));
    expect(valid.every((s) => s === 200), `the partner's key: ${valid.join(",")}`).toBe(true);
    // the address is locked out on both replicas for a request without a known credential
    await new Promise((resolve) => setTimeout(resolve, SYNC_MS * 2));
    for (const service of [a, b]) expect((await call(service, {})).status).toBe(429);
  });

  it("a replica learns a lock-out filled on the other one within a sync interval", { timeout: 30_000 }, async () => {
    const [a, b] = services as [ServiceProcess, ServiceProcess];
    const address = "198.18.0.20";
    const call = (service: ServiceProcess, headers: Record<string, string>) =>
      fetch(`${service.base}/api/v1/currencies`, { headers: { "x-forwarded-for": address, ...headers } }).then((r) => r.status);
    for (let i = 0; i < AUTH_FAILURES; i++) expect(await call(a, { "x-master-api-key": `wrong-master-${i}` })).toBe(401);
    expect(await call(a, {})).toBe(429);
    // B never counted this address: it learns the full bucket from the shared table at its next sync
    await new Promise((resolve) => setTimeout(resolve, SYNC_MS * 2 + 250));
    expect(await call(b, { "x-master-api-key": "wrong-master-on-b" })).toBe(429);
  });
});

/**
 * The one Idempotency-Key mechanism (src/modules/idempotency/service.ts; docs/idempotency.md) on a
 * real PostgreSQL, without HTTP: a repeat answers the first result marked duplicate; another
 * request with the key answers the caller's conflict error; concurrent identical requests make
 * exactly one effect and all get the same answer; a refused request leaves its key unused; scopes
 * isolate tenants, operations and callers; and the migrations carry the keys withdrawals and the
 * credit core stored before (and back on the way down), then the keys stored before keys were
 * scoped per caller (answering every caller of their tenant).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initORM, type MikroORM } from "../../src/db/orm.js";
import { Db, type Tx } from "../../src/db/sql.js";
import { ENTITIES } from "../../src/modules/entities.js";
import { claimKey, keyCaller, priorResult, releaseKey, requestFingerprint, runOnce, UNNAMED_CALLER, type IdempotencyScope, type IdempotentRequest } from "../../src/modules/idempotency/service.js";
import { createTestDatabase } from "../support/app.js";

let orm: MikroORM;
/** The mechanism's transactions (src/db/sql.ts), on the ORM's pool. */
let sql: Db;
let drop: () => Promise<void>;

beforeAll(async () => {
  const db = await createTestDatabase();
  drop = db.drop;
  orm = await initORM(db.url, ENTITIES);
  sql = new Db(await orm.em.getConnection().getNativeClient(), { named: true });
  // the effect the probes make: one row per result
  await orm.em.getConnection().execute(`create table idem_probe (id varchar(255) primary key, tenant text not null, note text not null)`, []);
});
afterAll(async () => {
  await orm?.close(true);
  await drop?.();
});

/** The conflict error of the probes' surface. */
class Reused extends Error {}

let seq = 0;
/** A request of tenant `tenant` (a fresh one by default) with `key` (fresh by default) and body `body`. */
function probe(body: unknown[], over: Partial<Omit<IdempotentRequest, "fingerprint" | "reused">> = {}): IdempotentRequest {
  seq += 1;
  return {
    customerId: over.customerId ?? `tenant-${seq}`,
    scope: over.scope ?? "withdrawal",
    caller: over.caller ?? UNNAMED_CALLER,
    key: over.key ?? `key-${seq}`,
    fingerprint: requestFingerprint(body),
    reused: () => new Reused("This Idempotency-Key was already used with a different request."),
  };
}

/** Writes the probe's effect: row `resultId`, optionally after `delayS` seconds inside the transaction. */
async function effect(tx: Tx, request: IdempotentRequest, resultId: string, note: string, delayS = 0): Promise<string> {
  if (delayS > 0) await tx.rows({ name: "probe_sleep", text: `select pg_sleep($1)` }, [delayS]);
  await tx.run({ name: "probe_effect", text: `insert into idem_probe (id, tenant, note) values ($1, $2, $3)` }, [resultId, request.customerId, note]);
  return note;
}

async function effects(tenant: string): Promise<{ id: string; note: string }[]> {
  return orm.em.fork().getConnection().execute(`select id, note from idem_probe where tenant = ? order by note`, [tenant]);
}

describe("one request after another", () => {
  it("runs a new key once; a repeat with the same body gets the first result, marked duplicate, and changes nothing", async () => {
    const request = probe(["pay", 100]);
    expect(await priorResult(sql, request)).toBeNull();
    const first = await runOnce(sql, request, (tx, id) => effect(tx, request, id, "first"));
    expect(first).toEqual({ duplicate: false, resultId: expect.any(String), value: "first" });
    const again = await runOnce(sql, { ...request }, (tx, id) => effect(tx, request, id, "again"));
    expect(again).toEqual({ duplicate: true, resultId: first.resultId });
    expect(await priorResult(sql, request)).toBe(first.resultId);
    expect(await effects(request.customerId)).toEqual([{ id: first.resultId, note: "first" }]);
  });

  it("answers the caller's conflict error for the same key with another body, before and inside the transaction", async () => {
    const request = probe(["pay", 100]);
    await runOnce(sql, request, (tx, id) => effect(tx, request, id, "first"));
    const other = { ...request, fingerprint: requestFingerprint(["pay", 101]) };
    await expect(priorResult(sql, other)).rejects.toBeInstanceOf(Reused);
    await expect(runOnce(sql, other, (tx, id) => effect(tx, other, id, "other"))).rejects.toThrow(
      new Reused("This Idempotency-Key was already used with a different request."),
    );
    expect(await effects(request.customerId)).toHaveLength(1);
  });

  it("keeps the result id the caller chose for a new key", async () => {
    const request = probe(["charge", 5]);
    const chosen = randomUUID();
    const done = await runOnce(sql, request, (tx, id) => effect(tx, request, id, "first"), chosen);
    expect(done.resultId).toBe(chosen);
    expect(await priorResult(sql, request)).toBe(chosen);
  });

  it("leaves the key unused when the change throws (rolled back with it): a later request, even with another body, runs", async () => {
    const request = probe(["pay", 100]);
    await expect(runOnce(sql, request, async (tx, id) => {
      await effect(tx, request, id, "refused");
      throw new Error("refused");
    })).rejects.toThrow("refused");
    expect(await priorResult(sql, request)).toBeNull();
    const other = { ...request, fingerprint: requestFingerprint(["pay", 50]) };
    expect((await runOnce(sql, other, (tx, id) => effect(tx, other, id, "later"))).duplicate).toBe(false);
    expect((await effects(request.customerId)).map((e) => e.note)).toEqual(["later"]);
  });

  it("releaseKey gives the key back in a transaction that commits other work", async () => {
    const request = probe(["pay", 100]);
    await sql.transaction(async (tx) => {
      const claim = await claimKey(tx, request, randomUUID());
      expect(claim.duplicate).toBe(false);
      await effect(tx, request, randomUUID(), "catch-up");
      await releaseKey(tx, request);
    });
    expect(await priorResult(sql, request)).toBeNull();
    expect((await effects(request.customerId)).map((e) => e.note)).toEqual(["catch-up"]);
  });

  it("refuses a key outside 1–255 characters (the surfaces validate the header first)", async () => {
    for (const key of ["", "k".repeat(256)]) {
      await expect(runOnce(sql, probe(["x"], { key }), async () => "never")).rejects.toBeInstanceOf(RangeError);
    }
    const longest = probe(["x"], { key: "k".repeat(255) });
    expect((await runOnce(sql, longest, (tx, id) => effect(tx, longest, id, "255"))).duplicate).toBe(false);
  });
});

describe("scopes", () => {
  it("isolates tenants: one key under two tenants makes two results", async () => {
    const a = probe(["pay", 1], { key: "shared" });
    const b = probe(["pay", 1], { key: "shared" });
    const ra = await runOnce(sql, a, (tx, id) => effect(tx, a, id, "a"));
    const rb = await runOnce(sql, b, (tx, id) => effect(tx, b, id, "b"));
    expect([ra.duplicate, rb.duplicate]).toEqual([false, false]);
    expect(ra.resultId).not.toBe(rb.resultId);
  });

  it("isolates operations: one tenant's key in two scopes makes two results, whatever the bodies", async () => {
    const scopes: IdempotencyScope[] = ["withdrawal", "credit"];
    const customerId = `scopes-${randomUUID()}`;
    const results = [];
    for (const [i, scope] of scopes.entries()) {
      const request = probe([scope, i], { customerId, key: "same-key", scope });
      results.push(await runOnce(sql, request, (tx, id) => effect(tx, request, id, scope)));
    }
    expect(results.map((r) => r.duplicate)).toEqual([false, false]);
    expect((await effects(customerId)).map((e) => e.note)).toEqual(["credit", "withdrawal"]);
  });
});

describe("callers (docs/idempotency.md \"Whose key it is\")", () => {
  it("names a caller by its user (every token), its credential (owner key and customer sessions alike), or the operator", () => {
    const user = keyCaller({ kind: "user", userId: "0B9F2C4E-8A61-4D3B-9C7E-5F1A2B3C4D5E" });
    expect(user).toBe("user:0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e");
    const credentialId = randomUUID();
    expect(keyCaller({ kind: "owner", credentialId })).toBe(`credential:${credentialId}`);
    expect(keyCaller({ kind: "customer-session", credentialId })).toBe(`credential:${credentialId}`);
    expect(keyCaller({ kind: "master" })).toBe("operator");
    expect(keyCaller({ kind: "operator-session" })).toBe("operator");
    expect(keyCaller(undefined)).toBe(UNNAMED_CALLER);
    expect(new Set([user, `credential:${credentialId}`, "operator", UNNAMED_CALLER]).size).toBe(4);
  });

  it("isolates the callers of one tenant: one key under four callers makes four results; each caller's repeat and reuse stay its own", async () => {
    const customerId = `callers-${randomUUID()}`;
    const callers = [
      keyCaller({ kind: "user", userId: randomUUID() }),
      keyCaller({ kind: "user", userId: randomUUID() }),
      keyCaller({ kind: "owner", credentialId: randomUUID() }),
      keyCaller({ kind: "master" }),
    ];
    const requests = callers.map((caller, i) => probe(["pay", i], { customerId, key: "same-key", caller }));
    const firsts = [];
    for (const [i, request] of requests.entries()) firsts.push(await runOnce(sql, request, (tx, id) => effect(tx, request, id, `caller-${i}`)));
    expect(firsts.map((f) => f.duplicate)).toEqual([false, false, false, false]);
    expect(await effects(customerId)).toHaveLength(4);

    const [first] = requests;
    if (!first) throw new Error("no request");
    expect(await runOnce(sql, { ...first }, async () => "again")).toEqual({ duplicate: true, resultId: firsts[0]?.resultId });
    await expect(priorResult(sql, { ...first, fingerprint: requestFingerprint(["pay", 1]) })).rejects.toBeInstanceOf(Reused);
    expect(await effects(customerId)).toHaveLength(4);
  });

  it("releaseKey gives back only the caller's own key", async () => {
    const customerId = `release-${randomUUID()}`;
    const kept = probe(["pay", 1], { customerId, key: "k", caller: keyCaller({ kind: "user", userId: randomUUID() }) });
    const released = { ...kept, caller: keyCaller({ kind: "user", userId: randomUUID() }) };
    await runOnce(sql, kept, (tx, id) => effect(tx, kept, id, "kept"));
    await sql.transaction(async (tx) => {
      expect((await claimKey(tx, released, randomUUID())).duplicate).toBe(false);
      await releaseKey(tx, released);
    });
    expect(await priorResult(sql, released)).toBeNull();
    expect(await priorResult(sql, kept)).toBe((await effects(customerId))[0]?.id);
  });

  it("refuses a caller keyCaller does not make (empty, over 64 characters, or the `*` of keys stored before callers)", async () => {
    for (const caller of ["", "c".repeat(65), "*"]) {
      await expect(runOnce(sql, probe(["x"], { caller }), async () => "never")).rejects.toBeInstanceOf(RangeError);
    }
  });

  it("two callers sending one key at once, 6 identical requests each: one effect per caller", async () => {
    const customerId = `race-${randomUUID()}`;
    const [a, b] = [randomUUID(), randomUUID()].map((userId) => probe(["pay", 100], { customerId, key: "race", caller: keyCaller({ kind: "user", userId }) }));
    if (!a || !b) throw new Error("no requests");
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => {
        const r = i % 2 === 0 ? a : b;
        return runOnce(sql, { ...r }, (tx, id) => effect(tx, r, id, `run-${i}`, 0.1));
      }),
    );
    expect(await effects(customerId)).toHaveLength(2);
    expect(answers.filter((x) => !x.duplicate)).toHaveLength(2);
    expect(new Set(answers.filter((_, i) => i % 2 === 0).map((x) => x.resultId)).size).toBe(1);
    expect(new Set(answers.filter((_, i) => i % 2 === 1).map((x) => x.resultId)).size).toBe(1);
  });
});

describe("concurrency", () => {
  it("16 concurrent identical requests: exactly one effect, one first answer, 15 duplicates, all with the same result", async () => {
    const request = probe(["pay", 100]);
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => runOnce(sql, { ...request }, (tx, id) => effect(tx, request, id, `run-${i}`, 0.2))),
    );
    const rows = await effects(request.customerId);
    expect(rows).toHaveLength(1);
    expect(answers.filter((a) => !a.duplicate)).toHaveLength(1);
    expect(new Set(answers.map((a) => a.resultId))).toEqual(new Set([rows[0]?.id]));
    expect(answers.find((a) => !a.duplicate)).toEqual({ duplicate: false, resultId: rows[0]?.id, value: rows[0]?.note });
  });

  it("12 concurrent requests with one key and two bodies: one effect; the other body's requests all get the conflict", async () => {
    const request = probe(["pay", 100]);
    const other = { ...request, fingerprint: requestFingerprint(["pay", 200]) };
    const settled = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => {
        const r = i % 2 === 0 ? request : other;
        return runOnce(sql, r, (tx, id) => effect(tx, r, id, `run-${i}`, 0.1));
      }),
    );
    const rows = await effects(request.customerId);
    expect(rows).toHaveLength(1);
    const winnerEven = Number(rows[0]?.note.slice(4)) % 2 === 0;
    settled.forEach((s, i) => {
      if ((i % 2 === 0) === winnerEven) expect(s).toMatchObject({ status: "fulfilled", value: { resultId: rows[0]?.id } });
      else expect(s.status === "rejected" && s.reason instanceof Reused).toBe(true);
    });
  });

  it("a twin waiting on a first request that fails takes the key and runs: still exactly one effect", async () => {
    const request = probe(["pay", 100]);
    let claimed!: () => void;
    const holdsKey = new Promise<void>((resolve) => (claimed = resolve));
    const first = runOnce(sql, request, async (tx, id) => {
      claimed(); // runOnce calls the change once its transaction holds the key
      await effect(tx, request, id, "first", 0.3);
      throw new Error("refused");
    });
    await holdsKey;
    const twin = runOnce(sql, { ...request }, (tx, id) => effect(tx, request, id, "twin"));
    await expect(first).rejects.toThrow("refused");
    expect(await twin).toMatchObject({ duplicate: false, value: "twin" });
    expect((await effects(request.customerId)).map((e) => e.note)).toEqual(["twin"]);
  });
});

describe("Migration20261126050000_idempotency_keys", () => {
  const MIGRATION = "Migration20261126050000_idempotency_keys";
  /** The later migration of the table (keys per caller): taken down before MIGRATION and up after it. */
  const CALLERS = "Migration20261128000000_idempotency_caller";

  /** Runs `sql` with triggers (foreign keys included) off: legacy rows without their parents (customer, user, wallet). */
  async function orphan(sql: string, params: unknown[]): Promise<void> {
    await orm.em.fork().transactional(async (tx) => {
      await tx.execute(`set local session_replication_role = replica`);
      await tx.execute(sql, params);
    });
  }

  it("copies the keys of withdrawals and of credit_idempotency_key up, and restores both on the way down", async () => {
    await orm.migrator.down([CALLERS]);
    await orm.migrator.down([MIGRATION]);
    const conn = orm.em.fork().getConnection();
    const customerId = `legacy-${randomUUID().slice(0, 8)}`;
    const withdrawalId = randomUUID();
    const withdrawalFingerprint = requestFingerprint(["user", "btc", "0.3", "tb1q", null, null]);
    const creditHash = requestFingerprint(["payment", randomUUID(), 500]);
    const creditResult = randomUUID();
    await orphan(
      `insert into withdrawal (id, customer_id, user_id, wallet_id, network, currency, amount, address, memo, status, code_hash, code_expires_at,
         code_attempts, code_failures_total, code_resends, code_issued_at, idempotency_key, request_fingerprint, created_at, updated_at)
       values (?, ?, ?, ?, 'networks/bitcoin', 'btc', 0.3, 'tb1q', null, 'PENDING', null, now(), 0, 0, 0, now(), 'legacy-w', ?, now(), now())`,
      [withdrawalId, customerId, randomUUID(), randomUUID(), withdrawalFingerprint],
    );
    const legacyWallet = randomUUID();
    await orphan(
      `insert into credit_payment (id, wallet_id, amount, applied_to_interest, applied_to_principal, applied_to_overdraft, idempotency_key, created_at)
       values (?, ?, 500, 0, 500, 0, 'legacy-c', now())`,
      [creditResult, legacyWallet],
    );
    await conn.execute(
      `insert into credit_idempotency_key (customer_id, key, operation, wallet_id, request_hash, result_id, created_at) values (?, 'legacy-c', 'payment', ?, ?, ?, now())`,
      [customerId, legacyWallet, creditHash, creditResult],
    );
    await orm.migrator.up([MIGRATION]);
    await orm.migrator.up([CALLERS]);

    const legacyW = { ...probe([], { customerId, key: "legacy-w", scope: "withdrawal" }), fingerprint: withdrawalFingerprint };
    const legacyC = { ...probe([], { customerId, key: "legacy-c", scope: "credit" }), fingerprint: creditHash };
    expect(await priorResult(sql, legacyW)).toBe(withdrawalId);
    expect(await priorResult(sql, legacyC)).toBe(creditResult);
    await expect(priorResult(sql, { ...legacyW, fingerprint: creditHash })).rejects.toBeInstanceOf(Reused);
    expect(await conn.execute(`select column_name from information_schema.columns where table_name = 'withdrawal' and column_name = 'request_fingerprint'`)).toEqual([]);
    expect(await conn.execute(`select to_regclass('credit_idempotency_key') as t`)).toEqual([{ t: null }]);

    // a credit key only the new table holds (a payment made once the credit core reads it)
    const wallet = randomUUID();
    const payment = randomUUID();
    const newHash = requestFingerprint(["payment", wallet, 700]);
    await orphan(
      `insert into credit_payment (id, wallet_id, amount, applied_to_interest, applied_to_principal, applied_to_overdraft, idempotency_key, created_at)
       values (?, ?, 700, 0, 700, 0, 'new-c', now())`,
      [payment, wallet],
    );
    const newC = { ...probe([], { customerId, key: "new-c", scope: "credit" }), fingerprint: newHash };
    expect((await runOnce(sql, newC, async () => "paid", payment)).duplicate).toBe(false);

    await orm.migrator.down([CALLERS]);
    await orm.migrator.down([MIGRATION]);
    expect(await conn.execute(`select request_fingerprint from withdrawal where id = ?`, [withdrawalId])).toEqual([{ request_fingerprint: withdrawalFingerprint }]);
    expect(await conn.execute(`select key, operation, wallet_id, request_hash, result_id from credit_idempotency_key where customer_id = ? order by key`, [customerId])).toEqual([
      { key: "legacy-c", operation: "payment", wallet_id: legacyWallet, request_hash: creditHash, result_id: creditResult },
      { key: "new-c", operation: "payment", wallet_id: wallet, request_hash: newHash, result_id: payment },
    ]);
    await orm.migrator.up([MIGRATION]);
    await orm.migrator.up([CALLERS]);
    expect(await priorResult(sql, legacyW)).toBe(withdrawalId);
    expect(await priorResult(sql, newC)).toBe(payment);
  });
});

describe("Migration20261128000000_idempotency_caller", () => {
  const MIGRATION = "Migration20261128000000_idempotency_caller";

  it("gives the keys stored before callers the caller `*`: they answer every caller of their tenant and none takes them anew; down keeps each key's first use", async () => {
    await orm.migrator.down([MIGRATION]);
    const conn = orm.em.fork().getConnection();
    const customerId = `before-callers-${randomUUID().slice(0, 8)}`;
    const fingerprint = requestFingerprint(["transfer", 1]);
    const stored = randomUUID();
    await conn.execute(
      `insert into idempotency_key (customer_id, scope, key, request_fingerprint, result_id, created_at) values (?, 'transfer', 'old-key', ?, ?, now() - interval '1 day')`,
      [customerId, fingerprint, stored],
    );
    await orm.migrator.up([MIGRATION]);
    expect(await conn.execute(`select caller from idempotency_key where customer_id = ?`, [customerId])).toEqual([{ caller: "*" }]);

    const alice = probe([], { customerId, scope: "transfer", key: "old-key", caller: keyCaller({ kind: "user", userId: randomUUID() }) });
    const owner = { ...alice, caller: keyCaller({ kind: "owner", credentialId: randomUUID() }) };
    for (const caller of [{ ...alice, fingerprint }, { ...owner, fingerprint }]) {
      expect(await priorResult(sql, caller)).toBe(stored);
      expect(await runOnce(sql, caller, async () => "booked again")).toEqual({ duplicate: true, resultId: stored });
    }
    await expect(runOnce(sql, { ...owner, fingerprint: requestFingerprint(["transfer", 2]) }, async () => "other")).rejects.toBeInstanceOf(Reused);

    // a key used after the upgrade is per caller: two callers, two rows
    const fresh = { ...alice, key: "new-key", fingerprint };
    const first = await runOnce(sql, fresh, async () => "alice");
    const second = await runOnce(sql, { ...fresh, caller: owner.caller }, async () => "owner");
    expect([first.duplicate, second.duplicate]).toEqual([false, false]);
    expect(await conn.execute(`select count(*)::int as n from idempotency_key where customer_id = ?`, [customerId])).toEqual([{ n: 3 }]);

    await orm.migrator.down([MIGRATION]);
    expect(await conn.execute(`select key, result_id from idempotency_key where customer_id = ? order by key`, [customerId])).toEqual([
      { key: "new-key", result_id: first.resultId },
      { key: "old-key", result_id: stored },
    ]);
    await orm.migrator.up([MIGRATION]);
    expect(await priorResult(sql, { ...owner, fingerprint })).toBe(stored);
    expect(await priorResult(sql, { ...fresh, caller: owner.caller })).toBe(first.resultId);
  });
});

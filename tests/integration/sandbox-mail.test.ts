/**
 * Sandbox Mail (`GET /api/v1/sandbox/mail`, docs/decisions/provider-and-sandbox.md) on the real app and PostgreSQL: the
 * address filter is a case-insensitive equality (no pattern: `%` and `_` match themselves), newest
 * first, the customer's own sandbox emails only; and both of its statements are answered by their
 * partial indexes in order (no sort, no scan of the customer's whole outbox), so the read that the
 * withdrawal walk-through makes between initiate and confirm does not grow with the outbox (docs/performance.md).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_MAIL, SANDBOX_MAIL_TO } from "../../src/modules/mail/repository.js";
import type { PreparedStatement } from "../../src/db/sql.js";
import { useTestApp } from "../support/app.js";
import { BASE, Walk } from "../support/fixtures.js";

const t = useTestApp();
let key: string;

/** Writes one sandbox email of `customerId` to `to`, committed, `order` milliseconds after a fixed instant. */
async function email(customerId: string, to: string, subject: string, order: number): Promise<void> {
  await t.services.mail.enqueue(t.db, { customerId, to, subject, text: `about ${subject}` });
  await t.orm.em.fork().execute(`update outbox_email set created_at = ? where subject = ?`, [new Date(Date.UTC(2026, 10, 23, 12, 0, 0, order)), subject]);
}

beforeAll(async () => {
  ({ key } = await new Walk(t.express).tenant("mailbox"));
  await new Walk(t.express).tenant("mailbox-other");
  await email("mailbox", "Ann.Lee@Example.com", "first to ann", 1);
  await email("mailbox", "bob@example.com", "to bob", 2);
  await email("mailbox", "ann.lee@example.COM", "second to ann", 3);
  await email("mailbox", "a_n%@example.com", "to a pattern-like address", 4);
  await email("mailbox-other", "ann.lee@example.com", "another customer's", 5);
});

/** The subjects Sandbox Mail lists for `to` (all addresses when undefined), in its order. */
async function subjects(to?: string): Promise<string[]> {
  const r = t.api().get(`${BASE}/sandbox/mail`).set("x-api-key", key);
  const res = await (to === undefined ? r : r.query({ to }));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data as { subject: string }[]).map((m) => m.subject);
}

describe("Sandbox Mail", () => {
  it("lists the customer's sandbox emails newest first", async () => {
    expect(await subjects()).toEqual(["to a pattern-like address", "second to ann", "to bob", "first to ann"]);
  });

  it("filters by address case-insensitively, whatever the case of the stored address", async () => {
    expect(await subjects("ANN.LEE@example.com")).toEqual(["second to ann", "first to ann"]);
    expect(await subjects("bob@EXAMPLE.com")).toEqual(["to bob"]);
  });

  it("treats % and _ in the address as themselves, not as patterns", async () => {
    expect(await subjects("a_n%@example.com")).toEqual(["to a pattern-like address"]);
    expect(await subjects("%@example.com")).toEqual([]);
    expect(await subjects("ann_lee@example.com")).toEqual([]);
  });
});

describe("Sandbox Mail's statements", () => {
  /** The plan of `statement` run with `values`, as EXPLAIN's text lines (sequential scans disabled, so a usable index is chosen). */
  async function plan(statement: PreparedStatement, values: string[]): Promise<string> {
    const pool = await t.orm.em.getConnection().getNativeClient();
    const client = await pool.connect();
    try {
      await client.query("begin");
      await client.query("set local enable_seqscan = off");
      await client.query(`prepare plan_check as ${statement.text}`);
      const args = values.map((v) => `'${v.replace(/'/g, "''")}'`).join(", ");
      const rows = (await client.query<{ "QUERY PLAN": string }>(`explain execute plan_check(${args})`)).rows;
      return rows.map((r) => r["QUERY PLAN"]).join("\n");
    } finally {
      await client.query("rollback");
      await client.query("deallocate plan_check");
      client.release();
    }
  }

  it("reads the outbox through outbox_email_sandbox_index, in order, without a sort", async () => {
    const text = await plan(SANDBOX_MAIL, ["mailbox"]);
    expect(text).toMatch(/Index Scan using outbox_email_sandbox_index/);
    expect(text).not.toMatch(/Sort/);
  });

  it("reads one address through outbox_email_sandbox_to_index, in order, without a sort", async () => {
    const text = await plan(SANDBOX_MAIL_TO, ["mailbox", "Ann.Lee@example.com"]);
    expect(text).toMatch(/Index Scan using outbox_email_sandbox_to_index/);
    expect(text).not.toMatch(/Sort/);
  });
});

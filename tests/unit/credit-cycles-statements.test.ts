/**
 * The cycle batches' statements (src/modules/credit/cycles/repository/; docs/credit-engine.md "The
 * SQL twin"; docs/architecture.md "Reaching the database"): constants built once at module load,
 * named `credit_cycles_…`, with the instant and the tenant as bound parameters (`$1`, `$2`) and no
 * value spliced into their text. Their results against the engine: tests/integration/credit-cycles*.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { PreparedStatement } from "../../src/db/sql.js";
import * as closeGrace from "../../src/modules/credit/cycles/repository/close-grace.js";
import * as cut from "../../src/modules/credit/cycles/repository/cut.js";
import * as expiry from "../../src/modules/credit/cycles/repository/expiry.js";
import { forScope, forStep } from "../../src/modules/credit/cycles/repository/fragments.js";
import * as schedule from "../../src/modules/credit/cycles/repository/schedule.js";
import * as setAside from "../../src/modules/credit/cycles/repository/set-aside.js";

/** Every exported statement constant of the cycles' repository, by export name. */
const STATEMENTS: [string, PreparedStatement][] = [closeGrace, cut, expiry, schedule, setAside].flatMap((m) =>
  Object.entries(m as Record<string, unknown>).filter((e): e is [string, PreparedStatement] => {
    const v = e[1] as Partial<PreparedStatement> | null;
    return typeof v === "object" && v !== null && typeof v.name === "string" && typeof v.text === "string";
  }),
);

/** The highest `$n` of a text (0 when none). */
const maxParameter = (text: string): number => Math.max(0, ...[...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));

describe("the cycle batches' statements", () => {
  it("are exported constants named credit_cycles_…, each name once", () => {
    expect(STATEMENTS.length).toBeGreaterThanOrEqual(21);
    const names = STATEMENTS.map(([, s]) => s.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^credit_cycles_[a-z_]+$/);
  });

  it("bind the instant and the tenant: no placeholder `?`, no instant or id in the text", () => {
    for (const [exported, s] of STATEMENTS) {
      const outsideQuotes = s.text.replace(/'[^']*'/g, "''");
      expect(outsideQuotes, exported).not.toMatch(/\?/);
      expect(s.text, exported).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
      expect(s.text, exported).not.toMatch(/timestamptz '/);
      expect(s.text, exported).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/i);
    }
  });

  it("take the tenant of a tenant scope as a parameter, and none for the real-time scope", () => {
    const steps = [closeGrace.CYCLES_CLOSE, closeGrace.CYCLES_GRACE, cut.CYCLES_CUT, expiry.CYCLES_EXPIRY, setAside.CYCLES_SET_ASIDE, schedule.CYCLES_SETTLE];
    for (const step of steps) {
      expect(maxParameter(step.tenant.text), step.tenant.name).toBe(2);
      expect(step.tenant.text, step.tenant.name).toMatch(/w\.customer_id = \$2/);
      expect(maxParameter(step.realTime.text), step.realTime.name).toBe(1);
      expect(step.realTime.text, step.realTime.name).toMatch(/not exists \(select 1 from credit_clock c/);
    }
    expect(maxParameter(schedule.CYCLES_NEXT_INSTANT.tenant.text)).toBe(1);
    expect(maxParameter(schedule.CYCLES_NEXT_INSTANT.realTime.text)).toBe(0);
    expect(maxParameter(schedule.CYCLES_RESCHEDULE.text)).toBe(1);
  });

  it("pick the statement of the scope, and the one returning the events when they are collected", () => {
    const tenant = { kind: "tenant", customerId: "c" } as const;
    const realTime = { kind: "real-time" } as const;
    expect(forScope(tenant, closeGrace.CYCLES_CLOSE)).toBe(closeGrace.CYCLES_CLOSE_TENANT);
    expect(forScope(realTime, closeGrace.CYCLES_CLOSE)).toBe(closeGrace.CYCLES_CLOSE_REAL_TIME);
    expect(forStep(tenant, true, cut.CYCLES_CUT)).toBe(cut.CYCLES_CUT_TENANT_EVENTS);
    expect(forStep(tenant, false, cut.CYCLES_CUT)).toBe(cut.CYCLES_CUT_TENANT);
    expect(forStep(realTime, true, expiry.CYCLES_EXPIRY)).toBe(expiry.CYCLES_EXPIRY_REAL_TIME_EVENTS);
    expect(forStep(realTime, false, closeGrace.CYCLES_GRACE)).toBe(closeGrace.CYCLES_GRACE_REAL_TIME);
    expect(cut.CYCLES_CUT_TENANT_EVENTS.text).toMatch(/select \*, 1 as n from ins\s*$/);
    expect(cut.CYCLES_CUT_TENANT.text).toMatch(/select type, count\(\*\) as n from ins group by type\s*$/);
  });
});

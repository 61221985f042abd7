/**
 * Business metrics on /metrics (src/http/business-metrics.ts; docs/operations.md "Observability"):
 * withdrawals by status, outbox backlog and failures, job lag, pool usage — read at scrape time.
 */
import { describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { Walk, fundedBtcUser, initiateBtcWithdrawal } from "../support/fixtures.js";

const app = useTestApp();

/** The value of the sample `name{labels}` in a Prometheus text body, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("business metrics", () => {
  it("count withdrawals by status, the outboxes, the jobs' lag and the pool at each scrape", async () => {
    const before = await app.api().get("/metrics");
    expect(before.status).toBe(200);
    expect(sample(before.text, 'withdrawals{status="PENDING"}')).toBeUndefined();

    const { key } = await new Walk(app.express).tenant("metrics-co");
    const user = await fundedBtcUser(app.express, key);
    await initiateBtcWithdrawal(app.express, key, user.userId);
    await initiateBtcWithdrawal(app.express, key, user.userId);
    const after = await app.api().get("/metrics");
    expect(sample(after.text, 'withdrawals{status="PENDING"}')).toBe(2);
    for (const outbox of ["email", "webhook", "credit_notification"]) {
      expect(sample(after.text, `outbox_backlog{outbox="${outbox}"}`), outbox).toBeGreaterThanOrEqual(0);
      expect(sample(after.text, `outbox_failed{outbox="${outbox}"}`), outbox).toBe(0);
    }
    expect(sample(after.text, 'job_lag_seconds{job="credit-cycles"}')).toBeGreaterThanOrEqual(0);
    expect(sample(after.text, 'db_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1);
    // requests waiting for a connection (including while a new one is opened): present, not predictable
    expect(sample(after.text, 'db_pool_connections{state="waiting"}')).toBeDefined();
  });
});

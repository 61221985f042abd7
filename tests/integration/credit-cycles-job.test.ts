/**
 * The recurring `credit-cycles` Agenda job (src/app.ts `CREDIT_CYCLES_JOB`; docs/credit-engine.md): it runs
 * the due daily closes, grace ends and cuts of the real-time tenants' wallets through `runDueSteps`,
 * and leaves the wallets of a tenant with a sandbox clock to that clock.
 */
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { CREDIT_CYCLES_JOB } from "../../src/app.js";
import { advance, createWallet, charge, startOfUtcDay, type CreditProductRules, type Outcome } from "../../src/domain/credit/index.js";
import { useTestApp } from "../support/app.js";
import { insertProduct, loadEvents, loadWallet, persistWallet, seedTenant } from "../support/credit-seed.js";
import { waitFor } from "../support/wait.js";
import { GOLDEN_PRODUCT } from "../support/credit-golden.js";

const t = useTestApp();

const DAY = 86_400_000;
const PRODUCT: CreditProductRules = { ...GOLDEN_PRODUCT, variableSpecs: false };

function ok<T>(o: Outcome<T>): T {
  if (!o.ok) throw new Error(`engine refused: ${JSON.stringify(o)}`);
  return o.value;
}

/**
 * A tenant with one wallet created 40 days ago (real time), charged 30000 then, first cut 10 days
 * ago. `clocked`: the tenant gets a sandbox clock at the wallet's `asOf` before the wallet exists,
 * so no run of the job (one runs at start) can take the wallet for a real-time one.
 */
async function walletOf(customerId: string, clocked = false) {
  const em = t.orm.em.fork();
  const userId = await seedTenant(em, customerId);
  const productId = await insertProduct(em, customerId, "100", PRODUCT);
  const createdAt = new Date(Date.now() - 40 * DAY);
  const created = ok(createWallet(PRODUCT, { walletId: randomUUID(), createdAt, limit: 100000, firstCutDate: startOfUtcDay(new Date(Date.now() - 10 * DAY)) }));
  const charged = ok(charge(created, PRODUCT, createdAt, 30000)).state;
  if (clocked) await em.execute(`insert into credit_clock (customer_id, "now", updated_at) values (?, ?, now())`, [customerId, charged.asOf]);
  const home = { customerId, userId, productId, product: PRODUCT };
  await persistWallet(em, home, charged);
  return charged;
}

it("runs the due steps of a real-time tenant's wallets and skips a tenant with a sandbox clock", async () => {
  const stamp = Date.now().toString(36);
  const live = await walletOf(`job-live-${stamp}`);
  const clocked = await walletOf(`job-clock-${stamp}`, true);

  await t.scheduler.now(CREDIT_CYCLES_JOB);
  const expected = ok(advance(live, PRODUCT, new Date()));
  expect(expected.state.sequence).toBeGreaterThan(0);
  // the job has run every due step once the wallet's last event is written
  await waitFor("the job's steps", async () => {
    const w = await loadWallet(t.orm.em.fork(), live.walletId);
    return w.state.sequence >= expected.state.sequence ? w : undefined;
  }, 20_000);
  const stored = await loadWallet(t.orm.em.fork(), live.walletId);
  expect(stored.state.statements).toEqual(expected.state.statements);
  // real time: as_of stays at the last step run (src/modules/credit/cycles/service.ts `settle`), everything else is the engine's
  expect(stored.state).toEqual({ ...expected.state, asOf: stored.state.asOf });
  expect(stored.state.asOf.getTime()).toBeLessThanOrEqual(Date.now());
  expect((await loadEvents(t.orm.em.fork(), live.walletId)).map((e) => [e.sequence, e.type, e.amount])).toEqual(
    expected.events.map((e) => [e.sequence, e.type, e.amount]),
  );

  const untouched = await loadWallet(t.orm.em.fork(), clocked.walletId);
  expect(untouched.state).toEqual(clocked);
});

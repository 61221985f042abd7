/**
 * `npm run bench:credit`: throughput of the credit cycle batches (docs/performance.md "Credit batches:
 * `npm run bench:credit`"; not a timed test). On a throw-away embedded PostgreSQL it seeds 10 000, 50 000 and 100 000 wallets with
 * balances and open card-authorization holds (scripts/bench/credit-holds.ts), runs one daily close, the expiry
 * of the holds due then and one cut through `runDueSteps` (src/modules/credit/cycles/service.ts, the code the jobs and
 * the sandbox clock run), then the same updates through a hand-written set-based SQL baseline (plain
 * UPDATE / INSERT … SELECT statements below), on the same seed. Prints wallets per second and µs per wallet of both,
 * their ratio (target ≥ 0.5) and the growth of the µs per wallet from 10 000 to 50 000 and 100 000 wallets (linear: ≈ 1×).
 *
 * The seed: one tenant, one monthly ADB product (the golden vector's), wallets created on
 * 2026-01-01 with a principal of 1 000–90 999 cents, closed up to 2026-01-30, first cut 2026-01-31;
 * the run goes to 2026-01-31T00:00Z: one instant with a close and a cut for every wallet. `BENCH_CREDIT_SIZES`
 * (comma-separated) replaces the sizes. Every wallet
 * also holds one authorization open past the run and every other wallet one that expires at that
 * close (scripts/bench/credit-holds.ts): n × 1.5 holds, n / 2 released by the run.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import { Db } from "../src/db/sql.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { initORM } from "../src/db/orm.js";
import { ENTITIES } from "../src/modules/entities.js";
import { REAL_TIME, runDueSteps } from "../src/modules/credit/cycles/service.js";
import { baselineExpiry, checkHolds, seedHolds } from "./bench/credit-holds.js";

/** Wallets per run: `BENCH_CREDIT_SIZES` (comma-separated, ascending), else 10 000, 50 000 and 100 000. */
const SIZES = (process.env.BENCH_CREDIT_SIZES ?? "10000,50000,100000").split(",").map(Number);
if (SIZES.some((n) => !Number.isSafeInteger(n) || n < 2)) throw new Error(`BENCH_CREDIT_SIZES must list integers ≥ 2, got "${process.env.BENCH_CREDIT_SIZES}"`);
const CUT = "2026-01-31T00:00:00.000Z";
const CUSTOMER = "bench-tenant";

/** Empties the credit tables and seeds `n` wallets of one product, due for a close and a cut at CUT. */
async function seed(em: EntityManager, n: number, productId: string, userId: string): Promise<number> {
  await em.execute(`truncate credit_wallet cascade`);
  await em.execute(
    `insert into credit_wallet (wallet_id, customer_id, user_id, product_id, currency, description, status, status_before_default, credit_limit,
       available_amount, principal_outstanding, interest_outstanding, first_cut_date, time, expires_at, cycle_start, sum_of_daily_balance,
       last_close_at, next_cut_at, interest_rate_nominal, interest_rate_moroso, fixed_interest_nominal, fixed_interest_moroso,
       minimum_payment_rate, fixed_minimum_payment, specs_overridden, pending_specs, sequence, as_of, created_at, updated_at)
     select gen_random_uuid(), ?, ?::uuid, ?::uuid, 'USD', null, 'active', null, 100000, 100000 - p, p, 0, timestamptz '${CUT}', null, null,
       timestamptz '2026-01-01T00:00:00Z', p * 29, timestamptz '2026-01-30T00:00:00Z', timestamptz '${CUT}', 36, 12, 0, 500, 10, 1000, false, null, 0,
       timestamptz '2026-01-30T00:00:00Z', timestamptz '2026-01-01T00:00:00Z', now()
     from (select 1000 + (i * 7919) % 90000 as p from generate_series(1, ?) as i) s`,
    [CUSTOMER, userId, productId, n],
  );
  const due = await seedHolds(em, CUSTOMER);
  await em.execute(`vacuum analyze credit_wallet`);
  await em.execute(`vacuum analyze credit_statement`);
  await em.execute(`vacuum analyze credit_event`);
  return due;
}

/**
 * The baseline: the same close, expiry and cut written directly as set-based SQL for this seed's product
 * (ADB, monthly, no overrides): one UPDATE for the close; the expiry (scripts/bench/credit-holds.ts
 * `baselineExpiry`); for the cut one statement that updates the wallets and inserts their statements
 * and `Interes Nominal Calculado` events.
 */
async function baseline(em: EntityManager): Promise<void> {
  await em.execute(
    `update credit_wallet set sum_of_daily_balance = sum_of_daily_balance + principal_outstanding, last_close_at = timestamptz '${CUT}',
       as_of = timestamptz '${CUT}', updated_at = now()
     where status <> 'dissolved' and as_of < timestamptz '${CUT}'`,
  );
  await baselineExpiry(em, CUT);
  await em.execute(
    `with u as (
       update credit_wallet w set sum_of_daily_balance = 0, cycle_start = timestamptz '${CUT}',
         next_cut_at = ((w.first_cut_date at time zone 'UTC') + interval '1 month') at time zone 'UTC', sequence = w.sequence + 1,
         as_of = timestamptz '${CUT}', updated_at = now()
       where w.next_cut_at = timestamptz '${CUT}' and w.status <> 'dissolved'
       returning w.wallet_id, w.customer_id, old.sum_of_daily_balance as s, old.principal_outstanding as p, old.interest_outstanding as i,
         old.credit_limit as l, old.cycle_start as cs, old.sequence as q, w.interest_rate_nominal as r, w.interest_rate_moroso as rm,
         w.fixed_interest_nominal as fi, w.fixed_interest_moroso as fm, w.minimum_payment_rate as mr, w.fixed_minimum_payment as fmin
     ),
     c as (
       select u.*, round(u.r * u.s / 36000) + u.fi as interest, least(round(u.mr * u.p / 100) + u.fmin, u.p + u.i) as minimum from u
     ),
     st as (
       insert into credit_statement (id, wallet_id, ordinal, cut_date, cycle_start, days_in_cycle, sum_of_daily_balance, principal_at_cut,
         interest_outstanding_at_cut, interest_accrual_method, compound, interest_basis, interest_rate_nominal, daily_rate_divisor,
         fixed_interest_nominal, minimum_payment_rate, fixed_minimum_payment, interest_generated, minimum_payment, payment_due_date,
         paid_in_cycle, status, interest_applied, interest_applied_at, penal_interest, interest_rate_moroso, fixed_interest_moroso, cured_at)
       select gen_random_uuid(), c.wallet_id, 0, timestamptz '${CUT}', c.cs, 30, c.s, c.p, c.i, 'ADB', false, c.s, c.r, 360, c.fi, c.mr, c.fmin,
         c.interest, c.minimum, timestamptz '${CUT}' + interval '10 days', 0, 'pending', 0, null, 0, null, null, null
       from c
     )
     insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
     select gen_random_uuid(), c.wallet_id, c.customer_id, c.q + 1, 'Interes Nominal Calculado', c.interest, 'debit', false,
       jsonb_build_object('principal_outstanding', c.p, 'interest_accrued', c.i, 'totalDebt', c.p + c.i, 'limit', c.l,
         'amountOverdraft', greatest(0, c.p + c.i - c.l),
         'interestSpecs', jsonb_build_object('interestRateNominal', c.r::float8, 'interestRateMoroso', c.rm::float8,
           'fixedInterestNominal', c.fi, 'fixedInterestMoroso', c.fm),
         'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', c.mr::float8, 'fixedMinimumPayment', c.fmin)),
       timestamptz '${CUT}'
     from c`,
  );
}

/** Checks that a run closed and cut every wallet once and expired the `due` holds (one event each). */
async function check(em: EntityManager, n: number, due: number): Promise<void> {
  const [row] = await em.execute<{ st: string; ev: string; due: string; sum: string }[]>(
    `select (select count(*) from credit_statement) as st, (select count(*) from credit_event where type <> 'Autorizacion Aprobada') as ev,
       (select count(*) from credit_wallet where next_cut_at = timestamptz '${CUT}') as due,
       (select sum(sum_of_daily_balance) from credit_statement) - (select sum(principal_outstanding) * 30 from credit_wallet) as sum`,
  );
  if (Number(row?.st) !== n || Number(row?.ev) !== n + due || Number(row?.due) !== 0 || Number(row?.sum) !== 0) {
    throw new Error(`the run did not close and cut every wallet once: ${JSON.stringify(row)}`);
  }
  await checkHolds(em, due);
}

async function timed(what: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await what();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const dir = mkdtempSync(join(tmpdir(), "bench-credit-"));
chmodSync(dir, 0o755);
const db = await startEmbeddedPostgres(dir, "bench", { persistent: false });
try {
  const orm = await initORM(db.url, ENTITIES);
  const em = orm.em.fork();
  // the batches run on the ORM's pool as the service runs them (src/app.ts `statements`)
  const statements = new Db(await orm.em.getConnection().getNativeClient(), { named: true });
  const now = new Date();
  await em.execute(
    `insert into customer (customer_id, email, account_type, account_role, account_purpose, first_name, last_name, phone_country_code,
       phone_number, business, status, is_active, created_at, updated_at)
     values (?, 'ops@bench.example', 'business', 'owner', 'credit', 'Bench', 'Tenant', 'US', '2025550143', '{}', 'active', true, ?, ?)`,
    [CUSTOMER, now, now],
  );
  const userId = randomUUID();
  await em.execute(
    `insert into app_user (user_id, customer_id, account_type, account_role, account_purpose, first_name, last_name, email, email_normalized,
       phone_country_code, phone_number, phone_e164, status, verification_status, is_active, individual, created_at, updated_at)
     values (?, ?, 'individual', 'third', 'credit', 'Jane', 'Doe', 'jane@bench.example', 'jane@bench.example', 'US', '2025550143',
       '+12025550143', 'active', 'verified', true, '{}', ?, ?)`,
    [userId, CUSTOMER, now, now],
  );
  const productId = randomUUID();
  await em.execute(
    `insert into credit_product (id, customer_id, code, revolving, compound, cut_frequency, fixed_interest_amount, base_interest_rate,
       base_minimum_payment_rate, fixed_minimum_payment_amount, capital_interest_split, grace_period, variable_specs, morosidad_rate,
       base_interest_morosidad, interest_accrual_method, daily_rate_divisor, created_at, updated_at)
     values (?, ?, '100', true, false, 'month', 0, 36, 10, 1000, 50, 10, false, 12, 500, 'ADB', 360, ?, ?)`,
    [productId, CUSTOMER, now, now],
  );

  const results: { n: number; ours: number; base: number }[] = [];
  const us = (seconds: number, n: number): string => ((seconds * 1e6) / n).toFixed(1);
  console.log(`load average before: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  for (const n of SIZES) {
    const due = await seed(em, n, productId, userId);
    let expired = 0;
    const ours = await timed(async () => (expired = (await runDueSteps(statements, REAL_TIME, new Date(CUT))).expiries));
    await check(em, n, due);
    if (expired !== due) throw new Error(`runDueSteps reported ${expired} expiries, ${due} were due`);
    await seed(em, n, productId, userId);
    const base = await timed(() => baseline(em));
    await check(em, n, due);
    results.push({ n, ours, base });
    console.log(
      `${String(n).padStart(7)} wallets (${n + n / 2} holds, ${due} expiring): runDueSteps ${ours.toFixed(2)} s = ${Math.round(n / ours)} wallets/s = ${us(ours, n)} µs/wallet; ` +
        `baseline ${base.toFixed(2)} s = ${Math.round(n / base)} wallets/s = ${us(base, n)} µs/wallet; ratio ${(base / ours).toFixed(2)} (target ≥ 0.5); load ${loadavg()[0]?.toFixed(2)}`,
    );
  }
  const [small] = results;
  for (const large of results.slice(1)) {
    if (!small) break;
    const per = (r: { n: number; ours: number; base: number }, k: "ours" | "base"): number => r[k] / r.n;
    console.log(
      `growth ${small.n} → ${large.n} wallets (${large.n / small.n}×): runDueSteps time ×${(large.ours / small.ours).toFixed(1)}, µs/wallet ×${(per(large, "ours") / per(small, "ours")).toFixed(2)}; ` +
        `baseline time ×${(large.base / small.base).toFixed(1)}, µs/wallet ×${(per(large, "base") / per(small, "base")).toFixed(2)} (linear: time ×${large.n / small.n}, µs/wallet ×1)`,
    );
  }
  console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  await orm.close(true);
} finally {
  await db.stop();
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Open card-authorization holds for `npm run bench:credit` (scripts/bench-credit.ts; docs/performance.md
 * "Credit batches: `npm run bench:credit`"; docs/decisions/credit.md "Authorizations"): seeded set-based
 * with SQL on wallets already seeded, and the hand-written baseline of their expiry.
 *
 * Every wallet gets one open hold that outlives the run ({@link LATE_HOLD} cents, created
 * 2026-01-28T12:00Z, expiring 2026-02-05T00:00Z), and every other wallet (odd `i` in seed order, half of
 * them) one more ({@link DUE_HOLD} cents, created 2026-01-23T10:00Z, expiring 2026-01-31T00:00Z: the
 * close being run releases it). `amount_held` is their sum, `available_amount` lowered by it
 * (available + held + principal = limit, as the engine leaves a wallet that only charged and authorized),
 * and each approval has its `Autorizacion Aprobada` event, delivered (`succeeded`), the wallet's
 * `sequence` counting them. Those events matter beyond realism: `credit_event`'s outbox trigger
 * (src/db/migrations/Migration20261126040000_outbox.ts) looks up each inserted event's pending
 * predecessor, and with the table analyzed empty PostgreSQL plans that lookup as a sequential scan,
 * which makes a batch's inserts quadratic (docs/performance.md "Credit batches").
 */
import type { EntityManager } from "@mikro-orm/postgresql";

/** Cents of the hold every wallet keeps past the run. */
export const LATE_HOLD = 300;
/** Cents of the hold that expires at the close run (every other wallet). */
export const DUE_HOLD = 500;

/**
 * Inserts the holds of every wallet of the table (see the module note) and lowers the wallets'
 * available amounts by them. @returns how many holds expire at `cut` (the due ones).
 */
export async function seedHolds(em: EntityManager, customerId: string): Promise<number> {
  await em.execute(
    `with w as (select wallet_id, row_number() over (order by wallet_id) as i from credit_wallet),
     h as (
       select wallet_id, ${LATE_HOLD} as amount, timestamptz '2026-01-28T12:00:00Z' as created_at, timestamptz '2026-02-05T00:00:00Z' as expires_at from w
       union all
       select wallet_id, ${DUE_HOLD}, timestamptz '2026-01-23T10:00:00Z', timestamptz '2026-01-31T00:00:00Z' from w where i % 2 = 1
     ),
     ins as (
       insert into credit_authorization (authorization_id, wallet_id, customer_id, status, decline_reason, amount, captured_amount, released_amount,
         merchant_name, merchant_mcc, merchant_country, reference, idempotency_key, expires_at, closed_at, created_at)
       select gen_random_uuid(), h.wallet_id, ?, 'approved', null, h.amount, 0, 0, 'Corner store', '5411', 'MX', null, gen_random_uuid()::text,
         h.expires_at, null, h.created_at
       from h
       returning wallet_id, amount
     )
     update credit_wallet cw set amount_held = s.held, available_amount = cw.available_amount - s.held, sequence = s.n
     from (select wallet_id, sum(amount) as held, count(*) as n from ins group by wallet_id) s
     where s.wallet_id = cw.wallet_id`,
    [customerId],
  );
  // the approvals' events, delivered long ago (sequence 1, 2 in creation order; details as after each)
  await em.execute(
    `insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at, delivery_status)
     select gen_random_uuid(), a.wallet_id, a.customer_id, row_number() over (partition by a.wallet_id order by a.created_at), 'Autorizacion Aprobada', a.amount,
       'debit', false, jsonb_build_object('amountHeld', sum(a.amount) over (partition by a.wallet_id order by a.created_at)), a.created_at, 'succeeded'
     from credit_authorization a`,
  );
  await em.execute(`vacuum analyze credit_authorization`);
  const [row] = await em.execute<{ n: string }[]>(`select count(*) as n from credit_authorization where expires_at <= timestamptz '2026-01-31T00:00:00Z'`);
  return Number(row?.n);
}

/**
 * The baseline of the expiry step at `cut` for this seed (at most one due hold per wallet, created
 * before its expiry, on wallets whose available + held + debt = limit, so the release restores its
 * whole amount): one `Autorizacion Liberada` event per due hold, the wallets' held, available and
 * sequence, then the holds `expired`: three statements that join the tables themselves (not CTEs of
 * UPDATE … RETURNING, whose row counts the planner cannot estimate).
 */
export async function baselineExpiry(em: EntityManager, cut: string): Promise<void> {
  const due = `a.status = 'approved' and a.expires_at <= timestamptz '${cut}'`;
  await em.execute(
    `insert into credit_event (id, wallet_id, customer_id, sequence, type, amount, direction, affects_balance, wallet_details_after, created_at)
     select gen_random_uuid(), w.wallet_id, w.customer_id, w.sequence + 1, 'Autorizacion Liberada', a.amount, 'credit', false,
       jsonb_build_object('principal_outstanding', w.principal_outstanding, 'interest_accrued', w.interest_outstanding,
         'totalDebt', w.principal_outstanding + w.interest_outstanding, 'limit', w.credit_limit,
         'amountOverdraft', greatest(0, w.principal_outstanding + w.interest_outstanding + w.amount_held - a.amount - w.credit_limit),
         'amountHeld', w.amount_held - a.amount,
         'interestSpecs', jsonb_build_object('interestRateNominal', w.interest_rate_nominal::float8, 'interestRateMoroso', w.interest_rate_moroso::float8,
           'fixedInterestNominal', w.fixed_interest_nominal, 'fixedInterestMoroso', w.fixed_interest_moroso),
         'minimumPaymentSpecs', jsonb_build_object('minimumPaymentRate', w.minimum_payment_rate::float8, 'fixedMinimumPayment', w.fixed_minimum_payment)),
       timestamptz '${cut}'
     from credit_authorization a join credit_wallet w on w.wallet_id = a.wallet_id
     where ${due} and w.status <> 'dissolved'`,
  );
  await em.execute(
    `update credit_wallet w set amount_held = w.amount_held - a.amount, available_amount = w.available_amount + a.amount, sequence = w.sequence + 1,
       as_of = greatest(w.as_of, timestamptz '${cut}'), updated_at = now()
     from credit_authorization a where a.wallet_id = w.wallet_id and ${due} and w.status <> 'dissolved'`,
  );
  await em.execute(`update credit_authorization a set status = 'expired', released_amount = a.amount, closed_at = timestamptz '${cut}' where ${due}`);
}

/**
 * After a run at `cut`: the due holds expired and only they, every wallet's `amount_held` the sum of
 * its open holds, and available + held + debt − overdraft ≤ limit on every wallet.
 * @throws Error naming what does not hold.
 */
export async function checkHolds(em: EntityManager, due: number): Promise<void> {
  const [row] = await em.execute<{ expired: string; open_due: string; held_off: string; over: string }[]>(
    `select (select count(*) from credit_authorization where status = 'expired') as expired,
       (select count(*) from credit_authorization where status = 'approved' and expires_at <= timestamptz '2026-01-31T00:00:00Z') as open_due,
       (select count(*) from credit_wallet w where w.amount_held <> coalesce((select sum(amount) from credit_authorization a where a.wallet_id = w.wallet_id and a.status = 'approved'), 0)) as held_off,
       (select count(*) from credit_wallet where available_amount + amount_held + principal_outstanding + interest_outstanding
          - greatest(0, principal_outstanding + interest_outstanding + amount_held - credit_limit) > credit_limit) as over`,
  );
  if (Number(row?.expired) !== due || Number(row?.open_due) !== 0 || Number(row?.held_off) !== 0 || Number(row?.over) !== 0) {
    throw new Error(`the run did not expire exactly the ${due} due holds or broke an invariant: ${JSON.stringify(row)}`);
  }
}

/**
 * Authorize Card of the benchmark's card rows (scripts/bench/cards.ts; docs/performance.md "Cards:
 * Authorize Card"), on bare `node:http` + a raw `pg.Pool`: NOT a minimum but the very statements the
 * service runs for one Authorize Card (src/modules/credit/cards/service.ts `authorize`, through
 * ../accounts/changes.ts `mutate`), in the same order and transaction, taking the same row lock,
 * prepared and with bound parameters as the service sends them (the service's own statement texts,
 * imported; `npx tsx scripts/bench/capture-cards.ts` compares the two sequences).
 *
 * Authorize Card (9 statements): the owner key's credential; the card's
 * wallet on the pool (`CARD_WALLET`); BEGIN; the wallet locked and loaded (`LOCK_WALLET`); the card,
 * the processor reference's first authorization and the card's spend in its windows
 * (`CARD_DECISION`); the step written (src/modules/credit/accounts/repository/write.ts
 * `writeStatement`, events + authorization: the wallet, the `Autorizacion Aprobada` or `Rechazada`
 * event with `card_id`, the authorization); COMMIT; then, not awaited, the delivery job's kick
 * (INSERT into `agenda_jobs` and NOTIFY), coalesced per {@link KICK_WINDOW_MS} as the service's
 * scheduler coalesces it (src/jobs/kick-throttle.ts). A repeated `processorReference` answers the
 * first authorization (`isDuplicate: true`) and writes nothing, as the service.
 *
 * The decision is the service's pure rules (src/domain/cards.ts `cardDecline`, `spendWindows`;
 * src/domain/credit/authorizations.ts `holdExpiry`: no I/O), then the wallet's one check the bench
 * can meet (`INSUFFICIENT_CREDIT`); it answers the service's `CreditAuthorization`. What the service
 * does beyond this: the OpenAPI validation, express, the credit engine's state (src/domain/credit)
 * and the mapping of its rows. Anything else than an active wallet with no step due answers 409
 * `BENCH_UNSUPPORTED` (scripts/bench/baseline-authorizations.ts `lockedWalletChange`).
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type pg from "pg";
import { cardDecline, spendWindows, type CardState, type SpendControls } from "../../src/domain/cards.js";
import { holdExpiry } from "../../src/domain/credit/authorizations.js";
import { KICK_WINDOW_MS, KickThrottle } from "../../src/jobs/kick-throttle.js";
import { CARD_DECISION, CARD_WALLET } from "../../src/modules/credit/cards/repository.js";
import { APPROVAL, details, kickDelivery, lockedWalletChange, ownerOfRequests, unsupported, view, writeValues, type JsonRow } from "./baseline-authorizations.js";
import { ok, readJson, Refusal, refuse } from "./baseline-http.js";

/** The service's default `AUTHORIZATION_TTL_DAYS`. */
const TTL_DAYS = 7;

/** A row of `CARD_DECISION`. */
interface DecisionRow {
  state: CardState;
  exp_month: number;
  exp_year: number;
  spend_controls: SpendControls | null;
  prior: JsonRow | null;
  spent: { daily: number | string; monthly: number | string } | null;
}

/** The body of Authorize Card (the schema's fields the decision reads). */
interface CardRequest {
  amount: number;
  merchant: { name: string; mcc?: string; country?: string };
  reference?: string;
  processorReference: string;
}

const notFound = (cardId: string): Refusal => new Refusal(404, "NOT_FOUND", `Card '${cardId}' not found.`);

/**
 * Decides authorization `body` on card `cardId` under wallet `w`'s lock and writes it (the event,
 * the authorization, the wallet): the card's decline first, then the wallet's available amount.
 * @returns the answer (JSON text) and whether events were written (a repeat writes none).
 */
async function decide(c: pg.PoolClient, w: JsonRow, now: Date, customerId: string, cardId: string, body: CardRequest): Promise<{ answer: string; wrote: boolean }> {
  const windows = spendWindows(now);
  const card = (await c.query<DecisionRow>({ name: CARD_DECISION.name, text: CARD_DECISION.text, values: [cardId, customerId, body.processorReference, windows.dayStart, windows.monthStart] })).rows[0];
  if (!card) throw notFound(cardId);
  if (card.prior !== null) return { answer: view(card.prior, true), wrote: false };
  const spend = { daily: Number(card.spent?.daily ?? 0), monthly: Number(card.spent?.monthly ?? 0) };
  const amount = body.amount;
  if (!Number.isSafeInteger(amount) || amount <= 0) throw unsupported("not a positive amount");
  const decline = cardDecline({ state: card.state, expMonth: card.exp_month, expYear: card.exp_year, spendControls: card.spend_controls }, now, amount, body.merchant, spend);
  const reason = decline?.reason ?? (amount > Number(w.available_amount) ? "INSUFFICIENT_CREDIT" : null);
  const approved = reason === null;
  const held = Number(w.amount_held) + (approved ? amount : 0);
  const sequence = Number(w.sequence) + 1;
  const walletId = w.wallet_id as string;
  const event = {
    id: randomUUID(), wallet_id: walletId, customer_id: customerId, sequence, type: approved ? "Autorizacion Aprobada" : "Autorizacion Rechazada", amount, direction: "debit",
    affects_balance: false, wallet_details_after: details(w, Number(w.principal_outstanding), held), card_id: cardId, unapplied_amount: null, created_at: now,
  };
  const row = {
    authorization_id: randomUUID(), wallet_id: walletId, card_id: cardId, customer_id: customerId, status: approved ? "approved" : "declined", decline_reason: reason,
    decline_detail: reason === "SPEND_LIMIT_EXCEEDED" ? (decline?.detail ?? null) : null, amount, captured_amount: 0, released_amount: 0, refunded_amount: 0,
    merchant_name: body.merchant.name, merchant_mcc: body.merchant.mcc ?? null, merchant_country: body.merchant.country ?? null, reference: body.reference ?? null,
    processor_reference: body.processorReference, idempotency_key: body.processorReference, expires_at: approved ? holdExpiry(now, TTL_DAYS) : null, closed_at: null, created_at: now,
  };
  const changed = { ...(approved && { available_amount: Number(w.available_amount) - amount, amount_held: held }), sequence, as_of: now, updated_at: now };
  await c.query({ name: APPROVAL.name, text: APPROVAL.text, values: writeValues(w, changed, event, row) });
  return { answer: view(row), wrote: true };
}

/**
 * The listener: `POST /v2/cards/:cardId/authorizations` (201, approved or declined) with the owner
 * key; `secretsKey` the service's `SECRETS_KEY` (the credential's keyed hash).
 */
export function cardBaselineListener(pool: pg.Pool, secretsKey: string): (req: IncomingMessage, res: ServerResponse) => void {
  const owner = ownerOfRequests(pool, secretsKey);
  const kicks = new KickThrottle(() => kickDelivery(pool), KICK_WINDOW_MS);

  async function authorizeCard(req: IncomingMessage, cardId: string): Promise<string> {
    const body = (await readJson(req)) as unknown as CardRequest;
    const customerId = await owner(req);
    const id = cardId.toLowerCase();
    const wallet = (await pool.query<{ wallet_id: string }>({ name: CARD_WALLET.name, text: CARD_WALLET.text, values: [id, customerId] })).rows[0];
    if (!wallet) throw notFound(cardId);
    const done = await lockedWalletChange(pool, customerId, wallet.wallet_id, null, (c, w, now) => decide(c, w, now, customerId, id, body));
    if (done.wrote) kicks.kick("credit-notification-delivery");
    return done.answer;
  }

  return (req, res) => {
    const traceId = randomUUID();
    const m = /^\/v2\/cards\/([0-9a-fA-F-]{36})\/authorizations$/.exec(req.url ?? "");
    const answer = async (): Promise<void> => {
      if (req.method !== "POST" || !m?.[1]) throw new Refusal(404, "NOT_FOUND", "Not found.");
      ok(res, 201, await authorizeCard(req, m[1]), traceId, true);
    };
    answer().catch((error: unknown) => refuse(res, error instanceof Refusal ? error : new Refusal(500, "INTERNAL", String(error)), traceId, true));
  };
}

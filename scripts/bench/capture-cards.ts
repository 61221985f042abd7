/**
 * `npx tsx scripts/bench/capture-cards.ts`: prints every SQL statement the service runs for one
 * Authorize Card of each outcome the card rows of `npm run bench` meet (BENCH_ONLY=cards;
 * docs/performance.md "Cards: Authorize Card"): an approval, `CARD_PAUSED`, `MCC_BLOCKED`,
 * `SPEND_LIMIT_EXCEEDED` on a card with a daily control, and a repeated `processorReference`; then
 * the baseline's (scripts/bench/baseline-cards.ts), and checks that they are the same statements in
 * the same order once literals, bound parameters and numbers are masked (scripts/bench/capture.ts).
 * Exit status 1 when they differ. It builds the real app in this process (createApp, `ROLE=api`,
 * rate limits off) on a throw-away embedded PostgreSQL, wraps `pg.Client.prototype.query`, and
 * seeds one wallet with the bench's card mix (scripts/bench/cards.ts `seedCardWallets`).
 */
import { createServer } from "node:http";
import pg from "pg";
import { KICK_WINDOW_MS } from "../../src/jobs/kick-throttle.js";
import { cardBaselineListener } from "./baseline-cards.js";
import { CARD_DAILY, seedCardWallets, type CardWallet } from "./cards.js";
import { BLOCKED_MCC, CARD_MERCHANTS, freshReference } from "./cards-load.js";
import { CAPTURE_MASTER, CAPTURE_SECRETS_KEY, captureAgainstApp, compareStatements, listening, showCall } from "./capture.js";
import { seed } from "./seed.js";

/** The calls, by label: the card's kind, the amount, the merchant's MCC; `repeat` sends the approval's reference again. */
const CALLS = [
  { label: "approved", kind: "plain", amount: 500, mcc: "5411" },
  { label: "CARD_PAUSED", kind: "paused", amount: 500, mcc: "5411" },
  { label: "MCC_BLOCKED", kind: "blockedMcc", amount: 500, mcc: BLOCKED_MCC },
  { label: "SPEND_LIMIT_EXCEEDED", kind: "daily", amount: CARD_DAILY + 1, mcc: "5411" },
  { label: "repeated reference", kind: "plain", amount: 500, mcc: "5411" },
] as const;

/** Each call of {@link CALLS} through `base` on `wallet`'s cards; prints and returns the statements of each. */
async function outcomes(who: string, base: string, wallet: CardWallet, ownerKey: string): Promise<Map<string, string[]>> {
  const byLabel = new Map<string, string[]>();
  // past the delivery job's kick window (src/jobs/kick-throttle.ts), so a call's kick is counted with it
  const settle = KICK_WINDOW_MS + 150;
  const first = freshReference();
  for (const c of CALLS) {
    const card = wallet.cards.find((k) => k.kind === c.kind);
    if (!card) throw new Error(`no ${c.kind} card seeded`);
    const merchant = CARD_MERCHANTS.find((m) => m.mcc === c.mcc);
    const processorReference = c.label === "approved" || c.label === "repeated reference" ? first : freshReference();
    await showCall(byLabel, who, c.label, base, `/v2/cards/${card.cardId}/authorizations`, {
      method: "POST",
      headers: { "x-api-key": ownerKey, "content-type": "application/json" },
      body: JSON.stringify({ amount: c.amount, merchant, processorReference }),
    }, settle);
  }
  return byLabel;
}

await captureAgainstApp("bench-capture-cards-", async ({ base, databaseUrl }) => {
  const data = await seed(base, CAPTURE_MASTER, { users: 1, products: 1 });
  const [wallet] = await seedCardWallets(base, data, 1);
  if (!wallet) throw new Error("no wallet seeded");
  const ofService = await outcomes("service", base, wallet, data.ownerKey);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const baselineServer = createServer(cardBaselineListener(pool, CAPTURE_SECRETS_KEY)).listen(0, "127.0.0.1");
  const ofBaseline = await outcomes("baseline", await listening(baselineServer), wallet, data.ownerKey);
  const differences = compareStatements("Authorize Card", CALLS.map((c) => c.label), ofService, ofBaseline);
  await new Promise<void>((r) => baselineServer.close(() => r()));
  await pool.end();
  return differences;
});

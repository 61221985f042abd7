/**
 * Repeated Initiate Withdrawal requests over HTTP on a real PostgreSQL (reference: "Withdrawal",
 * the Withdrawal codes; docs/decisions/withdrawals.md#repeated-requests): the `Idempotency-Key`
 * header answering a repeat with the first withdrawal (one hold, one email), refusing its reuse for
 * another body with 409, scoped to the customer, and its empty and over-long forms. Repeats in
 * parallel: withdrawals-concurrency.test.ts. Every response is validated against the contract by
 * the test app.
 */
import { describe, expect, it } from "vitest";
import { expectPlatformError } from "../support/fixtures.js";
import {
  apiKey, BTC, codeIn, ETH, item, type Mail, TO, useWithdrawalsApp, ZERO,
} from "../support/withdrawals-scene.js";

/** The default configuration (code TTL 600 s, 5 attempts, default caps). */
const { api: A } = useWithdrawalsApp("default");

describe("POST …/withdrawals (initiateWithdrawal)", () => {
  describe("Idempotency-Key", () => {
    it("answers a repeat with the first withdrawal and is_duplicate true: one hold, one email", async () => {
      const api = A();
      const s = await api.scene("idem");
      const body = { currency: "btc", amount: 0.3, address: TO.btc, memo: "once" };
      const first = await api.initiate(apiKey(s.key), s.userId, body, "key-1");
      expect(first.status).toBe(201);
      expect(first.body.data.withdraw).toEqual({ id: first.body.data.id, status: "PENDING", idempotency_key: "key-1", is_duplicate: false });
      // repeated by the same caller, twice (keys are per caller: the user's token has keys of its
      // own, tests/integration/idempotency-scope.test.ts; docs/idempotency.md "Whose key it is")
      for (let i = 0; i < 2; i++) {
        const again = await api.initiate(apiKey(s.key), s.userId, body, "key-1");
        expect(again.status, JSON.stringify(again.body)).toBe(201);
        expect(again.body.data).toEqual({ ...first.body.data, withdraw: { ...first.body.data.withdraw, is_duplicate: true } });
      }
      expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "0.70000000", "0.30000000"));
      expect(await api.mails(s.key)).toHaveLength(1);
      expect((await api.list(apiKey(s.key), s.userId)).body.data).toHaveLength(1);

      // after confirm a repeat still answers the first withdrawal, with its current status
      const code = codeIn((await api.mailsOf(s, first.body.data.id))[0] as Mail, first.body.data.id);
      expect((await api.confirm(apiKey(s.key), s.userId, first.body.data.id, code)).status).toBe(200);
      const later = await api.initiate(apiKey(s.key), s.userId, body, "key-1");
      expect(later.status).toBe(201);
      expect(later.body.data.withdraw).toEqual({ id: first.body.data.id, status: "COMPLETED", idempotency_key: "key-1", is_duplicate: true });
      expect(await api.btc(s)).toEqual(item("btc", "0.70000000", "0.70000000", ZERO));
    });

    it.each<[string, Record<string, unknown>]>([
      ["another amount", { amount: 0.31 }],
      ["another address", { address: "tb1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq" }],
      ["another memo", { memo: "twice" }],
      ["no memo", { memo: undefined }],
      ["another currency", { currency: "eth", address: TO.eth }],
      ["a wallet_id", { wallet_id: "WALLET" }],
    ])("answers 409 IDEMPOTENCY_KEY_REUSED for the same key with %s, and changes nothing", async (_label, change) => {
      const api = A();
      const s = await api.scene("idem-409", [BTC, ETH], [[BTC, 1], [ETH, 1]]);
      const body = { currency: "btc", amount: 0.3, address: TO.btc, memo: "once" };
      expect((await api.initiate(apiKey(s.key), s.userId, body, "key-409")).status).toBe(201);
      const other: Record<string, unknown> = { ...body, ...change };
      if (other.wallet_id === "WALLET") other.wallet_id = s.walletId;
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, other, "key-409"), 409, "IDEMPOTENCY_KEY_REUSED");
      expect((await api.btc(s))?.held).toBe("0.30000000");
      expect(await api.mails(s.key)).toHaveLength(1);
    });

    it("scopes keys to the customer: another user of the customer gets 409, another customer's user a new withdrawal", async () => {
      const api = A();
      const a = await api.scene("idem-scope-a");
      const b = await api.scene("idem-scope-b");
      const body = { currency: "btc", amount: 0.2, address: TO.btc };
      const first = await api.initiate(apiKey(a.key), a.userId, body, "shared-key");
      const second = await api.initiate(apiKey(b.key), b.userId, body, "shared-key");
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(second.body.data.withdraw.is_duplicate).toBe(false);
      expect(second.body.data.id).not.toBe(first.body.data.id);
      expect((await api.btc(a))?.held).toBe("0.20000000");
      expect((await api.btc(b))?.held).toBe("0.20000000");
      // a second user of customer a reusing a's key
      const other = await api.user(a.key);
      const wallet = await api.wallet(apiKey(a.key), other.userId, [BTC]);
      await api.deposit(a.key, wallet, BTC, 1);
      expectPlatformError(await api.initiate(apiKey(a.key), other.userId, body, "shared-key"), 409, "IDEMPOTENCY_KEY_REUSED");
      expect((await api.btc(a, wallet))?.held).toBe(ZERO);
    });

    it("treats an empty Idempotency-Key as no key (or refuses it): never an empty key, never a 409 between two requests", async () => {
      const api = A();
      const s = await api.scene("idem-empty");
      const a = await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc }, "");
      const b = await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.2, address: TO.btc }, "");
      for (const res of [a, b]) {
        expect([201, 422], JSON.stringify(res.body)).toContain(res.status);
        if (res.status === 201) expect(res.body.data.withdraw.idempotency_key).not.toBe("");
      }
    });

    it("answers 422 to a key over 255 characters", async () => {
      const api = A();
      const s = await api.scene("idem-long");
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc }, "k".repeat(256)), 422, "UNPROCESSABLE_ENTITY");
      expect((await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc }, "k".repeat(255))).status).toBe(201);
    });
  });
});

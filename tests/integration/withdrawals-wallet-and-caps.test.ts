/**
 * Which wallet an initiate withdraws from and the caps it must stay within, over HTTP on a real
 * PostgreSQL (reference: "Withdrawal", the Withdrawal codes; docs/decisions/withdrawals.md#initiate):
 * `wallet_id` or the oldest wallet with enough available, never a split across wallets, foreign
 * wallets refused; the per-withdrawal, daily and monthly caps of WITHDRAWAL_CAPS, what counts
 * against them, and where they stand in the order of the checks. Every response is validated
 * against the contract by the test app.
 */
import { describe, expect, it } from "vitest";
import { expectPlatformError } from "../support/fixtures.js";
import {
  apiKey, BAD, bearer, BTC, codeIn, ETH, item, type Mail, TO, UNKNOWN_ID, useWithdrawalsApp, UUID, ZERO,
} from "../support/withdrawals-scene.js";

/** The default configuration (code TTL 600 s, 5 attempts, default caps). */
const { api: A } = useWithdrawalsApp("default");
/** Short code lifetime, 3 attempts and small caps (btc: 1 / 1.5 / 2; eth: monthly below daily). */
const { api: C } = useWithdrawalsApp("smallCaps");

describe("POST …/withdrawals (initiateWithdrawal)", () => {
  describe("the wallet withdrawn from (docs/decisions/withdrawals.md)", () => {
    it("takes wallet_id when given, else the oldest wallet with enough available; never splits across wallets", async () => {
      const api = A();
      const s = await api.scene("choose", [BTC], [[BTC, 0.5]]);
      const older = s.walletId;
      const newer = await api.wallet(apiKey(s.key), s.userId, [BTC]);
      await api.deposit(s.key, newer, BTC, 2);
      const onlyEth = await api.wallet(apiKey(s.key), s.userId, [ETH]);
      await api.deposit(s.key, onlyEth, ETH, 5);

      // 1 btc: the older wallet has only 0.5 available, so the newer one
      expect((await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 1, address: TO.btc })).status).toBe(201);
      expect(await api.btc(s, older)).toEqual(item("btc", "0.50000000", "0.50000000", ZERO));
      expect(await api.btc(s, newer)).toEqual(item("btc", "2.00000000", "1.00000000", "1.00000000"));
      // 0.2 btc: the older wallet has enough
      expect((await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.2, address: TO.btc })).status).toBe(201);
      expect((await api.btc(s, older))?.held).toBe("0.20000000");
      // wallet_id picks the newer one although the older could pay
      const named = await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc, wallet_id: newer });
      expect(named.status, JSON.stringify(named.body)).toBe(201);
      expect((await api.btc(s, newer))?.held).toBe("1.10000000");
      expect((await api.btc(s, older))?.held).toBe("0.20000000");
      // wallet_id of a wallet without enough available
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.5, address: TO.btc, wallet_id: older }), 400, "INSUFFICIENT_BALANCE");
      // 0.3 + 0.9 available over two wallets, but no single wallet covers 1
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 1, address: TO.btc }), 400, "INSUFFICIENT_BALANCE");
      // the named wallet holds no btc
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc, wallet_id: onlyEth }), 400, "INSUFFICIENT_BALANCE");

      // confirm: the withdrawal transaction is on the named wallet
      const id = named.body.data.id as string;
      const code = codeIn((await api.mailsOf(s, id))[0] as Mail, id);
      expect((await api.confirm(apiKey(s.key), s.userId, id, code)).status).toBe(200);
      const onNewer = await api.transactions(apiKey(s.key), newer, { "filter[where][type]": "withdrawal" });
      expect(onNewer.map((x) => x.transaction.order_id)).toEqual([id]);
      expect(await api.transactions(apiKey(s.key), older, { "filter[where][type]": "withdrawal" })).toEqual([]);
    });

    it("answers 404 WALLET_NOT_FOUND for a wallet_id of another user, of another customer, or unknown; nothing is held", async () => {
      const api = A();
      const s = await api.scene("choose-404");
      const other = await api.user(s.key);
      const theirs = await api.wallet(apiKey(s.key), other.userId, [BTC]);
      await api.deposit(s.key, theirs, BTC, 1);
      const foreign = await api.scene("choose-404-foreign");
      for (const walletId of [theirs, foreign.walletId, UNKNOWN_ID]) {
        const res = await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.1, address: TO.btc, wallet_id: walletId });
        expectPlatformError(res, 404, "WALLET_NOT_FOUND");
      }
      // nor through the user's own token
      expectPlatformError(await api.initiate(bearer(s.token), s.userId, { currency: "btc", amount: 0.1, address: TO.btc, wallet_id: theirs }), 404, "WALLET_NOT_FOUND");
      // a wallet_id that is no UUID answers first, even with an amount that would be refused (docs/decisions/customers-users-and-wallets.md "Wallets")
      const malformed = await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: -1, address: TO.btc, wallet_id: "wallet-1" });
      expectPlatformError(malformed, 400, "INVALID_WALLET_ID");
      expect(malformed.body.errors[0].field).toBe("wallet_id");
      expect(await api.btc(s, theirs)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
      expect(await api.btc(foreign)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
      expect(await api.btc(s)).toEqual(item("btc", "1.00000000", "1.00000000", ZERO));
    });
  });

  describe("caps from WITHDRAWAL_CAPS (btc 1 / 1.5 / 2; eth monthly 1.5 under daily 5)", () => {
    it("allows the per-withdrawal cap exactly and refuses one satoshi more", async () => {
      const api = C();
      const s = await api.scene("cap-per", [BTC], [[BTC, 5]]);
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 1.00000001, address: TO.btc }), 400, "WITHDRAWAL_LIMIT_EXCEEDED");
      expect((await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 1, address: TO.btc })).status).toBe(201);
    });

    it("counts PENDING and COMPLETED withdrawals of the UTC day against the daily cap, not CANCELLED ones", async () => {
      const api = C();
      const s = await api.scene("cap-day", [BTC], [[BTC, 5]]);
      const body = (amount: number) => ({ currency: "btc", amount, address: TO.btc });
      const first = await api.started(s, body(1));
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, body(0.6)), 400, "DAILY_LIMIT_EXCEEDED");
      const second = await api.started(s, body(0.5)); // 1.5: the cap exactly
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, body(0.0001)), 400, "DAILY_LIMIT_EXCEEDED");
      // a cancelled withdrawal no longer counts
      expect((await api.cancel(apiKey(s.key), s.userId, second.id)).status).toBe(204);
      const third = await api.started(s, body(0.5));
      // a completed one still does
      expect((await api.confirm(apiKey(s.key), s.userId, first.id, first.code)).status).toBe(200);
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, body(0.0001)), 400, "DAILY_LIMIT_EXCEEDED");
      // the caps are per user: another user of the customer is not affected
      const other = await api.user(s.key);
      const wallet = await api.wallet(apiKey(s.key), other.userId, [BTC]);
      await api.deposit(s.key, wallet, BTC, 1);
      expect((await api.initiate(apiKey(s.key), other.userId, body(1))).status).toBe(201);
      // Withdrawals of an earlier UTC month count in neither period: the service reads the real
      // clock, so the test moves the user's withdrawals back in time through SQL instead.
      await api.sql(`update withdrawal set created_at = date_trunc('month', now() at time zone 'utc') at time zone 'utc' - interval '1 second' where user_id = ?`, [s.userId]);
      expect((await api.initiate(apiKey(s.key), s.userId, body(1))).status).toBe(201);
      expect((await api.btc(s))?.held).toBe("1.50000000"); // third (0.5) + the last (1)
      expect(third.id).toMatch(UUID);
    });

    it("refuses what would pass the monthly cap (configured below the daily one) with MONTHLY_LIMIT_EXCEEDED", async () => {
      const api = C();
      const s = await api.scene("cap-month", [ETH], [[ETH, 5]]);
      const body = (amount: number) => ({ currency: "eth", amount, address: TO.eth });
      expect((await api.initiate(apiKey(s.key), s.userId, body(1))).status).toBe(201);
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, body(0.6)), 400, "MONTHLY_LIMIT_EXCEEDED");
      expect((await api.initiate(apiKey(s.key), s.userId, body(0.5))).status).toBe(201); // 1.5 exactly
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, body(0.001)), 400, "MONTHLY_LIMIT_EXCEEDED");
      // caps are checked before the balance
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, body(4)), 400, "WITHDRAWAL_LIMIT_EXCEEDED");
      expect((await api.balances(apiKey(s.key), s.walletId)).eth).toEqual(item("eth", "5.00000000", "3.50000000", "1.50000000"));
    });

    it("checks the caps before the balance and after the address", async () => {
      const api = C();
      const s = await api.scene("cap-order", [BTC], [[BTC, 0.5]]);
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 1.2, address: TO.btc }), 400, "WITHDRAWAL_LIMIT_EXCEEDED");
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 1.2, address: BAD.mainnetBc1 }), 400, "INVALID_CRYPTO_ADDRESS");
      expectPlatformError(await api.initiate(apiKey(s.key), s.userId, { currency: "btc", amount: 0.6, address: TO.btc }), 400, "INSUFFICIENT_BALANCE");
    });
  });
});

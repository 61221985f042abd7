/**
 * The fingerprint of the Idempotency-Key mechanism (src/modules/idempotency/service.ts;
 * docs/idempotency.md "Adopting it in a new operation"): SHA-256 hex of the canonical request's JSON, the form
 * withdrawals and the credit core stored before the shared table, so their keys still match; and
 * the withdrawal's canonical request (src/modules/withdrawals/initiate-key.ts) as it always was.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { requestFingerprint } from "../../src/modules/idempotency/service.js";
import { initiateRequest } from "../../src/modules/withdrawals/initiate-key.js";

describe("requestFingerprint", () => {
  it("is the SHA-256, hex, of JSON.stringify of the parts (a pinned value)", () => {
    expect(requestFingerprint(["u1", "btc", "0.3", "tb1q", null, null])).toBe("b9fa52c11d1490e9739e88be6de9c0d5f93eac4d79c8f44f263332ef9abd3420");
    const parts = ["payment", "0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e", 500];
    expect(requestFingerprint(parts)).toBe(createHash("sha256").update(JSON.stringify(parts)).digest("hex"));
  });

  it("tells apart what JSON tells apart: order, types, null", () => {
    const fingerprints = [["a", "b"], ["b", "a"], ["a", null], ["a"], [1], ["1"]].map(requestFingerprint);
    expect(new Set(fingerprints).size).toBe(fingerprints.length);
  });
});

describe("initiateRequest (Initiate Withdrawal's key)", () => {
  const base = { currency: "btc", amount: 0.3, address: "tb1q" };

  it("normalises the user, currency, amount and wallet id, and keeps address and memo as sent", () => {
    const a = initiateRequest("cust", "U1", { ...base, currency: "BTC", amount: "0.30", wallet_id: "W-1" }, "k");
    const b = initiateRequest("cust", "u1", { ...base, wallet_id: "w-1" }, "k");
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(a.fingerprint).toBe(requestFingerprint(["u1", "btc", "0.3", "tb1q", null, "w-1"]));
    expect(initiateRequest("cust", "u1", { ...base, address: "TB1Q" }, "k").fingerprint).not.toBe(b.fingerprint);
    expect(initiateRequest("cust", "u1", { ...base, memo: "" }, "k").fingerprint).not.toBe(initiateRequest("cust", "u1", base, "k").fingerprint);
  });

  it("is scoped to the customer's withdrawals and answers 409 IDEMPOTENCY_KEY_REUSED on reuse", () => {
    const request = initiateRequest("cust", "u1", base, "key-1");
    expect(request).toMatchObject({ customerId: "cust", scope: "withdrawal", key: "key-1" });
    expect(request.reused()).toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED", message: "This Idempotency-Key was already used with a different request." });
  });
});

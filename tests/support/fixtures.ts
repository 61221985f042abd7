/**
 * Fixtures that walk the typical order of use over HTTP (reference: "Typical order of use"):
 * operator session → customer → credentials → user → activate → user token.
 */
import request from "supertest";
import type { Express } from "express";
import { expect } from "vitest";
import { TEST_MASTER_KEY } from "./app.js";
import { goldenProductBody } from "./credit-golden.js";
import { userBody } from "./user-body.js";

export { userBody };

/** What the helpers send requests to: an express app in this process, or a running server's base URL. */
export type Target = Express | string;

export const BASE = "/api/v1";

/** HTTP helpers bound to one app. */
export class Walk {
  constructor(readonly app: Target) {}

  /** A new operator session token. */
  async operatorToken(): Promise<string> {
    const res = await request(this.app).post(`${BASE}/sessions`).set("x-master-api-key", TEST_MASTER_KEY);
    expect(res.status).toBe(201);
    return res.body.data.token as string;
  }

  /** Creates customer `customerId` with an operator session. */
  async customer(customerId: string, token?: string): Promise<Record<string, unknown>> {
    const res = await request(this.app)
      .post(`${BASE}/customers`)
      .set("Authorization", `Bearer ${token ?? (await this.operatorToken())}`)
      .send({ customer_id: customerId, email: `ops@${customerId}.example`, entity_name: `${customerId} Inc` });
    expect(res.status).toBe(201);
    return res.body.data as Record<string, unknown>;
  }

  /** Generates an owner credential of `customerId`; returns the clear secret and its id. */
  async ownerKey(customerId: string, token?: string): Promise<{ secret: string; credentialId: string }> {
    const res = await request(this.app)
      .post(`${BASE}/customers/${customerId}/credentials`)
      .set("Authorization", `Bearer ${token ?? (await this.operatorToken())}`);
    expect(res.status).toBe(201);
    return { secret: res.body.data.customer_secret as string, credentialId: res.body.data.credential_id as string };
  }

  /** A customer with an owner key, in one call. */
  async tenant(customerId: string): Promise<{ customerId: string; key: string; credentialId: string }> {
    const token = await this.operatorToken();
    await this.customer(customerId, token);
    const { secret, credentialId } = await this.ownerKey(customerId, token);
    return { customerId, key: secret, credentialId };
  }

  /** Creates a user with the owner key; returns its record. */
  async user(key: string, overrides: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const res = await request(this.app).post(`${BASE}/users`).set("x-api-key", key).send(userBody(overrides));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data as Record<string, unknown>;
  }

  /** Creates and activates a user and issues its token. */
  async activeUserWithToken(key: string): Promise<{ userId: string; token: string }> {
    const user = await this.user(key);
    const userId = user.user_id as string;
    const activated = await request(this.app).post(`${BASE}/users/${userId}/activate`).set("x-api-key", key);
    expect(activated.status).toBe(200);
    const token = await request(this.app).post(`${BASE}/users/${userId}/token`).set("x-api-key", key);
    expect(token.status).toBe(201);
    return { userId, token: token.body.data.token as string };
  }

  /**
   * A tenant `customerId` ready to charge a credit wallet: the golden credit product (code "001"),
   * a public notification URL registered (nothing is delivered to it in-process), an active user
   * and that user's USD credit wallet with a limit of 100000 cents.
   */
  async creditWallet(customerId: string): Promise<{ customerId: string; key: string; userId: string; walletId: string }> {
    const { key } = await this.tenant(customerId);
    const { userId } = await this.activeUserWithToken(key);
    const product = await request(this.app).post("/v2/credit-products").set("x-api-key", TEST_MASTER_KEY).send(goldenProductBody(customerId));
    expect(product.status, JSON.stringify(product.body)).toBe(201);
    const enlisted = await request(this.app).put("/v2/notifications").set("x-api-key", key).send({ creditNotificationsURL: "https://93.184.215.14/credit-hooks" });
    expect(enlisted.status).toBe(200);
    const wallet = await request(this.app).post("/v2/wallet/credits").set("x-api-key", key).send({ userId, currency: "USD", limit: 100000, creditProductCode: "001" });
    expect(wallet.status, JSON.stringify(wallet.body)).toBe(201);
    return { customerId, key, userId, walletId: wallet.body.data.walletId as string };
  }
}

/** A valid bitcoin testnet destination (BIP84 test vector). */
export const BTC_DESTINATION = "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl";

/** An active user with a BTC wallet funded by a sandbox deposit. */
export interface FundedUser {
  userId: string;
  email: string;
  walletId: string;
}

/** Creates and activates a user of `key`'s customer, opens a BTC wallet and deposits `btc` into it. */
export async function fundedBtcUser(app: Target, key: string, btc = 1): Promise<FundedUser> {
  const walk = new Walk(app);
  const user = await walk.user(key);
  const userId = user.user_id as string;
  const activated = await request(app).post(`${BASE}/users/${userId}/activate`).set("x-api-key", key);
  expect(activated.status, JSON.stringify(activated.body)).toBe(200);
  const wallet = await request(app)
    .post(`${BASE}/users/${userId}/wallets`)
    .set("x-api-key", key)
    .send({ name: "BTC", networks: [{ name: "networks/bitcoin", currency: "btc" }] });
  expect(wallet.status, JSON.stringify(wallet.body)).toBe(201);
  const walletId = wallet.body.data.wallet_id as string;
  const deposit = await request(app)
    .post(`${BASE}/sandbox/deposits`)
    .set("x-api-key", key)
    .send({ wallet_id: walletId, network: "networks/bitcoin", currency: "btc", amount: btc });
  expect(deposit.status, JSON.stringify(deposit.body)).toBe(201);
  return { userId, email: user.email as string, walletId };
}

/** Initiates a BTC withdrawal of `amount` to {@link BTC_DESTINATION}; returns its id (PENDING). */
export async function initiateBtcWithdrawal(app: Target, key: string, userId: string, amount = 0.001): Promise<string> {
  const res = await request(app)
    .post(`${BASE}/users/${userId}/accounts/crypto/withdrawals`)
    .set("x-api-key", key)
    .send({ currency: "btc", amount, address: BTC_DESTINATION });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.data.withdraw.status).toBe("PENDING");
  return res.body.data.id as string;
}

/** Asserts a platform error envelope with `status` and first error `code`. */
export function expectPlatformError(res: request.Response, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.errors[0].code).toBe(code);
  expect(res.body.meta.version).toBe("v1");
  expect(typeof res.body.meta.trace_id).toBe("string");
}

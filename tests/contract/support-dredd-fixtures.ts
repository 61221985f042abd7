/**
 * The records the Dredd runs need, seeded over HTTP before them: the platform document's example
 * customer, users, wallet, withdrawals, webhook and poller, with the extra records its error and
 * order-dependent cases need ({@link seedFixtures}; transfers, limits and the allowlist in
 * support-dredd-fixtures-movements.ts, trading in support-dredd-fixtures-trading.ts); the credit
 * document's example tenant, product, user, wallets and card authorizations are seeded in
 * support-dredd-fixtures-credit.ts. The hooks read them from
 * `hooks.configuration.custom.contract.fixtures`.
 */
import { TEST_MASTER_KEY } from "../support/app.js";
import { userBody } from "../support/fixtures.js";
import type { ContractOperation, Json, JsonObject } from "./support-dredd-document.js";
import { seedMovementFixtures, type MovementFixtures } from "./support-dredd-fixtures-movements.js";
import { seedTradingFixtures, type TradingFixtures } from "./support-dredd-fixtures-trading.js";
import { seedFiatFixtures, type FiatFixtures } from "./support-dredd-fixtures-fiat.js";

/** Ids, keys and tokens the seeding creates (with those of transfers, limits, the allowlist and trading); the hooks put them into requests. */
export interface Fixtures extends MovementFixtures, TradingFixtures, FiatFixtures {
  masterKey: string;
  operatorToken: string;
  /** The document's example customer (`acme-corp`) and an owner key of it. */
  customerId: string;
  ownerKey: string;
  /** A second credential of the example customer, revoked by Delete Credential. */
  revocableCredentialId: string;
  /** Another customer (no webhook, no poller) and a session of it: a valid credential that may not touch the example customer. */
  otherCustomerId: string;
  otherCustomerSession: string;
  /** An owner key of that other customer: it sees none of the example customer's wallets. */
  otherOwnerKey: string;
  /** A customer that Delete Customer deletes. */
  doomedCustomerId: string;
  /** An id, absent from the database, that Create Customer can create. */
  newCustomerId: string;
  /** The document's example user (created with its example `user_id`), activated, with a wallet. */
  userId: string;
  /**
   * The example user's wallet, created from the Create Wallet example (so its name is taken) and
   * credited once through the sandbox deposit example: wallet ids are generated, the hooks put it in.
   */
  walletId: string;
  /** A PENDING user that Delete User deletes. */
  doomedUserId: string;
  /** A PENDING user that stays so (never activated: cannot be deactivated). */
  pendingUserId: string;
  /** An active user (not deletable), its email and a token of it. */
  activeUserId: string;
  activeUserEmail: string;
  userToken: string;
  /** Email and phone number no user has yet, for Create User. */
  freshEmail: string;
  freshPhoneNumber: string;
  /** An owner key of a customer whose id starts with `novault` (no custody vault upstream) and an active user of it. */
  novaultOwnerKey: string;
  novaultUserId: string;
  /** The example user's email: withdrawal codes go there (the sandbox outbox, `GET /sandbox/mail?to=`). */
  userEmail: string;
  /**
   * Withdrawals of the example user from {@link walletId} (1 usdt each, seeded with their own
   * `Idempotency-Key`s, never the document's example key), by the state the cases need; their ids
   * are generated, the hooks put them into paths.
   */
  withdrawals: {
    /** PENDING, confirmed by Confirm Withdrawal with {@link confirmationCode}. */
    toConfirm: string;
    /** PENDING, cancelled by Cancel Withdrawal. */
    toCancel: string;
    /** PENDING, gets a new code from Resend Code. */
    toResend: string;
    /** PENDING, receives {@link wrongCode} once (one wrong attempt of five). */
    wrongCode: string;
    /** COMPLETED (confirmed with its code while seeding). */
    completed: string;
    /** CANCELLED while seeding. */
    cancelled: string;
    /** PENDING and blocked: it received the maximum of wrong codes (5, the default), so confirm answers 403. */
    blocked: string;
  };
  /** The code of `withdrawals.toConfirm`, read from the sandbox outbox. */
  confirmationCode: string;
  /** A code that is not the current code of `withdrawals.wrongCode`. */
  wrongCode: string;
  /** The `Idempotency-Key` and body that seeded `withdrawals.completed`: a repeat is a duplicate, another body a 409. */
  seededInitiate: { idempotencyKey: string; body: JsonObject };
  /** A real HTTP receiver on 127.0.0.1: the example customer's webhook points at it (registered before the withdrawals were seeded). */
  hookUrl: string;
  /** A customer with a webhook that Delete Webhook deletes. */
  hookDoomedCustomerId: string;
  /** A delivery of the example customer's webhook (a `withdrawal.pin` of a seeded withdrawal), for Retry Webhook Delivery. */
  deliveryId: string;
  /** A real IMAP server (Dovecot on 127.0.0.1) and the example customer's mailbox on it. */
  imap: { host: string; port: number; tls: boolean; password: string };
  /** The example customer's email poller (seeded on {@link imap}; its login is the owner credential's email). */
  pollerId: string;
  /** A customer without a poller, for Create Email Poller. */
  pollerNewCustomerId: string;
  /** A customer with a poller that Delete Email Poller deletes. */
  pollerDoomedCustomerId: string;
}


/** A small JSON-over-HTTP client for seeding; throws unless the answer has `expected` status. */
export function client(baseUrl: string) {
  return async (method: string, path: string, expected: number, options: { headers?: Record<string, string>; body?: Json } = {}) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...(options.body !== undefined && { "content-type": "application/json" }), ...options.headers },
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
    });
    const text = await res.text();
    if (res.status !== expected) throw new Error(`Seeding: ${method} ${path} answered ${res.status}, expected ${expected}: ${text}`);
    return (text ? JSON.parse(text) : null) as { data: Record<string, Json> };
  };
}

/**
 * Seeds, over the platform API of `baseUrl`, the records the document's examples name (customer
 * `acme-corp`, user `6f1c2d3e-…` and its wallet, created from the document's own request examples)
 * and the extra records the order-dependent and error cases need.
 */
export async function seedFixtures(
  baseUrl: string,
  operations: Record<string, ContractOperation>,
  hookUrl: string,
  imap: Fixtures["imap"],
): Promise<Fixtures> {
  const call = client(baseUrl);
  const example = (key: string): JsonObject => {
    const value = operations[key]?.requestExample;
    if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error(`The document has no request example for ${key}`);
    return value;
  };
  const operatorToken = String((await call("POST", "/sessions", 201, { headers: { "x-master-api-key": TEST_MASTER_KEY } })).data.token);
  const operator = { authorization: `Bearer ${operatorToken}` };
  const createCustomer = async (body: JsonObject) => call("POST", "/customers", 201, { headers: operator, body });
  const credential = async (customerId: string) => (await call("POST", `/customers/${customerId}/credentials`, 201, { headers: operator })).data;

  const customerExample = example("POST /customers");
  const customerId = String(customerExample.customer_id);
  await createCustomer(customerExample);
  const owner = await credential(customerId);
  const revocable = await credential(customerId);

  const otherCustomerId = "dredd-other-co";
  await createCustomer({ customer_id: otherCustomerId, email: `ops@${otherCustomerId}.example`, entity_name: "Dredd Other Co" });
  const otherOwnerKey = String((await credential(otherCustomerId)).customer_secret);
  const otherCustomerSession = String(
    (await call("POST", "/sessions", 201, { body: { customer_id: otherCustomerId, customer_secret: otherOwnerKey } })).data.token,
  );
  const doomedCustomerId = "dredd-doomed-co";
  await createCustomer({ customer_id: doomedCustomerId, email: `ops@${doomedCustomerId}.example`, entity_name: "Dredd Doomed Co" });

  const ownerKey = String(owner.customer_secret);
  const asOwner = { "x-api-key": ownerKey };
  await call("POST", `/customers/${customerId}/webhooks`, 201, { headers: operator, body: { url: hookUrl } });
  const hookDoomedCustomerId = "dredd-hook-doomed-co";
  await createCustomer({ customer_id: hookDoomedCustomerId, email: `ops@${hookDoomedCustomerId}.example`, entity_name: "Dredd Hook Doomed Co" });
  await call("POST", `/customers/${hookDoomedCustomerId}/webhooks`, 201, { headers: operator, body: { url: hookUrl } });
  const pollerBody = { imap, description: "Dredd mailbox" };
  const pollerId = String((await call("POST", `/customers/${customerId}/email/poller`, 201, { headers: operator, body: pollerBody })).data.poller_id);
  const pollerNewCustomerId = "dredd-poller-new-co";
  await createCustomer({ customer_id: pollerNewCustomerId, email: `ops@${pollerNewCustomerId}.example`, entity_name: "Dredd Poller New Co" });
  await credential(pollerNewCustomerId);
  const pollerDoomedCustomerId = "dredd-poller-doomed-co";
  await createCustomer({ customer_id: pollerDoomedCustomerId, email: `ops@${pollerDoomedCustomerId}.example`, entity_name: "Dredd Poller Doomed Co" });
  await credential(pollerDoomedCustomerId);
  await call("POST", `/customers/${pollerDoomedCustomerId}/email/poller`, 201, { headers: operator, body: pollerBody });
  const user = (await call("POST", "/users", 201, { headers: asOwner, body: example("POST /users") })).data;
  const userId = String(user.user_id);
  await call("POST", `/users/${userId}/activate`, 200, { headers: asOwner });
  const wallet = (await call("POST", `/users/${userId}/wallets`, 201, { headers: asOwner, body: example("POST /users/{user_id}/wallets") })).data;
  const walletId = String(wallet.wallet_id);
  await call("POST", "/sandbox/deposits", 201, { headers: asOwner, body: { ...example("POST /sandbox/deposits"), wallet_id: walletId } });
  const seeded = await seedWithdrawals(call, asOwner, userId, String(user.email), { ...example(WITHDRAWALS), wallet_id: walletId });
  const doomed = (await call("POST", "/users", 201, { headers: asOwner, body: userBody() as JsonObject })).data;
  const pending = (await call("POST", "/users", 201, { headers: asOwner, body: userBody() as JsonObject })).data;
  const active = (await call("POST", "/users", 201, { headers: asOwner, body: userBody() as JsonObject })).data;
  await call("POST", `/users/${String(active.user_id)}/activate`, 200, { headers: asOwner });
  const userToken = String((await call("POST", `/users/${String(active.user_id)}/token`, 201, { headers: asOwner })).data.token);
  const fresh = userBody();

  const novaultCustomerId = "novault-dredd-co";
  await createCustomer({ customer_id: novaultCustomerId, email: `ops@${novaultCustomerId}.example`, entity_name: "Dredd No Vault Co" });
  const novaultOwnerKey = String((await credential(novaultCustomerId)).customer_secret);
  const deliveries = (await call("GET", `/customers/${customerId}/webhooks/deliveries`, 200, { headers: operator })).data as unknown as { delivery_id: string }[];
  if (!deliveries[0]) throw new Error("Seeding: the seeded withdrawals made no webhook delivery");
  const asNovaultOwner = { "x-api-key": novaultOwnerKey };
  const novaultUser = (await call("POST", "/users", 201, { headers: asNovaultOwner, body: userBody() as JsonObject })).data;
  await call("POST", `/users/${String(novaultUser.user_id)}/activate`, 200, { headers: asNovaultOwner });
  const movements = await seedMovementFixtures(call, { customerId, ownerKey, userId, walletId });
  const trading = await seedTradingFixtures(call, { ownerKey, userId, walletId });
  const fiat = await seedFiatFixtures(call, { ownerKey, userId, email: String(user.email) });

  return {
    masterKey: TEST_MASTER_KEY,
    operatorToken,
    customerId,
    ownerKey,
    revocableCredentialId: String(revocable.credential_id),
    otherCustomerId,
    otherCustomerSession,
    otherOwnerKey,
    doomedCustomerId,
    newCustomerId: "dredd-created-co",
    userId,
    walletId,
    doomedUserId: String(doomed.user_id),
    pendingUserId: String(pending.user_id),
    activeUserId: String(active.user_id),
    activeUserEmail: String(active.email),
    userToken,
    freshEmail: String(fresh.email),
    freshPhoneNumber: String(fresh.phone_number),
    novaultOwnerKey,
    novaultUserId: String(novaultUser.user_id),
    userEmail: String(user.email),
    ...seeded,
    hookUrl,
    hookDoomedCustomerId,
    deliveryId: deliveries[0].delivery_id,
    imap,
    pollerId,
    pollerNewCustomerId,
    pollerDoomedCustomerId,
    ...movements,
    ...trading,
    ...fiat,
  };
}

/** The document path of Initiate Withdrawal (its request example is the base of the seeded ones). */
const WITHDRAWALS = "POST /users/{user_id}/accounts/crypto/withdrawals";
/** Wrong codes that block a withdrawal: `WITHDRAWAL_CODE_MAX_ATTEMPTS`, default 5 (docs/decisions/withdrawals.md). */
const MAX_CODE_ATTEMPTS = 5;
const CODE_IN_MAIL = /Confirmation code: (\d{6})\b/;

/** A code of the same shape that is not `code`. */
const otherCode = (code: string): string => String((Number(code) + 1) % 1_000_000).padStart(code.length, "0");

/**
 * Seeds the withdrawals of {@link Fixtures.withdrawals}: each from `base` (the document's example
 * body on the seeded wallet) with 1 usdt, its own memo and its own `Idempotency-Key`; the codes
 * are read from the sandbox outbox, as a user would read their email.
 */
async function seedWithdrawals(
  call: ReturnType<typeof client>,
  asOwner: Record<string, string>,
  userId: string,
  email: string,
  base: JsonObject,
): Promise<Pick<Fixtures, "withdrawals" | "confirmationCode" | "wrongCode" | "seededInitiate">> {
  const path = `/users/${userId}/accounts/crypto/withdrawals`;
  const request = (role: string) => ({ idempotencyKey: `dredd-fixture-${role}`, body: { ...base, amount: 1, memo: `Dredd fixture: ${role}` } });
  const initiate = async (role: string) => {
    const { idempotencyKey, body } = request(role);
    const created = (await call("POST", path, 201, { headers: { ...asOwner, "Idempotency-Key": idempotencyKey }, body })).data;
    return String(created.id);
  };
  const codeOf = async (withdrawalId: string) => {
    const mails = (await call("GET", `/sandbox/mail?to=${encodeURIComponent(email)}`, 200, { headers: asOwner })).data as unknown as { subject: string; text: string }[];
    const mail = mails.find((m) => m.subject.includes(withdrawalId) && m.text.includes(withdrawalId));
    const code = mail && CODE_IN_MAIL.exec(mail.text)?.[1];
    if (!code) throw new Error(`Seeding: no confirmation code of withdrawal ${withdrawalId} in the sandbox outbox of ${email}`);
    return code;
  };
  const confirm = async (withdrawalId: string, code: string, expected: number) =>
    call("POST", `${path}/${withdrawalId}/confirm`, expected, { headers: asOwner, body: { code } });

  const completed = await initiate("completed");
  await confirm(completed, await codeOf(completed), 200);
  const cancelled = await initiate("cancelled");
  await call("DELETE", `${path}/${cancelled}`, 204, { headers: asOwner });
  const blocked = await initiate("blocked");
  const notBlockedCode = otherCode(await codeOf(blocked));
  for (let attempt = 0; attempt < MAX_CODE_ATTEMPTS; attempt++) await confirm(blocked, notBlockedCode, 400);
  const toConfirm = await initiate("to-confirm");
  const wrongCode = await initiate("wrong-code");
  return {
    withdrawals: {
      toConfirm,
      toCancel: await initiate("to-cancel"),
      toResend: await initiate("to-resend"),
      wrongCode,
      completed,
      cancelled,
      blocked,
    },
    confirmationCode: await codeOf(toConfirm),
    wrongCode: otherCode(await codeOf(wrongCode)),
    seededInitiate: request("completed"),
  };
}

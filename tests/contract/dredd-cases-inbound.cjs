/**
 * Dredd cases of the customer's inbound webhook (docs/decisions/withdrawals.md "PINs pushed by the
 * provider"), merged into the platform hookfile's CASES (tests/contract/dredd-hooks.cjs, which
 * documents what a case is). The secret is managed with the operator session on the example
 * customer; a pushed PIN is signed just before it is sent, with the `standardwebhooks` library and
 * a secret created for the example customer in the same step (Dredd's example signature cannot
 * verify: its timestamp is long past), and its 200 case pushes a PIN to a withdrawal initiated in
 * that step, so no seeded withdrawal changes.
 */
const { Webhook } = require("standardwebhooks");

/** Creates (or rotates) the example customer's inbound secret; resolves with it. */
async function inboundSecret(c) {
  const res = await fetch(`${c.contract.baseUrl}/customers/${c.f.customerId}/inbound-webhook`, {
    method: "POST",
    headers: { Authorization: `Bearer ${c.f.operatorToken}` },
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`Create Inbound Webhook answered ${res.status}: ${text}`);
  return JSON.parse(text).data.secret;
}

/** A new PENDING withdrawal of the example user (the body that seeded the completed one, without its key). */
async function pendingWithdrawal(c) {
  const res = await fetch(`${c.contract.baseUrl}/users/${c.f.userId}/accounts/crypto/withdrawals`, {
    method: "POST",
    headers: { "x-api-key": c.f.ownerKey, "Content-Type": "application/json" },
    body: JSON.stringify({ ...c.f.seededInitiate.body, memo: "Dredd: a pushed PIN" }),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`Initiating a withdrawal for the pushed PIN answered ${res.status}: ${text}`);
  return JSON.parse(text).data.id;
}

/**
 * Sends `body(withdrawalId)` (text) to the example customer's receive path, signed by its inbound
 * secret now; with `pending`, `withdrawalId` is a PENDING withdrawal initiated just before.
 */
function signed(c, body, { pending = false } = {}) {
  const request = c.path(`/inbound/${c.f.customerId}/pins`);
  if (pending) request.ensureActive(c.f.userId); // an earlier case may have deactivated the example user
  return request.before(async () => {
    const secret = await inboundSecret(c);
    const text = body(pending ? await pendingWithdrawal(c) : c.f.withdrawals.cancelled);
    const id = `msg_dredd_${Date.now().toString(36)}_${Math.random().toString(36).slice(2)}`;
    const at = new Date();
    c.rawBody(text);
    c.header("webhook-id", id);
    c.header("webhook-timestamp", String(Math.floor(at.getTime() / 1000)));
    c.header("webhook-signature", new Webhook(secret).sign(id, at, text));
  });
}

/**
 * The cases of the four operations. `ids` holds the hookfile's unknown customer.
 * @param {{ unknownCustomerId: string }} ids
 */
function inboundCases({ unknownCustomerId }) {
  const configPath = (c, customerId = c.f.customerId) => c.path(`/customers/${customerId}/inbound-webhook`);
  return {
    createInboundWebhook: {
      201: (c) => configPath(c),
      401: (c) => configPath(c).as("none").error("UNAUTHORIZED"),
      403: (c) => configPath(c).as("customerSession").error("FORBIDDEN"), // another customer's session
      404: (c) => configPath(c, unknownCustomerId).error("CUSTOMER_NOT_FOUND"),
    },
    getInboundWebhook: {
      200: (c) => configPath(c).before(() => inboundSecret(c)),
      401: (c) => configPath(c).as("none").error("UNAUTHORIZED"),
      403: (c) => configPath(c).as("owner").error("FORBIDDEN"),
      404: (c) => configPath(c, c.f.otherCustomerId).error("WEBHOOK_NOT_FOUND"), // the other customer has none
    },
    deleteInboundWebhook: {
      204: (c) => configPath(c).before(() => inboundSecret(c)),
      401: (c) => configPath(c).as("none").error("UNAUTHORIZED"),
      403: (c) => configPath(c).as("customerSession").error("FORBIDDEN"),
      404: (c) => configPath(c, c.f.otherCustomerId).error("WEBHOOK_NOT_FOUND"),
    },
    receiveInboundPin: {
      200: (c) => signed(c, (id) => JSON.stringify({ withdrawal_id: id, pin: "482913" }), { pending: true }),
      400: [
        (c) => signed(c, (id) => JSON.stringify({ withdrawal_id: id, pin: "482913" })).error("PIN_NOTIFICATION_FAILED"), // the cancelled withdrawal
        (c) => signed(c, () => "a PIN, not JSON").error("BAD_REQUEST"),
      ],
      401: (c) => c.path(`/inbound/${c.f.customerId}/pins`).error("INVALID_WEBHOOK_SIGNATURE"), // the example's signature and stale timestamp
      413: (c) => signed(c, (id) => JSON.stringify({ withdrawal_id: id, pin: "482913", pad: "x".repeat(9000) })).error("PAYLOAD_TOO_LARGE"), // over 8 KiB
    },
  };
}

module.exports = { inboundCases };

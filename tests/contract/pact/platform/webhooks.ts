/**
 * Platform pact, consumer cases of a customer's webhook with an operator session: register (and a
 * header key refused), read with header values masked, the 404 of a customer without one, update,
 * verify, rotate the signing secret, the delivery log, a retry and a recovery of missed
 * notifications, delete (docs/contract.md; recovery: docs/outbox.md "Recovering missed notifications").
 */
import { MatchersV3 } from "@pact-foundation/pact";
import { expect } from "vitest";
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  recoverWebhookDeliveries,
  retryWebhookDelivery,
  rotateWebhookSecret,
  updateWebhook,
  verifyWebhook,
} from "../../../../generated/client/platform/sdk.gen.js";
import { data, done, listed, platformClient } from "./client.js";
import {
  EXAMPLE_DELIVERY,
  EXAMPLE_SESSION,
  HOOKED,
  HOOK_URL,
  STATE,
  UNHOOKED,
  UUID_PATTERN,
  VERIFIED_USER,
  bearer,
  failure,
  fromState,
  meta,
  ok,
  timestamp,
  type ConsumerCase,
} from "./setup.js";

const { like, eachLike, regex, uuid, integer, equal, iso8601DateTimeWithMillis } = MatchersV3;

/** A client with the example operator session. */
const sessionClient = (url: string) => platformClient(url, { sessionToken: EXAMPLE_SESSION });
/** Path of the hooked customer's webhook, or of `suffix` under it. */
const hookPath = (suffix = "") => `/api/v1/customers/${HOOKED}/webhooks${suffix}`;
/** A signing secret. */
const WHSEC = regex(/^whsec_[A-Za-z0-9+/]{43}=$/, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw8ZLXCwN4bYA=");
/** The `withdrawal.pin` payload a delivery carries. */
const pinPayload = () => ({
  type: equal("withdrawal.pin"),
  timestamp: timestamp(),
  data: {
    withdrawal_id: uuid("0b9d6c1e-2f3a-4b5c-8d7e-6f5a4b3c2d1e"),
    user_id: uuid(VERIFIED_USER),
    customer_id: equal(HOOKED),
    code: regex(/^\d{4,8}$/, "482913"),
    expires_at: timestamp(),
  },
});
/** A delivery of the log with `status`, delivered at the first attempt. */
const delivery = (status: unknown) => ({
  delivery_id: uuid(EXAMPLE_DELIVERY),
  webhook_id: regex(/^msg_[A-Za-z0-9_-]{22}$/, "msg_2KWPBgLlAfxdpx2AI54pPJ"),
  event_type: equal("withdrawal.pin"),
  status,
  attempt_count: integer(1),
  attempts: eachLike({ attempted_at: timestamp(), http_status: integer(200), duration_ms: integer(12), error: null }),
  next_attempt_at: null,
  created_at: timestamp(),
  payload: pinPayload(),
});

/**
 * The `since` of the recovery: a day before this run (ISO 8601, UTC, milliseconds). The provider
 * accepts only instants at most 30 days back and not in the future (docs/outbox.md "Recovering
 * missed notifications"), and the pact is written and replayed in the same run, so a fixed example
 * would leave the window as time passes.
 */
const RECOVER_SINCE = new Date(Date.now() - 86_400_000).toISOString();

/** The cases, in the order they run. */
export const webhookCases: ConsumerCase[] = [
  {
    title: "registers a webhook and gets its signing secret once",
    run: async (pact) => {
      const body = { url: HOOK_URL, headers: [{ key: "X-Initech-Source", value: "custody" }] };
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.hookedCustomer)
        .uponReceiving("a request to register a webhook")
        .withRequest("POST", hookPath(), (b) => b.headers(bearer).jsonBody(body))
        .willRespondWith(201, (b) => b.jsonBody(ok({ message: like("Webhook registered."), url: HOOK_URL, signing_secret: WHSEC })))
        .executeTest(async (mock) => {
          const created = await data(createWebhook({ client: sessionClient(mock.url), path: { customer_id: HOOKED }, body }));
          expect(created.url).toBe(HOOK_URL);
          expect(created.signing_secret).toMatch(/^whsec_/);
        });
    },
  },

  {
    title: "gets 400 BAD_REQUEST for a header key with a space",
    run: async (pact) => {
      const body = { url: HOOK_URL, headers: [{ key: "X Initech", value: "custody" }] };
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.hookedCustomer)
        .uponReceiving("a request to register a webhook with an invalid header key")
        .withRequest("POST", hookPath(), (b) => b.headers(bearer).jsonBody(body))
        .willRespondWith(400, (b) => b.jsonBody(failure([{ code: "BAD_REQUEST", field: "headers.0.key", message: like("headers[0].key 'X Initech' may hold only letters, digits, '-' and '_'.") }])))
        .executeTest(async (mock) => {
          const error = await data(createWebhook({ client: sessionClient(mock.url), path: { customer_id: HOOKED }, body })).catch((e: unknown) => e);
          expect(error).toMatchObject({ status: 400, code: "BAD_REQUEST" });
        });
    },
  },

  {
    title: "reads the webhook with every header value masked",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.webhook)
        .uponReceiving("a request to read the webhook")
        .withRequest("GET", hookPath(), (b) => b.headers(bearer))
        .willRespondWith(200, (b) =>
          b.jsonBody(ok({ url: HOOK_URL, headers: eachLike({ key: like("X-Initech-Source"), value: equal("***masked***") }), enabled: true, disabled_reason: null })),
        )
        .executeTest(async (mock) => {
          const webhook = await data(getWebhook({ client: sessionClient(mock.url), path: { customer_id: HOOKED } }));
          expect(webhook.headers.every((h) => h.value === "***masked***")).toBe(true);
        });
    },
  },

  {
    title: "gets 404 WEBHOOK_NOT_FOUND for a customer without a webhook",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.unhooked)
        .uponReceiving("a request to read a webhook that is not configured")
        .withRequest("GET", `/api/v1/customers/${UNHOOKED}/webhooks`, (b) => b.headers(bearer))
        .willRespondWith(404, (b) => b.jsonBody(failure([{ code: "WEBHOOK_NOT_FOUND", message: like("Customer 'umbrella-co' has no webhook configured.") }])))
        .executeTest(async (mock) => {
          const error = await data(getWebhook({ client: sessionClient(mock.url), path: { customer_id: UNHOOKED } })).catch((e: unknown) => e);
          expect(error).toMatchObject({ status: 404, code: "WEBHOOK_NOT_FOUND" });
        });
    },
  },

  {
    title: "updates the webhook, keeping its secret",
    run: async (pact) => {
      const body = { url: HOOK_URL };
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.webhook)
        .uponReceiving("a request to update the webhook")
        .withRequest("PUT", hookPath(), (b) => b.headers(bearer).jsonBody(body))
        .willRespondWith(200, (b) => b.jsonBody(ok({ message: like("Webhook updated."), url: HOOK_URL })))
        .executeTest(async (mock) => {
          expect((await data(updateWebhook({ client: sessionClient(mock.url), path: { customer_id: HOOKED }, body }))).url).toBe(HOOK_URL);
        });
    },
  },

  {
    title: "verifies the webhook with a signed test payload",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.webhook)
        .uponReceiving("a request to verify the webhook")
        .withRequest("POST", hookPath("/verify"), (b) => b.headers(bearer))
        .willRespondWith(200, (b) =>
          b.jsonBody(
            ok({
              message: regex(/^Test notification delivered: .+$/, "Test notification delivered: the webhook answered HTTP 200."),
              payload: { type: equal("webhook.test"), timestamp: timestamp(), data: { customer_id: equal(HOOKED), message: like("Test notification from the custody platform.") } },
            }),
          ),
        )
        .executeTest(async (mock) => {
          const outcome = await data(verifyWebhook({ client: sessionClient(mock.url), path: { customer_id: HOOKED } }));
          expect(outcome.message).toMatch(/delivered/);
        });
    },
  },

  {
    title: "rotates the signing secret",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.webhook)
        .uponReceiving("a request to rotate the webhook signing secret")
        .withRequest("POST", hookPath("/secret"), (b) => b.headers(bearer))
        .willRespondWith(200, (b) => b.jsonBody(ok({ message: like("Signing secret rotated."), signing_secret: WHSEC, previous_secret_expires_at: timestamp() })))
        .executeTest(async (mock) => {
          expect((await data(rotateWebhookSecret({ client: sessionClient(mock.url), path: { customer_id: HOOKED } }))).signing_secret).toMatch(/^whsec_/);
        });
    },
  },

  {
    title: "lists the delivery log, newest first, with meta.pagination",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.delivered)
        .uponReceiving("a request to list webhook deliveries")
        .withRequest("GET", hookPath("/deliveries"), (b) => b.headers(bearer).query({ "filter[limit]": "10" }))
        .willRespondWith(200, (b) =>
          b.jsonBody({
            success: true,
            data: eachLike(delivery(regex(/^(pending|succeeded|failed|disabled)$/, "succeeded"))),
            meta: { ...meta(), pagination: like({ records: { skip: 0, has_next: false, has_previous: false, total: 1, limit: 10 }, navigation: { first: "/customers/initech-co/webhooks/deliveries?filter[limit]=10&filter[skip]=0", last: "/customers/initech-co/webhooks/deliveries?filter[limit]=10&filter[skip]=0", previous: null, next: null } }) },
          }),
        )
        .executeTest(async (mock) => {
          const page = await listed(listWebhookDeliveries({ client: sessionClient(mock.url), path: { customer_id: HOOKED }, query: { "filter[limit]": 10 } }));
          expect(page.data[0]?.event_type).toBe("withdrawal.pin");
        });
    },
  },

  {
    title: "retries a delivery now with the same webhook-id",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.delivered)
        .uponReceiving("a request to retry a webhook delivery")
        .withRequest("POST", fromState(`/api/v1/customers/${HOOKED}/webhooks/deliveries/\${deliveryId}/retry`, `^/api/v1/customers/${HOOKED}/webhooks/deliveries/${UUID_PATTERN}/retry$`, hookPath(`/deliveries/${EXAMPLE_DELIVERY}/retry`)), (b) => b.headers(bearer))
        .willRespondWith(200, (b) => b.jsonBody(ok({ ...delivery(equal("succeeded")), attempt_count: integer(2) })))
        .executeTest(async (mock) => {
          const retried = await data(retryWebhookDelivery({ client: sessionClient(mock.url), path: { customer_id: HOOKED, delivery_id: EXAMPLE_DELIVERY } }));
          expect(retried.status).toBe("succeeded");
        });
    },
  },

  {
    title: "recovers the failed and disabled deliveries since an instant",
    run: async (pact) => {
      const body = { since: RECOVER_SINCE };
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.webhook)
        .uponReceiving("a request to recover webhook deliveries")
        .withRequest("POST", hookPath("/deliveries/recover"), (b) => b.headers(bearer).jsonBody({ since: iso8601DateTimeWithMillis(RECOVER_SINCE) }))
        .willRespondWith(200, (b) => b.jsonBody(ok({ recovered: integer(0) })))
        .executeTest(async (mock) => {
          const { recovered } = await data(recoverWebhookDeliveries({ client: sessionClient(mock.url), path: { customer_id: HOOKED }, body }));
          expect(Number.isInteger(recovered) && recovered >= 0).toBe(true);
        });
    },
  },

  {
    title: "deletes the webhook",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.webhook)
        .uponReceiving("a request to delete the webhook")
        .withRequest("DELETE", hookPath(), (b) => b.headers(bearer))
        .willRespondWith(204)
        .executeTest(async (mock) => {
          await expect(done(deleteWebhook({ client: sessionClient(mock.url), path: { customer_id: HOOKED } }))).resolves.toBeUndefined();
        });
    },
  },
];

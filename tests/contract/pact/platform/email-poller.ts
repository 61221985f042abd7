/**
 * Platform pact, consumer cases of a customer's email poller with an operator session: configure
 * (password masked) and the 409 of a second one, read with its statistics, update, the 401 of an
 * unreachable mailbox, disable and enable by id, delete (docs/contract.md).
 */
import { MatchersV3 } from "@pact-foundation/pact";
import { expect } from "vitest";
import {
  createEmailPoller,
  deleteEmailPoller,
  disableEmailPoller,
  enableEmailPoller,
  getEmailPoller,
  updateEmailPoller,
  verifyEmailPoller,
} from "../../../../generated/client/platform/sdk.gen.js";
import { data, done, platformClient } from "./client.js";
import {
  EXAMPLE_POLLER,
  EXAMPLE_SESSION,
  HOOKED,
  IMAP_CLOSED,
  STATE,
  UUID_PATTERN,
  bearer,
  failure,
  fromState,
  ok,
  timestamp,
  type ConsumerCase,
} from "./setup.js";

const { like, regex, uuid, integer, boolean, equal } = MatchersV3;

/** A client with the example operator session. */
const sessionClient = (url: string) => platformClient(url, { sessionToken: EXAMPLE_SESSION });
/** Path of the hooked customer's email poller, or of `suffix` under it. */
const pollerPath = (suffix = "") => `/api/v1/customers/${HOOKED}/email/poller${suffix}`;
/** The Create Email Poller body: a mailbox on {@link IMAP_CLOSED}. */
const pollerBody = { imap: { ...IMAP_CLOSED, password: "mailbox-pass" }, description: "PIN mailbox" };
/** The poller as answered, password masked. */
const poller = () => ({
  poller_id: uuid(EXAMPLE_POLLER),
  customer_id: equal(HOOKED),
  email: like(`ops@${HOOKED}.example`),
  imap: { host: equal(IMAP_CLOSED.host), port: equal(IMAP_CLOSED.port), tls: equal(false), user: like(`ops@${HOOKED}.example`), password: equal("***masked***") },
  description: like("PIN mailbox"),
  enabled: boolean(true),
  created_at: timestamp(),
  updated_at: timestamp(),
});
// The seeded poller has polled once and failed (nothing listens on its port).
const stats = () => ({
  last_polled_at: timestamp(),
  last_successful_poll_at: null,
  last_error_at: timestamp(),
  last_error: like("connection refused by 127.0.0.1:9"),
  total_emails_processed: integer(0),
  total_pins_extracted: integer(0),
});
/** Path of an action on the poller, its id coming from the provider state. */
const pollerIdPath = (action: string) =>
  fromState(`/api/v1/customers/${HOOKED}/email/poller/\${pollerId}/${action}`, `^/api/v1/customers/${HOOKED}/email/poller/${UUID_PATTERN}/${action}$`, pollerPath(`/${EXAMPLE_POLLER}/${action}`));

/** The cases, in the order they run. */
export const emailPollerCases: ConsumerCase[] = [
  {
    title: "configures the email poller, password masked",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.noPoller)
        .uponReceiving("a request to create the email poller")
        .withRequest("POST", pollerPath(), (b) => b.headers(bearer).jsonBody(pollerBody))
        .willRespondWith(201, (b) => b.jsonBody(ok({ ...poller(), enabled: equal(true) })))
        .executeTest(async (mock) => {
          const created = await data(createEmailPoller({ client: sessionClient(mock.url), path: { customer_id: HOOKED }, body: pollerBody }));
          expect(created.imap.password).toBe("***masked***");
        });
    },
  },

  {
    title: "gets 409 POLLER_ALREADY_EXISTS for a second poller",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.poller)
        .uponReceiving("a request to create a second email poller")
        .withRequest("POST", pollerPath(), (b) => b.headers(bearer).jsonBody(pollerBody))
        .willRespondWith(409, (b) => b.jsonBody(failure([{ code: "POLLER_ALREADY_EXISTS", message: like("Customer 'initech-co' already has an email poller; update it instead.") }])))
        .executeTest(async (mock) => {
          const error = await data(createEmailPoller({ client: sessionClient(mock.url), path: { customer_id: HOOKED }, body: pollerBody })).catch((e: unknown) => e);
          expect(error).toMatchObject({ status: 409, code: "POLLER_ALREADY_EXISTS" });
        });
    },
  },

  {
    title: "reads the email poller with its statistics",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.poller)
        .uponReceiving("a request to read the email poller")
        .withRequest("GET", pollerPath(), (b) => b.headers(bearer))
        .willRespondWith(200, (b) => b.jsonBody(ok({ ...poller(), ...stats() })))
        .executeTest(async (mock) => {
          const got = await data(getEmailPoller({ client: sessionClient(mock.url), path: { customer_id: HOOKED } }));
          expect(got.total_pins_extracted).toBe(0);
          expect(got.last_error).toMatch(/refused/);
        });
    },
  },

  {
    title: "updates the email poller",
    run: async (pact) => {
      const body = { description: "PIN mailbox (primary)" };
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.poller)
        .uponReceiving("a request to update the email poller")
        .withRequest("PUT", pollerPath(), (b) => b.headers(bearer).jsonBody(body))
        .willRespondWith(200, (b) => b.jsonBody(ok({ ...poller(), description: equal("PIN mailbox (primary)"), ...stats() })))
        .executeTest(async (mock) => {
          expect((await data(updateEmailPoller({ client: sessionClient(mock.url), path: { customer_id: HOOKED }, body }))).description).toBe("PIN mailbox (primary)");
        });
    },
  },

  {
    title: "gets 401 UNAUTHORIZED with the reason when the mailbox login fails",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.poller)
        .uponReceiving("a request to verify an unreachable mailbox")
        .withRequest("POST", pollerPath("/verify"), (b) => b.headers(bearer))
        .willRespondWith(401, (b) => b.jsonBody(failure([{ code: "UNAUTHORIZED", message: regex(/^Mailbox verification failed: .+$/, "Mailbox verification failed: connection refused by 127.0.0.1:9.") }])))
        .executeTest(async (mock) => {
          const error = await data(verifyEmailPoller({ client: sessionClient(mock.url), path: { customer_id: HOOKED } })).catch((e: unknown) => e);
          expect(error).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
        });
    },
  },

  {
    title: "disables and enables the email poller by its poller_id",
    run: async (pact) => {
      for (const action of ["disable", "enable"] as const) {
        await pact
          .addInteraction()
          .given(STATE.operatorSession)
          .given(STATE.poller)
          .uponReceiving(`a request to ${action} the email poller`)
          .withRequest("POST", pollerIdPath(action), (b) => b.headers(bearer))
          .willRespondWith(200, (b) => b.jsonBody(ok({ message: like(`Email poller ${action}d.`) })))
          .executeTest(async (mock) => {
            const options = { client: sessionClient(mock.url), path: { customer_id: HOOKED, poller_id: EXAMPLE_POLLER } };
            const answer = await data(action === "disable" ? disableEmailPoller(options) : enableEmailPoller(options));
            expect(answer.message).toEqual(expect.any(String));
          });
      }
    },
  },

  {
    title: "deletes the email poller",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.operatorSession)
        .given(STATE.poller)
        .uponReceiving("a request to delete the email poller")
        .withRequest("DELETE", pollerPath(), (b) => b.headers(bearer))
        .willRespondWith(204)
        .executeTest(async (mock) => {
          await expect(done(deleteEmailPoller({ client: sessionClient(mock.url), path: { customer_id: HOOKED } }))).resolves.toBeUndefined();
        });
    },
  },
];

/**
 * A real HTTP receiver on loopback for webhook tests. It records every request and verifies its
 * signature with an implementation independent of the service's: the `standardwebhooks` npm
 * package (the Standard Webhooks reference library), against every secret it was given.
 */
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** One request as received. */
export interface ReceivedHook {
  headers: IncomingHttpHeaders;
  body: string;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
  /** For each secret given to {@link Receiver.trust}, whether `standardwebhooks` accepted the request. */
  verifiedBy: Record<string, boolean>;
  receivedAt: number;
}

/**
 * What the receiver answers: a status and an optional body; `hang` never answers. With `until`, the
 * answer waits for that promise first (the request is recorded at once): a test holds a sender in
 * flight for as long as it needs, and releases it.
 */
export type Answer = { status: number; body?: string; headers?: Record<string, string>; until?: Promise<unknown> } | "hang";

/** A running receiver. */
export interface Receiver {
  url: string;
  received: ReceivedHook[];
  /** Secrets to verify signatures with (`whsec_…`). */
  trust(...secrets: string[]): void;
  /** Answers to give, in order, before falling back to 200. */
  answers: Answer[];
  /**
   * Chooses the answer from the request itself (when several senders race, the order of
   * {@link answers} is not theirs); returning undefined falls back to {@link answers}. Unset: none.
   */
  respond(chooser: ((hook: ReceivedHook) => Answer | undefined) | undefined): void;
  /** Requests of one webhook-id. */
  byId(id: string): ReceivedHook[];
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 (a random port unless `port`). */
export async function startReceiver(port = 0): Promise<Receiver> {
  const secrets: string[] = [];
  const received: ReceivedHook[] = [];
  const answers: Answer[] = [];
  let chooser: ((hook: ReceivedHook) => Answer | undefined) | undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const verifiedBy: Record<string, boolean> = {};
      for (const secret of secrets) {
        try {
          new Webhook(secret).verify(body, req.headers as Record<string, string>);
          verifiedBy[secret] = true;
        } catch {
          verifiedBy[secret] = false;
        }
      }
      let json: ReceivedHook["json"];
      try {
        json = JSON.parse(body) as ReceivedHook["json"];
      } catch {
        json = { type: "(not json)", timestamp: "", data: {} };
      }
      const hook: ReceivedHook = { headers: req.headers, body, json, verifiedBy, receivedAt: Date.now() };
      received.push(hook);
      const answer = chooser?.(hook) ?? answers.shift() ?? { status: 200, body: '{"ok":true}' };
      if (answer === "hang") return;
      const reply = (): void => {
        res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
        res.end(answer.body ?? "");
      };
      if (answer.until) void answer.until.then(reply, reply);
      else reply();
    });
  });
  server.listen(port, "127.0.0.1");
  await once(server, "listening");
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}/hooks`,
    received,
    answers,
    trust: (...s) => secrets.push(...s),
    respond: (c) => {
      chooser = c;
    },
    byId: (id) => received.filter((r) => r.headers["webhook-id"] === id),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A gate for {@link Answer}'s `until`: `opened` resolves once `open()` is called (calling it again does nothing). */
export function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

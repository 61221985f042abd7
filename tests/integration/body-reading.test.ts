/**
 * How request bodies are read (docs/security.md, "Bodies, connections and time"): a plain UTF-8
 * body with a Content-Length is read into one buffer and decoded once, other encodings and charsets
 * through body-parser, with the same result; the memory of a body is given back as soon as it is
 * dropped, not at a later garbage collection; a body that the answer leaves unread on a connection
 * it closes is not read into memory first.
 */
import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/app.js";
import { Walk } from "../support/fixtures.js";
import { listen, type Listener } from "../support/listener.js";
import { sleep, waitFor } from "../support/wait.js";

const MIB = 1_048_576;

let app: TestApp;
let listener: Listener;
let port: number;
let ownerKey: string;
let chargesPath: string;

beforeAll(async () => {
  // A budget of two 1 MiB bodies, all of it open to one caller (the shares have their own tests
  // below); requests time out after 2 s (Node checks every second).
  app = await startTestApp({ MAX_BODY_BYTES_IN_FLIGHT: String(2 * MIB), MAX_BODY_BYTES_PER_CALLER: String(2 * MIB) });
  const { key, walletId } = await new Walk(app.express).creditWallet(`bodies-${Date.now().toString(36)}`);
  ownerKey = key;
  chargesPath = `/v2/wallet/credits/${walletId}/charges`;
  listener = await listen(app.express, { headersTimeoutS: 2, requestTimeoutS: 2, maxConnectionsPerAddress: 0 });
  ({ port } = listener);
});
afterAll(async () => {
  await listener?.close();
  await app?.dispose();
});

/** The head of a charge POST with the owner key declaring `length` bytes of `contentType`, plus `extra` header lines. */
const head = (length: number, contentType = "application/json", extra = ""): string =>
  `POST ${chargesPath} HTTP/1.1\r\nHost: x\r\nx-api-key: ${ownerKey}\r\nContent-Type: ${contentType}\r\nContent-Length: ${length}\r\n${extra}\r\n`;

/** A connection to the test server (from `localAddress`, a loopback address): what it received so far, and a promise of everything once the server closes it. */
const open = (localAddress = "127.0.0.1", toPort = port): { socket: Socket; received: () => string; closed: Promise<string> } => {
  const socket = connect({ port: toPort, host: "127.0.0.1", localAddress });
  const chunks: Buffer[] = [];
  socket.on("data", (c: Buffer) => chunks.push(c));
  socket.on("error", () => {});
  const received = (): string => Buffer.concat(chunks).toString("utf8");
  return { socket, received, closed: once(socket, "close").then(received) };
};

/** Sends `parts` on a new connection one write at a time, `pauseMs` apart, and resolves with the first whole answer. */
async function send(parts: (string | Buffer)[], pauseMs = 0): Promise<{ status: number; headers: string; body: string }> {
  const connection = open();
  await once(connection.socket, "connect");
  for (const part of parts) {
    connection.socket.write(part);
    if (pauseMs > 0) await sleep(pauseMs);
  }
  const text = await waitFor("a whole answer", () => {
    const received = connection.received();
    const end = received.indexOf("\r\n\r\n");
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(received)?.[1] ?? Number.NaN);
    return end >= 0 && Buffer.byteLength(received.slice(end + 4)) >= length ? received : undefined;
  });
  connection.socket.destroy();
  const end = text.indexOf("\r\n\r\n");
  return { status: Number(text.slice(9, 12)), headers: text.slice(0, end), body: text.slice(end + 4) };
}

describe("a body is read as body-parser read it", () => {
  it("a plain body with a byte order mark, sent in small writes, is charged", async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ amount: 101, description: "bom — and the rest" }))]);
    const parts: (string | Buffer)[] = [head(body.length)];
    for (let i = 0; i < body.length; i += 7) parts.push(body.subarray(i, i + 7));
    const res = await send(parts, 2);
    expect(res.status, res.body).toBe(201);
    expect(JSON.parse(res.body)).toMatchObject({ data: { amount: 101, description: "bom — and the rest" } });
  });

  it("a 300 KiB plain body (read into memory mapped for it) and the same body in UTF-16 or gzip give the same charge", async () => {
    const text = `${JSON.stringify({ amount: 102, description: "large" })}${" ".repeat(300 * 1024)}`;
    const plain = Buffer.from(text);
    const utf16 = Buffer.from(text, "utf16le");
    const gzipped = gzipSync(plain);
    for (const [label, bytes, contentType, extra] of [
      ["plain", plain, "application/json", ""],
      ["utf-8 named", plain, "application/json; charset=UTF-8", ""],
      ["utf-16le", utf16, "application/json; charset=utf-16le", ""],
      ["gzip", gzipped, "application/json", "Content-Encoding: gzip\r\n"],
    ] as const) {
      const res = await send([head(bytes.length, contentType, extra), bytes]);
      expect(res.status, `${label}: ${res.body}`).toBe(201);
      expect(JSON.parse(res.body), label).toMatchObject({ data: { amount: 102, description: "large" } });
    }
  });

  it("bytes that are not UTF-8 inside a string are read as U+FFFD, as before", async () => {
    const body = Buffer.concat([Buffer.from('{"amount":103,"description":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('b"}')]);
    const res = await send([head(body.length), body]);
    expect(res.status, res.body).toBe(201);
    expect((JSON.parse(res.body) as { data: { description: string } }).data.description).toBe("a\ufffd\ufffdb");
  });
});

describe("the memory of bodies is given back at once", () => {
  it("two bodies stalled 100 bytes short of 1 MiB hold about 2 MiB until they time out, and nothing after", async () => {
    const length = MIB;
    const sent = Buffer.alloc(length - 100, " ");
    sent.write('{"amount":1,"description":"x"}');
    const before = process.memoryUsage().external;
    const stalled = [open(), open()];
    for (const { socket } of stalled) {
      socket.write(head(length));
      socket.write(sent);
    }
    // Read by the server: the two buffers of the declared length are allocated and filled.
    await waitFor("the server to hold both bodies", () => (process.memoryUsage().external - before >= 2 * length - 200_000 ? true : undefined));
    const answers = await Promise.all(stalled.map(({ closed }) => closed));
    for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    // No garbage collection runs in between: what the bodies held is freed when their requests end.
    const after = process.memoryUsage().external;
    expect(after - before, `external memory ${before} before, ${after} after`).toBeLessThan(256 * 1024);
  });

  it("a body refused because the budget is full is answered 503 with Connection: close, and not read", async () => {
    const filler = Buffer.alloc(MIB - 100, " ");
    // A body of 512 KiB sent whole once the budget is full: refused before a byte of it is read,
    // and its connection closed rather than drained.
    const body = Buffer.alloc(512 * 1024, " ");
    body.write('{"amount":1,"description":"x"}');
    const before = process.memoryUsage().external;
    const holders = [open(), open()];
    for (const { socket } of holders) {
      socket.write(head(MIB));
      socket.write(filler);
    }
    // Each holder's buffer is allocated once its 1 MiB is reserved: both buffers read, the budget
    // is full (a probe request could take a share of the budget before the holders do).
    const beforeRefusal = await waitFor("both bodies to hold the budget", () => {
      const external = process.memoryUsage().external;
      return external - before >= 2 * MIB - 200_000 ? external : undefined;
    });
    const refused = open();
    refused.socket.write(head(body.length));
    refused.socket.write(body);
    const answer = await refused.closed;
    expect(answer).toMatch(/^HTTP\/1\.1 503 /);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(answer).toMatch(/\r\nRetry-After: 1\r\n/i);
    expect(process.memoryUsage().external - beforeRefusal).toBeLessThan(256 * 1024);
    for (const { socket } of holders) socket.destroy();
  });
});

describe("one caller cannot fill the body budget (docs/security.md, \"Bodies, connections and time\")", () => {
  let shared: TestApp;
  let sharedListener: Listener;
  let attackerKey: string;
  let attackerCharges: string;
  let neighbourKey: string;
  let neighbourCharges: string;

  beforeAll(async () => {
    // A budget of four 1 MiB bodies; each credential and each address may hold a quarter of it.
    shared = await startTestApp({ MAX_BODY_BYTES_IN_FLIGHT: String(4 * MIB) });
    const walk = new Walk(shared.express);
    const suffix = Date.now().toString(36);
    const attacker = await walk.creditWallet(`share-a-${suffix}`);
    const neighbour = await walk.creditWallet(`share-b-${suffix}`);
    attackerKey = attacker.key;
    attackerCharges = `/v2/wallet/credits/${attacker.walletId}/charges`;
    neighbourKey = neighbour.key;
    neighbourCharges = `/v2/wallet/credits/${neighbour.walletId}/charges`;
    sharedListener = await listen(shared.express, { headersTimeoutS: 5, requestTimeoutS: 5, maxConnectionsPerAddress: 0 });
  });
  afterAll(async () => {
    await sharedListener?.close();
    await shared?.dispose();
  });

  const chargeHead = (path: string, key: string, length: number): string =>
    `POST ${path} HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

  it("a key that stalls bodies gets 429 with Connection: close past its share, from any address; another tenant's charge goes through", async () => {
    // The attacker stalls one 1 MiB body (its whole share), then tries more from three other addresses.
    const stalled = open("127.0.0.1", sharedListener.port);
    stalled.socket.write(chargeHead(attackerCharges, attackerKey, MIB));
    stalled.socket.write("{");
    await sleep(200);
    const refused = await Promise.all(
      ["127.0.0.2", "127.0.0.3", "127.0.0.4"].map(async (address) => {
        const c = open(address, sharedListener.port);
        c.socket.write(chargeHead(attackerCharges, attackerKey, MIB));
        c.socket.write("{");
        return c.closed;
      }),
    );
    for (const answer of refused) {
      expect(answer).toMatch(/^HTTP\/1\.1 429 /);
      expect(answer).toMatch(/\r\nConnection: close\r\n/i);
      expect(answer).toMatch(/\r\nRetry-After: 1\r\n/i);
      expect(answer).toContain("TOO_MANY_REQUESTS");
    }
    // Another tenant, from another address, charges while the attacker's body is still stalled.
    const body = JSON.stringify({ amount: 100, description: "neighbour" });
    const neighbour = open("127.0.0.5", sharedListener.port);
    neighbour.socket.write(chargeHead(neighbourCharges, neighbourKey, Buffer.byteLength(body)) + body);
    const answer = await waitFor("the neighbour's answer", () => (/\r\n\r\n\{.*\}$/s.test(neighbour.received()) ? neighbour.received() : undefined));
    expect(answer).toMatch(/^HTTP\/1\.1 201 /);
    expect(stalled.received()).toBe("");
    neighbour.socket.destroy();
    stalled.socket.destroy();
  });

  it("an address that stalls bodies under many keys gets 429 past its share; the same keys from another address still work", async () => {
    // Two keys from one address: the first body takes the address's share, the second is refused.
    const first = open("127.0.0.6", sharedListener.port);
    first.socket.write(chargeHead(attackerCharges, attackerKey, MIB));
    first.socket.write("{");
    await sleep(200);
    const second = open("127.0.0.6", sharedListener.port);
    second.socket.write(chargeHead(neighbourCharges, neighbourKey, MIB));
    second.socket.write("{");
    expect(await second.closed).toMatch(/^HTTP\/1\.1 429 /);
    const body = JSON.stringify({ amount: 100, description: "elsewhere" });
    const elsewhere = open("127.0.0.7", sharedListener.port);
    elsewhere.socket.write(chargeHead(neighbourCharges, neighbourKey, Buffer.byteLength(body)) + body);
    const answer = await waitFor("the other address's answer", () => (/\r\n\r\n\{.*\}$/s.test(elsewhere.received()) ? elsewhere.received() : undefined));
    expect(answer).toMatch(/^HTTP\/1\.1 201 /);
    elsewhere.socket.destroy();
    first.socket.destroy();
  });
});

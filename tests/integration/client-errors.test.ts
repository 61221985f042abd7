/**
 * Requests Node's HTTP parser refuses before express (src/http/client-errors.ts): a URL beyond the
 * 16 KiB header limit answers 431 and a malformed request line 400, each in the envelope of the
 * surface it was addressed to, instead of Node's bare status line.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { answerClientErrors, pathOfRawRequest } from "../../src/http/client-errors.js";

const t = useTestApp();
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer(t.express);
  answerClientErrors(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Sends `raw` bytes on a fresh connection and returns the whole answer once the server closes it. */
async function rawExchange(raw: string): Promise<{ status: number; headers: string; body: string }> {
  const socket = connect(port, "127.0.0.1");
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  socket.on("error", () => {});
  socket.write(raw);
  await once(socket, "close");
  const text = Buffer.concat(chunks).toString("utf8");
  const [head = "", body = ""] = text.split("\r\n\r\n", 2);
  return { status: Number(head.split(" ")[1]), headers: head, body };
}

describe("requests the HTTP parser refuses", () => {
  it("answers a URL over 16 KiB with 431 in the platform envelope", async () => {
    const res = await rawExchange(`GET /api/v1/users?filter[where][email]=${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.headers).toMatch(/content-type: application\/json/i);
    const body = JSON.parse(res.body) as { success: boolean; errors: { code: string; message: string }[]; meta: Record<string, string> };
    expect(body.success).toBe(false);
    expect(body.errors[0]).toMatchObject({ code: "BAD_REQUEST" });
    expect(body.errors[0]!.message).toMatch(/16 KiB/);
    expect(body.meta.version).toBe("v1");
    expect(res.headers).toContain(`x-trace-id: ${body.meta.trace_id}`);
  });

  it("answers the same for a /v2 URL in the credit envelope", async () => {
    const res = await rawExchange(`GET /v2/credit-products?x=${"b".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(res.status).toBe(431);
    const body = JSON.parse(res.body) as { success: boolean; errors: { code: string }[]; meta: Record<string, string> };
    expect(body.errors[0]!.code).toBe("BAD_REQUEST");
    expect(body.meta.version).toBe("v2");
    expect(body.meta.traceId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers a malformed request line with 400 in the envelope", async () => {
    const res = await rawExchange("GET /api/v1/currencies HTTP/1.1\r\nBad Header Name: x\r\n\r\n");
    expect(res.status).toBe(400);
    const body = JSON.parse(res.body) as { errors: { code: string }[]; meta: Record<string, string> };
    expect(body.errors[0]!.code).toBe("BAD_REQUEST");
    expect(body.meta.version).toBe("v1");
  });

  it("keeps serving well-formed requests on other connections", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
  });

  it("reads the path of a partly received request", () => {
    expect(pathOfRawRequest(Buffer.from("GET /v2/x?y=1 HTTP/1.1\r\nHost"))).toBe("/v2/x");
    expect(pathOfRawRequest(Buffer.from("garbage"))).toBe("/");
    expect(pathOfRawRequest(undefined)).toBe("/");
  });
});

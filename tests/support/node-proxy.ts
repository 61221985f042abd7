/**
 * A JSON-RPC pass-through to a test node (Anvil, tests/support/anvil.ts) on a loopback port of its
 * own, for the live-chain tests that break the node (docs/decisions/live-chains.md "Deposits",
 * "Sends", "The operators' view"): `stop()` and `start()` take it away and back on the same port,
 * `hang` reads each request and never answers it (a node that hangs), and a subclass changes or
 * holds the answers by overriding {@link NodeProxy.answer}.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export class NodeProxy {
  /** While true, requests are read and never answered, until the client gives up or the proxy stops. */
  hang = false;
  private readonly server: Server;
  private port = 0;

  /** @param target the node's JSON-RPC URL. */
  constructor(protected readonly target: string) {
    this.server = createServer((req, res) => void this.forward(req, res));
  }

  /** The proxy's URL (after the first {@link start}). */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Listens, on the port of the first start when started again. */
  async start(): Promise<void> {
    this.server.listen(this.port, "127.0.0.1");
    await once(this.server, "listening");
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Stops listening and drops every open connection. */
  async stop(): Promise<void> {
    const closed = new Promise((resolve) => this.server.close(resolve));
    this.server.closeAllConnections();
    await closed;
  }

  /** Answers one request of JSON-RPC `body` (a call or a batch): by default the node's answer, as it came. */
  protected async answer(body: Buffer, res: ServerResponse): Promise<void> {
    const answer = await this.send(body);
    res.writeHead(answer.status, { "content-type": "application/json" });
    res.end(Buffer.from(await answer.arrayBuffer()));
  }

  /** `body` sent to the node. */
  protected send(body: Buffer): Promise<Response> {
    return fetch(this.target, { method: "POST", headers: { "content-type": "application/json" }, body });
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (this.hang) return;
    try {
      await this.answer(Buffer.concat(chunks), res);
    } catch {
      res.destroy();
    }
  }
}

/**
 * A TCP relay in front of the run's PostgreSQL that a test can break the way a failover does
 * (docs/operations.md "Database waits"): `cut()` drops every connection and refuses new ones (a dead
 * server), `freeze()` keeps every connection open but passes no byte either way, new ones included
 * (a hung server: SIGSTOP, a network that drops packets), `thaw()` passes the held bytes on, and
 * `open()` serves again on the same port.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

export class TcpRelay {
  private server: Server | undefined;
  private readonly pairs = new Set<[Socket, Socket]>();
  private frozen = false;
  port = 0;

  constructor(
    private readonly host: string,
    private readonly targetPort: number,
  ) {}

  /** A relay to the server of `databaseUrl`; {@link url} rewrites such a URL to go through it. */
  static to(databaseUrl: string): TcpRelay {
    const target = new URL(databaseUrl);
    return new TcpRelay(target.hostname, Number(target.port || 5432));
  }

  /** `databaseUrl` through this relay (same user, password and database). */
  url(databaseUrl: string): string {
    const via = new URL(databaseUrl);
    via.hostname = "127.0.0.1";
    via.port = String(this.port);
    return via.toString();
  }

  /** Listens (on the port of an earlier `open()` when there was one). */
  async open(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, this.host);
      const pair: [Socket, Socket] = [client, upstream];
      this.pairs.add(pair);
      for (const s of pair) {
        s.on("error", () => {});
        s.on("close", () => {
          this.pairs.delete(pair);
          client.destroy();
          upstream.destroy();
        });
      }
      if (this.frozen) client.pause();
      else this.join(pair);
    });
    await new Promise<void>((done) => server.listen(this.port, "127.0.0.1", done));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Drops every connection and stops listening (connections are refused until {@link open}). */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  }

  /** Passes no byte from now on, on open and new connections alike, until {@link thaw}. */
  freeze(): void {
    this.frozen = true;
    for (const [a, b] of this.pairs) {
      a.unpipe(b);
      b.unpipe(a);
      a.pause();
      b.pause();
    }
  }

  /** Passes bytes again, those held first. */
  thaw(): void {
    this.frozen = false;
    for (const pair of this.pairs) this.join(pair);
  }

  /** Stops for good. */
  async close(): Promise<void> {
    await this.cut();
  }

  private join([a, b]: [Socket, Socket]): void {
    a.pipe(b);
    b.pipe(a);
  }
}

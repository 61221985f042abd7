/**
 * The service's own HTTP listener (src/http/client-errors.ts `createHttpServer`, with its time and
 * connection bounds) around a test app, on a free loopback port.
 */
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import { createHttpServer, type ServerLimits } from "../../src/http/client-errors.js";

/** A listening server, its port, and how to close it with every connection it holds. */
export interface Listener {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 (a free port) with `app` behind the service's HTTP server bounded by `limits`. */
export async function listen(app: Express, limits: ServerLimits): Promise<Listener> {
  const server = createHttpServer(app, limits);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

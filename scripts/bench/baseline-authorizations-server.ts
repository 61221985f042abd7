/**
 * The baseline server of the card-authorization rows of `npm run bench` (BENCH_ONLY=authorizations)
 * and of the Authorize Card rows (BENCH_ONLY=cards): scripts/bench/baseline-authorizations.ts, and
 * scripts/bench/baseline-cards.ts for `/v2/cards/…`, on bare `node:http` with a raw `pg.Pool` of 10 (the
 * service's pool size), as a child process of the benchmark (same Node), on `PORT` (loopback), with
 * `DATABASE_URL` and `SECRETS_KEY`. `/healthz` answers 200 (the readiness probe of scripts/bench/processes.ts).
 */
import { createServer } from "node:http";
import pg from "pg";
import { authorizationBaselineListener } from "./baseline-authorizations.js";
import { cardBaselineListener } from "./baseline-cards.js";

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
};
const pool = new pg.Pool({ connectionString: env("DATABASE_URL"), max: 10 });
const listener = authorizationBaselineListener(pool, env("SECRETS_KEY"));
const cards = cardBaselineListener(pool, env("SECRETS_KEY"));
const server = createServer((req, res) => {
  if (req.url === "/healthz") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"status":"ok"}');
    return;
  }
  if (req.url?.startsWith("/v2/cards/")) cards(req, res);
  else listener(req, res);
});
server.listen(Number(env("PORT")), "127.0.0.1");
const stop = (): void => {
  server.close();
  server.closeAllConnections();
  void pool.end().finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);

/**
 * The baseline server of `npm run bench`: scripts/bench/baseline.ts on bare `node:http`, as a child
 * process of the benchmark (same Node), on `PORT` (loopback), with `DATABASE_URL`, `SECRETS_KEY` and
 * `BENCH_CURRENCIES` (the `data` of the service's `GET /api/v1/currencies`, captured once).
 */
import { createServer } from "node:http";
import { createBaseline } from "./baseline.js";

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
};
const baseline = createBaseline({ databaseUrl: env("DATABASE_URL"), secretsKey: env("SECRETS_KEY"), currenciesJson: env("BENCH_CURRENCIES") });
const server = createServer(baseline.listener);
server.listen(Number(env("PORT")), "127.0.0.1");
const stop = (): void => {
  server.close();
  server.closeAllConnections();
  void baseline.pool.end().finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);

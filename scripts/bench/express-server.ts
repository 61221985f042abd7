/**
 * The informative extra baseline of `npm run bench`: bare express 5 (no middleware) answering
 * `GET /healthz` with the service's body, on `PORT` (loopback). What the framework alone costs,
 * next to the bare `node:http` baseline (scripts/bench/baseline-server.ts).
 */
import express from "express";

const app = express();
app.get("/healthz", (_req, res) => {
  res.json({ status: "ok" });
});
const server = app.listen(Number(process.env.PORT), "127.0.0.1");
process.on("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});

/**
 * A database that does not answer within `DATABASE_WAIT_S` (docs/operations.md "Database waits";
 * docs/decisions/requests-and-validation.md "When the database cannot be reached"): the errors of
 * each bound count as unreachable (503, src/db/unavailable.ts), and the pool's settings are derived
 * from the one variable (src/db/orm.ts `boundedWaitOptions`, src/config.ts).
 */
import { describe, expect, it } from "vitest";
import { DriverException, LockWaitTimeoutException } from "@mikro-orm/core";
import { isDatabaseUnavailable } from "../../src/db/unavailable.js";
import { boundedWaitOptions, serverTimeoutMs } from "../../src/db/orm.js";
import { loadConfig } from "../../src/config.js";
import { renderError } from "../../src/http/errors.js";

const withCode = (code: string, message = "x"): Error => Object.assign(new Error(message), { code });

describe("the errors of a wait cut at DATABASE_WAIT_S", () => {
  it.each([
    ["statement_timeout 57014", withCode("57014", "canceling statement due to statement timeout")],
    ["lock_timeout 55P03", withCode("55P03", "canceling statement due to lock timeout")],
    ["lock_timeout through the ORM", new LockWaitTimeoutException(withCode("55P03", "canceling statement due to lock timeout"))],
    ["the driver's query_timeout", new Error("Query read timeout")],
    ["pg-pool's connection timeout", new Error("timeout exceeded when trying to connect")],
    ["pg's connection timeout", new Error("Connection terminated due to connection timeout")],
    ["a connection ended under the request", new Error("Connection terminated")],
    ["a timeout wrapped by the ORM", new DriverException(withCode("57014"))],
  ])("%s: unreachable, 503 with Retry-After", (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
    const rendered = renderError("platform", error);
    expect(rendered.status).toBe(503);
    expect(Number(rendered.headers?.["Retry-After"])).toBeGreaterThan(0);
    expect(rendered.errors[0]?.code).toBe("SERVICE_UNAVAILABLE");
  });

  it.each([
    ["a deadlock 40P01", withCode("40P01")],
    ["a check violation 23514", withCode("23514")],
    ["a message that merely mentions a timeout", new Error("the webhook's timeout is 5 s")],
  ])("%s: not unreachable", (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe("the bounds of DATABASE_WAIT_S", () => {
  it("bounds the connection wait and the driver at the whole wait", () => {
    expect(boundedWaitOptions(10)).toEqual({ connectionTimeoutMillis: 10_000, query_timeout: 10_000, keepAlive: true, keepAliveInitialDelayMillis: 1_000 });
  });

  it("has PostgreSQL cancel half a second sooner, and at half the wait for 1 s", () => {
    expect(serverTimeoutMs(10)).toBe(9_500);
    expect(serverTimeoutMs(2)).toBe(1_500);
    expect(serverTimeoutMs(1)).toBe(500);
  });
});

describe("DATABASE_WAIT_S", () => {
  const base = { DATABASE_URL: "postgres://u:p@db:5432/x", SECRETS_KEY: "s".repeat(32) };

  it("defaults to 10 and accepts 1 to 120", () => {
    expect(loadConfig(base).databaseWaitS).toBe(10);
    expect(loadConfig({ ...base, DATABASE_WAIT_S: "1" }).databaseWaitS).toBe(1);
    expect(loadConfig({ ...base, DATABASE_WAIT_S: "120" }).databaseWaitS).toBe(120);
  });

  it.each(["0", "121", "ten", "2.5"])("refuses %s", (value) => {
    expect(() => loadConfig({ ...base, DATABASE_WAIT_S: value })).toThrow(/DATABASE_WAIT_S/);
  });
});

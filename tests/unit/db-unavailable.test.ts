/** Which errors mean "the database cannot be reached" (src/db/unavailable.ts; docs/decisions/requests-and-validation.md "When the database cannot be reached"). */
import { describe, expect, it } from "vitest";
import { DriverException, UniqueConstraintViolationException } from "@mikro-orm/core";
import { isDatabaseUnavailable } from "../../src/db/unavailable.js";

const withCode = (code: string, message = "x"): Error => Object.assign(new Error(message), { code });

describe("isDatabaseUnavailable", () => {
  it.each([
    ["connection refused", withCode("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432")],
    ["connection reset", withCode("ECONNRESET")],
    ["admin_shutdown 57P01", withCode("57P01", "terminating connection due to administrator command")],
    ["cannot_connect_now 57P03", withCode("57P03", "the database system is starting up")],
    ["connection_failure 08006", withCode("08006")],
    ["sqlclient_unable_to_establish_sqlconnection 08001", withCode("08001")],
    ["too_many_connections 53300", withCode("53300")],
    ["read_only_sql_transaction 25006 (a standby reached during a failover)", withCode("25006", "cannot execute INSERT in a read-only transaction")],
    ["pg's lost connection", new Error("Connection terminated unexpectedly")],
    ["pg-pool's timeout", new Error("timeout exceeded when trying to connect")],
    ["a driver exception wrapping a refusal", new DriverException(withCode("ECONNREFUSED"))],
    ["a cause chain", new Error("query failed", { cause: withCode("57P01") })],
    ["an AggregateError of refused addresses", Object.assign(new AggregateError([withCode("ECONNREFUSED"), withCode("ECONNREFUSED")], ""), {})],
  ])("%s: yes", (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ["a unique violation 23505", new UniqueConstraintViolationException(withCode("23505", "duplicate key value"))],
    ["a syntax error 42601", withCode("42601")],
    ["a serialization failure 40001", withCode("40001")],
    ["a plain error", new Error("boom")],
    ["a string", "ECONNREFUSED"],
    ["undefined", undefined],
  ])("%s: no", (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

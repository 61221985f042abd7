/**
 * NotificationsEnlist over HTTP on a real PostgreSQL (docs/decisions/notifications.md, docs/decisions/credit.md):
 * `PUT /v2/notifications` registers the tenant's credit notification URL with a fresh `whsec_`
 * signing secret returned only in that answer and sealed at rest; `GET /v2/notifications` reads the
 * target back without it. The URL rules and the SSRF guard are the platform webhook's, answered as
 * 422 `VALIDATION_ERROR` on `creditNotificationsURL`. The app runs with the guard on
 * (`ALLOW_PRIVATE_NETWORK_TARGETS` unset), so accepted targets are public IP literals (no DNS).
 */
import type request from "supertest";
import { describe, expect, it } from "vitest";
import { TEST_MASTER_KEY, useTestApp } from "../support/app.js";
import { Walk } from "../support/fixtures.js";
import { clockPast } from "../support/wait.js";

const t = useTestApp();
let seq = 0;

const PATH = "/v2/notifications";
const api = t.api;
const PUBLIC_URL = "https://93.184.215.14/credit-hooks";

/** A new tenant (customer with an owner API key). */
async function tenant(): Promise<{ customerId: string; key: string }> {
  const { customerId, key } = await new Walk(t.express).tenant(`cn-${++seq}-${Date.now().toString(36)}`);
  return { customerId, key };
}

/** Registers `url` for the tenant of `key`; expects 200 and returns `data`. */
async function enlist(key: string, url = PUBLIC_URL): Promise<Record<string, unknown>> {
  const res = await api().put(PATH).set("x-api-key", key).send({ creditNotificationsURL: url });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as Record<string, unknown>;
}

/** Expects a credit 422 `VALIDATION_ERROR` on `creditNotificationsURL` (or `field`). */
function expectInvalid(res: request.Response, field = "creditNotificationsURL"): void {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body).toMatchObject({ success: false, meta: { version: "v2" } });
  expect(res.body.errors).toContainEqual(expect.objectContaining({ code: "VALIDATION_ERROR", field }));
}

describe("NotificationsEnlist", () => {
  it("registers the URL with a whsec_ secret of 32 random bytes, returned in that answer only", async () => {
    const { key } = await tenant();
    const res = await api().put(PATH).set("x-api-key", key).send({ creditNotificationsURL: PUBLIC_URL });
    expect(res.status).toBe(200);
    expect(res.headers["x-trace-id"]).toBe(res.body.meta.traceId);
    expect(res.body).toMatchObject({ success: true, data: { creditNotificationsURL: PUBLIC_URL, enabled: true }, meta: { version: "v2" } });
    const secret = res.body.data.signingSecret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    expect(Buffer.from(secret.slice("whsec_".length), "base64")).toHaveLength(32);

    const read = await api().get(PATH).set("x-api-key", key);
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual({
      creditNotificationsURL: PUBLIC_URL,
      enabled: true,
      createdAt: res.body.data.createdAt,
      updatedAt: res.body.data.updatedAt,
    });
    expect(JSON.stringify(read.body)).not.toContain(secret.slice("whsec_".length));
  });

  it("gives a fresh secret on every call (the way to replace a lost one), keeps createdAt, replaces the URL", async () => {
    const { key } = await tenant();
    const first = await enlist(key);
    await clockPast(first.updatedAt as string);
    const again = await enlist(key);
    expect(again.signingSecret).not.toBe(first.signingSecret);
    expect(again.createdAt).toBe(first.createdAt);
    expect(Date.parse(again.updatedAt as string)).toBeGreaterThan(Date.parse(first.updatedAt as string));
    const moved = await enlist(key, "http://93.184.215.15:8443/other?x=1");
    expect(moved.signingSecret).not.toBe(again.signingSecret);
    const read = await api().get(PATH).set("x-api-key", key);
    expect(read.body.data.creditNotificationsURL).toBe("http://93.184.215.15:8443/other?x=1");
  });

  it("stores the secret sealed: the database row never holds it in clear", async () => {
    const { customerId, key } = await tenant();
    const secret = (await enlist(key)).signingSecret as string;
    const rows = await t.orm.em.fork().execute<{ secret_sealed: string; url: string }[]>(
      "select secret_sealed, url from credit_notification_target where customer_id = ?",
      [customerId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.url).toBe(PUBLIC_URL);
    expect(rows[0]?.secret_sealed).not.toContain(secret.slice("whsec_".length));
    expect(await t.services.creditNotifications.signingSecret(t.orm.em.fork(), customerId)).toBe(secret);
  });

  it.each([
    ["not an absolute URL", "hooks.example.com/credit"],
    ["another scheme", "ftp://93.184.215.14/credit"],
    ["user info", "https://user:pass@93.184.215.14/credit"],
    ["loopback (SSRF guard)", "http://127.0.0.1:8080/credit"],
    ["private network (SSRF guard)", "http://10.0.0.5/credit"],
    ["cloud metadata, link-local (SSRF guard)", "http://169.254.169.254/latest/meta-data"],
    ["IPv6 loopback (SSRF guard)", "http://[::1]/credit"],
    ["a host that does not resolve", "https://no-such-host.invalid/credit"],
    ["more than 2048 characters", `https://93.184.215.14/${"a".repeat(2040)}`],
    ["more than 2048 characters once normalised", `https://93.184.215.14/${"é".repeat(400)}`],
    ["port 0", "https://93.184.215.14:0/credit"],
    ["a CR LF inside", "https://93.184.215.14/cre\r\ndit"],
    ["a trailing space", "https://93.184.215.14/credit "],
    ["IPv4-compatible IPv6 loopback (SSRF guard)", "http://[::127.0.0.1]:18940/hook"],
    ["NAT64 of a private address (SSRF guard)", "http://[64:ff9b::10.0.0.5]/credit"],
  ])("answers 422 on creditNotificationsURL for %s, and registers nothing", async (_case, url) => {
    const { key } = await tenant();
    expectInvalid(await api().put(PATH).set("x-api-key", key).send({ creditNotificationsURL: url }));
    const read = await api().get(PATH).set("x-api-key", key);
    expect(read.status).toBe(404);
  });

  it("answers 422 for a missing URL, a non-string one and an unknown key; a refused URL leaves the current target as it was", async () => {
    const { key } = await tenant();
    expectInvalid(await api().put(PATH).set("x-api-key", key).send({}));
    expectInvalid(await api().put(PATH).set("x-api-key", key).send({ creditNotificationsURL: 42 }));
    expectInvalid(await api().put(PATH).set("x-api-key", key).send({ creditNotificationsURL: PUBLIC_URL, headers: [] }), "headers");
    const registered = await enlist(key);
    expectInvalid(await api().put(PATH).set("x-api-key", key).send({ creditNotificationsURL: "http://127.0.0.1/x" }));
    const read = await api().get(PATH).set("x-api-key", key);
    expect(read.body.data).toMatchObject({ creditNotificationsURL: PUBLIC_URL, updatedAt: registered.updatedAt });
  });
});

describe("Get Notifications Settings, credentials and tenants", () => {
  it("answers 404 NOT_FOUND before any URL is registered", async () => {
    const { key } = await tenant();
    const res = await api().get(PATH).set("x-api-key", key);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ success: false, errors: [{ code: "NOT_FOUND" }], meta: { version: "v2" } });
  });

  it("keeps tenants apart: one tenant's target is not another's", async () => {
    const a = await tenant();
    const b = await tenant();
    await enlist(a.key, PUBLIC_URL);
    expect((await api().get(PATH).set("x-api-key", b.key)).status).toBe(404);
    await enlist(b.key, "https://93.184.215.16/b");
    expect((await api().get(PATH).set("x-api-key", a.key)).body.data.creditNotificationsURL).toBe(PUBLIC_URL);
    expect((await api().get(PATH).set("x-api-key", b.key)).body.data.creditNotificationsURL).toBe("https://93.184.215.16/b");
  });

  it("answers 403 FORBIDDEN to the master key (a tenant operation) and 401 without a key", async () => {
    for (const res of [
      await api().put(PATH).set("x-api-key", TEST_MASTER_KEY).send({ creditNotificationsURL: PUBLIC_URL }),
      await api().get(PATH).set("x-api-key", TEST_MASTER_KEY),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.errors[0].code).toBe("FORBIDDEN");
    }
    const anonymous = await api().put(PATH).send({ creditNotificationsURL: PUBLIC_URL });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.errors[0].code).toBe("UNAUTHORIZED");
  });
});

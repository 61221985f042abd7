/**
 * The credential cache's guards besides the NOTIFY (docs/decisions/credentials-and-tokens.md "The
 * credential cache"): a token is refused once expired even while its admission is cached, and
 * while the LISTEN session is down the cache is empty and unused (a revocation then, whose NOTIFY
 * could be missed, is refused at once), the outage logged once and counted, and the cache back in
 * use once the session is. The session is cut by a TCP relay in front of the run's PostgreSQL.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import pino from "pino";
import { Authenticator } from "../../src/modules/identity/auth.js";
import { bootstrapIdentitySecrets, type IdentitySecrets } from "../../src/modules/identity/bootstrap.js";
import { NotificationListener } from "../../src/db/listen.js";
import { TEST_MASTER_KEY, TEST_SECRETS_KEY, useTestApp } from "../support/app.js";
import { Walk } from "../support/fixtures.js";
import { TcpRelay } from "../support/tcp-relay.js";
import { waitFor } from "../support/wait.js";

const app = useTestApp();
let secrets: IdentitySecrets;
let admin: pg.Client;
const listeners: NotificationListener[] = [];

beforeAll(async () => {
  secrets = await bootstrapIdentitySecrets(app.db, { secretsKey: TEST_SECRETS_KEY, masterApiKey: TEST_MASTER_KEY });
  admin = new pg.Client({ connectionString: app.databaseUrl });
  await admin.connect();
});

afterEach(async () => {
  await Promise.all(listeners.splice(0).map((l) => l.close()));
});

afterAll(async () => {
  await admin?.end();
});

/** A pino logger whose lines land in `lines`. */
function capturingLogger(lines: { msg: string; level: number }[]) {
  return pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string; level: number }) });
}

/** An authenticator of the app's secrets with a cache of `ttlMs`, following a listener on `url`. */
async function authenticatorOn(url: string, ttlMs: number, lines: { msg: string; level: number }[] = []): Promise<{ auth: Authenticator; listener: NotificationListener }> {
  const auth = new Authenticator(secrets.box, secrets.masterHash, app.db, ttlMs);
  const listener = new NotificationListener(url, capturingLogger(lines), { firstMs: 50, maxMs: 200 });
  listeners.push(listener);
  auth.follow(listener);
  await listener.start();
  return { auth, listener };
}

const revokeSilently = (credentialId: string) => admin.query("update credential set is_active = false, revoked_at = now() where credential_id = $1", [credentialId]);

describe("expiry", () => {
  it("refuses an expired token although its admission is still cached", { timeout: 15_000 }, async () => {
    const walk = new Walk(app.express);
    const { customerId, key, credentialId } = await walk.tenant("listen-expiry");
    const { userId } = await walk.activeUserWithToken(key);
    const { auth } = await authenticatorOn(app.databaseUrl, 60_000);
    expect(auth.cacheActive).toBe(true);
    // 4 s: long enough for the two cached checks below on a loaded machine, short for the wait
    const { token, expiresAt } = await secrets.box.issueToken({ kind: "user", userId, customerId, credentialId, tokenVersion: 0 }, 4);
    const headers = { authorization: `Bearer ${token}` };
    expect((await auth.authenticate(headers)).ok).toBe(true);
    // served from the cache: the credential revoked without a NOTIFY is not seen within the (60 s) bound
    await revokeSilently(credentialId);
    expect((await auth.authenticate(headers)).ok).toBe(true);
    await waitFor("the token to expire", () => (Date.now() >= expiresAt.getTime() ? true : undefined), 6000);
    expect(await auth.authenticate(headers)).toEqual({ ok: false, reason: "Token has expired." });
  });
});

describe("while the LISTEN session is down", () => {
  it("drops the cache, checks every credential in the database, logs the outage once, and uses the cache again once back", { timeout: 20_000 }, async () => {
    const relay = TcpRelay.to(app.databaseUrl);
    await relay.open();
    const viaRelay = relay.url(app.databaseUrl);
    const lines: { msg: string; level: number }[] = [];
    const { auth, listener } = await authenticatorOn(viaRelay, 60_000, lines);
    expect(auth.cacheActive).toBe(true);

    const walk = new Walk(app.express);
    const { customerId, key: first, credentialId: firstId } = await walk.tenant("listen-down");
    expect((await auth.authenticate({ "x-api-key": first })).ok).toBe(true);
    await revokeSilently(firstId);
    // cached while listening: the silent revocation is not seen yet
    expect((await auth.authenticate({ "x-api-key": first })).ok).toBe(true);

    await relay.cut();
    await waitFor("the cache to be off", () => (auth.cacheActive ? undefined : true));
    // the cache was dropped: the first key is checked again, and refused
    expect(await auth.authenticate({ "x-api-key": first })).toEqual({ ok: false, reason: "API key has been revoked." });
    // nothing is kept while down: a key admitted now and revoked silently is refused at once
    const second = await walk.ownerKey(customerId);
    expect((await auth.authenticate({ "x-api-key": second.secret })).ok).toBe(true);
    await revokeSilently(second.credentialId);
    expect(await auth.authenticate({ "x-api-key": second.secret })).toEqual({ ok: false, reason: "API key has been revoked." });
    // several reconnection attempts fail (50, 100, 200, 200 … ms)
    await new Promise((r) => setTimeout(r, 700));
    expect(listener.up).toBe(false);

    await relay.open();
    await waitFor("the LISTEN session to be back", () => (auth.cacheActive ? true : undefined), 5000);
    expect(listener.outages).toBe(1);
    expect(lines.filter((l) => l.msg.startsWith("LISTEN connection lost"))).toHaveLength(1);
    expect(lines.filter((l) => l.msg.startsWith("LISTEN connection back"))).toHaveLength(1);
    // the cache is in use again
    const third = await walk.ownerKey(customerId);
    expect((await auth.authenticate({ "x-api-key": third.secret })).ok).toBe(true);
    await revokeSilently(third.credentialId);
    expect((await auth.authenticate({ "x-api-key": third.secret })).ok).toBe(true);
    await relay.cut();
  });
});

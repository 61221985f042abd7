/**
 * Property-based requests for every operation of both emitted documents (docs/testing.md "`tests/integration/`"): valid requests
 * generated from each operation's schemas (json-schema-faker, seeded by fast-check), then broken by
 * fast-check (a required field dropped, a wrong type, a string at or past its bounds, unicode and
 * control characters, stray keys, a body of the wrong shape, a fuzzed path or query value, and the
 * forms of docs/security.md: an integer written with a fraction, a key given twice, broken
 * percent-encoding in a path, leap seconds and year 0, non-ASCII header values, thousands of
 * unknown keys). Every
 * answer must be a 2xx or a 4xx in the surface's envelope whose status the operation declares and
 * whose body matches the document, never a 5xx. Runs are bounded and repeatable: `FUZZ_RUNS` per
 * operation (default 12) from seed `FUZZ_SEED` (default fixed, so CI is deterministic); explore with, for example,
 * `FUZZ_RUNS=500 FUZZ_SEED=$RANDOM npx vitest run tests/integration/fuzz.test.ts`. A failure prints
 * its seed and the shrunk request.
 */
import fc from "fast-check";
import { generateSync } from "json-schema-faker";
import { OpenAPIBackend, type Document } from "openapi-backend";
import ajvFormats from "ajv-formats";
import { beforeAll, describe, expect, it } from "vitest";
import { loadDocument } from "../../src/http/docs.js";
import { creditAccess } from "../../src/http/credit/wiring.js";
import { TEST_MASTER_KEY, useTestApp } from "../support/app.js";
import { BTC_DESTINATION, Walk, fundedBtcUser, initiateBtcWithdrawal } from "../support/fixtures.js";
import { goldenProductBody } from "../support/credit-golden.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 12);
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required?: boolean;
  schema: Schema;
}
interface Operation {
  operationId: string;
  method: string;
  path: string;
  parameters: Parameter[];
  body?: Schema;
  security: Record<string, unknown>[];
  statuses: Set<string>;
  /** The media types of its success answers other than JSON (the SEPA payout file's `application/xml`). */
  documents: string[];
}

/** The operations of a document, `$ref`s of parameters resolved; deletes last so the seeded state lives longest. */
function operationsOf(doc: Schema): Operation[] {
  const components = doc.components as { parameters?: Record<string, Parameter> };
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (typeof op !== "object" || typeof op.operationId !== "string") continue;
      const parameters = ((op.parameters ?? []) as (Parameter | { $ref: string })[]).map((p) =>
        "$ref" in p ? (components.parameters?.[p.$ref.split("/").pop() as string] as Parameter) : p,
      );
      const body = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content?.["application/json"]?.schema;
      ops.push({
        operationId: op.operationId,
        method,
        path,
        parameters,
        body,
        security: (op.security ?? doc.security ?? []) as Record<string, unknown>[],
        statuses: new Set(Object.keys(op.responses as object)),
        documents: Object.entries(op.responses as Record<string, { content?: Record<string, unknown> }>)
          .filter(([status]) => status.startsWith("2"))
          .flatMap(([, response]) => Object.keys(response.content ?? {}).filter((type) => type !== "application/json")),
      });
    }
  }
  return ops.sort((a, b) => Number(a.method === "delete") - Number(b.method === "delete"));
}

/** A valid instance of `schema` (refs resolved against the document), deterministic for `seed`. */
function validOf(doc: Schema, schema: Schema, seed: number): unknown {
  return generateSync({ ...schema, components: doc.components } as never, { seed, maxDepth: 4 } as never);
}

/** Strings that break things: bounds, unicode, control and bidirectional characters, NUL, injection text. */
const nastyString = fc.oneof(
  fc.constantFrom("", " ", "\u0000", "a\u0000b", "\u202e\u2066x", "\u200b", "💸".repeat(40), "' or 1=1 --", "<script>", "../../etc/passwd", "%00", "NaN", "-1", "1e400"),
  // Impossible instants, look-alike names, header keys and values that cannot be sent (docs/security.md).
  fc.constantFrom("2026-12-31T23:59:60Z", "0000-01-01T00:00:00Z", "2026-02-30T00:00:00Z", "0000-01-01", "Mаin", "Ｍａｉｎ", "ключ", "a\u2028b", "Trailer", "content_length", "http://[::127.0.0.1]:18940/hook", "http://93.184.215.14:0/x", " http://93.184.215.14/x"),
  fc.string({ unit: "grapheme", maxLength: 64 }),
  fc.integer({ min: 100, max: 20_000 }).map((n) => "x".repeat(n)),
);
/** Any JSON value of the wrong kind for most fields. */
const wrongValue = fc.oneof(nastyString, fc.constantFrom(null, true, 0, -1, 1e308, -0.5, 2 ** 53 + 1, [], {}, [1, "a"], { $gt: "" }, { __proto__: { polluted: 1 } }));

/** One way to break a valid request. */
type Mutation =
  | { kind: "none" }
  | { kind: "drop"; pick: number }
  | { kind: "replace"; pick: number; value: unknown }
  | { kind: "extra"; key: string; value: unknown }
  | { kind: "body"; value: unknown }
  | { kind: "param"; pick: number; value: string }
  /** A path parameter with malformed percent-encoding, sent as it is. */
  | { kind: "rawParam"; pick: number; value: string }
  /** An integer of the body written with a fraction or an exponent (`1.0`, `0.99999999999999999999`, `1e2`). */
  | { kind: "fraction"; pick: number; text: string }
  /** The body's first key given twice. */
  | { kind: "duplicate" }
  /** Thousands of unknown keys beside the body's own. */
  | { kind: "many"; count: number }
  /** The body's JSON text wrapped once more as a JSON string (`"{\"amount\":…}"`): refused, never parsed twice. */
  | { kind: "wrapped" }
  /** A NUL character appended to every string of the body: 422 on a field, never a 5xx. */
  | { kind: "nul" }
  /** The body sent chunked without a Content-Type: read, then refused with 415 (never ignored). */
  | { kind: "chunked" }
  /** The Authorization scheme in lower case (`bearer …`, RFC 9110): accepted as `Bearer`. */
  | { kind: "lowerBearer" };

/**
 * A path or query value: a nasty string of at most 2000 characters (a URL past 16 KiB is refused
 * by Node's HTTP parser with 431 before the service sees it), never empty in a path (an empty
 * segment is another route).
 */
const nastyParam = nastyString.filter((v) => v.length > 0 && v.length <= 2000);

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constant({ kind: "none" as const }),
  fc.nat().map((pick) => ({ kind: "drop" as const, pick })),
  fc.record({ kind: fc.constant("replace" as const), pick: fc.nat(), value: wrongValue }),
  fc.record({ kind: fc.constant("extra" as const), key: fc.constantFrom("__proto__", "constructor", "x", "a".repeat(300)), value: wrongValue }),
  fc.record({ kind: fc.constant("body" as const), value: fc.constantFrom(null, [], "text", 42, [{}]) }),
  fc.record({ kind: fc.constant("param" as const), pick: fc.nat(), value: nastyParam }),
  fc.record({ kind: fc.constant("rawParam" as const), pick: fc.nat(), value: fc.constantFrom("%ff", "%E0%A4%A", "%zz", "a%", "%C0%80") }),
  fc.record({ kind: fc.constant("fraction" as const), pick: fc.nat(), text: fc.constantFrom("1.0", "0.99999999999999999999", "1.00000000000000000001", "1e2", "-0.0") }),
  fc.constant({ kind: "duplicate" as const }),
  fc.record({ kind: fc.constant("many" as const), count: fc.integer({ min: 50, max: 5_000 }) }),
  fc.constant({ kind: "wrapped" as const }),
  fc.constant({ kind: "nul" as const }),
  fc.constant({ kind: "chunked" as const }),
  fc.constant({ kind: "lowerBearer" as const }),
);

/** Appends a NUL to every string of `value` (keys untouched); @returns how many strings it changed. */
function nulEveryString(value: unknown): number {
  let changed = 0;
  for (const [holder, key] of slots(value)) {
    const v = holder[key];
    if (typeof v === "string") {
      holder[key] = `${v}\u0000`;
      changed++;
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => {
        if (typeof item === "string") {
          v[i] = `${item}\u0000`;
          changed++;
        }
      });
    }
  }
  return changed;
}

/** Stands in a body for a number whose JSON text is written in after `JSON.stringify`. */
const NUMBER_MARK = "\u0001number\u0001";

/** Every `[holder, key]` of a JSON value, depth first. */
function slots(value: unknown, out: [Record<string, unknown>, string][] = []): [Record<string, unknown>, string][] {
  if (value && typeof value === "object") {
    for (const key of Object.keys(value)) {
      out.push([value as Record<string, unknown>, key]);
      slots((value as Record<string, unknown>)[key], out);
    }
  }
  return out;
}

const t = useTestApp();
/** Seeded values for path parameters, so most requests reach past the not-found checks. */
const ids: Record<string, string> = {};
const creds: Record<string, string> = {};

beforeAll(async () => {
  const walk = new Walk(t.express);
  const tenant = await walk.tenant("fuzz-co");
  const user = await fundedBtcUser(t.express, tenant.key);
  const withdrawalId = await initiateBtcWithdrawal(t.express, tenant.key, user.userId);
  // A transfer to another user's wallet and an allowlist entry (docs/decisions/limits-and-allowlist.md).
  const recipient = await fundedBtcUser(t.express, tenant.key, 0.001);
  const transfer = await t.api().post("/api/v1/transfers").set("x-api-key", tenant.key).send({ from_wallet_id: user.walletId, to_wallet_id: recipient.walletId, currency: "btc", amount: 0.01 });
  expect(transfer.status, JSON.stringify(transfer.body)).toBe(201);
  const address = await t.api().post(`/api/v1/users/${user.userId}/addresses`).set("x-api-key", tenant.key).send({ currency: "btc", address: BTC_DESTINATION, label: "Fuzz" });
  expect(address.status, JSON.stringify(address.body)).toBe(201);
  // The credit core: the golden product, a notification URL and a credit wallet of the user with an
  // open card authorization on it (docs/decisions/credit.md "Authorizations"), so the wallet's and the
  // authorization's operations get past their 404s.
  const asOwner = { "x-api-key": tenant.key };
  const product = await t.api().post("/v2/credit-products").set("x-api-key", TEST_MASTER_KEY).send(goldenProductBody(tenant.customerId));
  expect(product.status, JSON.stringify(product.body)).toBe(201);
  const enlisted = await t.api().put("/v2/notifications").set(asOwner).send({ creditNotificationsURL: "https://93.184.215.14/credit-hooks" });
  expect(enlisted.status, JSON.stringify(enlisted.body)).toBe(200);
  const creditWallet = await t.api().post("/v2/wallet/credits").set(asOwner).send({ userId: user.userId, currency: "USD", limit: 100000, creditProductCode: "001" });
  expect(creditWallet.status, JSON.stringify(creditWallet.body)).toBe(201);
  const walletId = creditWallet.body.data.walletId as string;
  const authorization = await t.api().post(`/v2/wallet/credits/${walletId}/authorizations`).set(asOwner).send({ amount: 1500, merchant: { name: "Fuzz store" } });
  expect(authorization.status, JSON.stringify(authorization.body)).toBe(201);
  expect(authorization.body.data.status).toBe("approved");
  // A card on it (docs/decisions/cards.md), so the card operations get past their 404s.
  const card = await t.api().post(`/v2/wallet/credits/${walletId}/cards`).set(asOwner).send({ cardholderName: "Fuzz holder" });
  expect(card.status, JSON.stringify(card.body)).toBe(201);
  Object.assign(ids, {
    walletId,
    cardId: card.body.data.cardId as string,
    authorizationId: authorization.body.data.authorizationId as string,
    customer_id: tenant.customerId,
    credential_id: tenant.credentialId,
    user_id: user.userId,
    wallet_id: user.walletId,
    withdrawal_id: withdrawalId,
    transfer_id: transfer.body.data.transfer_id as string,
    address_id: address.body.data.address_id as string,
  });
  creds.operator = await walk.operatorToken();
  creds.owner = tenant.key;
}, 120_000);

/** The headers of the operation's first security scheme (one credential: the service refuses two). */
function credentialOf(op: Operation): Record<string, string> {
  // The master key and the owner key share the `x-api-key` header (scheme `ApiKey`): the access
  // rule says which. The credit core's operator operations take the master key.
  const access = (creditAccess as Record<string, unknown>)[op.operationId];
  if (Array.isArray(access) && access.includes("master") && !access.includes("owner")) return { "x-api-key": TEST_MASTER_KEY };
  const scheme = Object.keys(op.security[0] ?? {})[0];
  switch (scheme) {
    case "MasterApiKey":
      return { "x-master-api-key": TEST_MASTER_KEY };
    case "BearerAuth":
      return { authorization: `Bearer ${creds.operator}` };
    case "ApiKey":
      return { "x-api-key": creds.owner as string };
    default:
      return {};
  }
}

for (const surface of ["platform", "credit"] as const) {
  describe(`${surface} document: generated and broken requests`, () => {
    const doc = loadDocument(surface) as Schema;
    const base = surface === "platform" ? "/api/v1" : "";
    const validator = new OpenAPIBackend({
      definition: doc as unknown as Document,
      quick: false,
      validate: true,
      customizeAjv: (ajv) => {
        (ajvFormats as unknown as { default: (a: typeof ajv) => void }).default(ajv);
        return ajv;
      },
    });
    beforeAll(async () => {
      await validator.init();
    });

    for (const op of operationsOf(doc)) {
      it(`${op.operationId}: 2xx or a declared 4xx in the ${surface} envelope, never a 5xx`, async () => {
        await fc.assert(
          fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 30 }), mutation, async (seed, m) => {
            // path and query parameters
            const values = new Map<Parameter, string>();
            for (const p of op.parameters) {
              if (p.in === "path") values.set(p, ids[p.name] ?? String(validOf(doc, p.schema, seed)));
              else if (p.in === "query" && (p.required || seed % 2 === 0)) values.set(p, String(validOf(doc, p.schema, seed + 1)));
            }
            const params = [...values.keys()];
            if (m.kind === "param" && params.length > 0) values.set(params[m.pick % params.length] as Parameter, m.value);
            const pathParams = params.filter((p) => p.in === "path");
            const raw = m.kind === "rawParam" && pathParams.length > 0 ? (pathParams[m.pick % pathParams.length] as Parameter) : undefined;
            let path = op.path;
            const query: Record<string, string> = {};
            const headers: Record<string, string> = { ...credentialOf(op) };
            for (const [p, v] of values) {
              if (p.in === "path") path = path.replace(`{${p.name}}`, p === raw && m.kind === "rawParam" ? m.value : encodeURIComponent(v));
              else if (p.in === "query") query[p.name] = v;
              else if (p.in === "header" && p.name.toLowerCase() !== "x-trace-id") headers[p.name] = v.replace(/[^\x20-\x7e]/g, "");
            }
            // body
            let body: unknown = op.body ? validOf(doc, op.body, seed + 2) : undefined;
            if (body !== undefined) {
              const all = slots(body);
              if (m.kind === "drop" && all.length > 0) {
                const [holder, key] = all[m.pick % all.length] as [Record<string, unknown>, string];
                delete holder[key];
              } else if (m.kind === "replace" && all.length > 0) {
                const [holder, key] = all[m.pick % all.length] as [Record<string, unknown>, string];
                holder[key] = m.value;
              } else if (m.kind === "extra" && body && typeof body === "object" && !Array.isArray(body)) {
                (body as Record<string, unknown>)[m.key] = m.value;
              } else if (m.kind === "body") {
                body = m.value;
              } else if (m.kind === "fraction") {
                const integers = all.filter(([holder, key]) => Number.isInteger(holder[key]));
                const [holder, key] = integers[m.pick % Math.max(1, integers.length)] ?? [];
                if (holder && key !== undefined) holder[key] = NUMBER_MARK;
              } else if (m.kind === "many" && body && typeof body === "object" && !Array.isArray(body)) {
                for (let i = 0; i < m.count; i++) (body as Record<string, unknown>)[`unknown_${i}`] = i;
              }
            }
            const nulStrings = m.kind === "nul" && body !== undefined ? nulEveryString(body) : 0;
            if (m.kind === "lowerBearer" && headers.authorization !== undefined) headers.authorization = headers.authorization.replace(/^Bearer /, "bearer ");
            let text = body === undefined ? undefined : JSON.stringify(body);
            if (text !== undefined && m.kind === "fraction") text = text.replace(JSON.stringify(NUMBER_MARK), m.text);
            if (text?.startsWith("{\"") && m.kind === "duplicate") {
              const first = Object.keys(body as object)[0] as string;
              text = `{${JSON.stringify(first)}:0,${text.slice(1)}`;
            }

            if (text !== undefined && m.kind === "wrapped") text = JSON.stringify(text);

            let req = t.api()[op.method as "get"](base + path).query(query).set(headers);
            if (text !== undefined && m.kind === "chunked") req.write(text); // no Content-Type, no Content-Length: chunked
            else if (text !== undefined) req = req.set("Content-Type", "application/json").send(text);
            const res = await req;
            const what = `${op.method.toUpperCase()} ${base}${path} ${JSON.stringify(query)} ${text?.slice(0, 300)} → ${res.status} ${JSON.stringify(res.body).slice(0, 400)}`;

            expect(res.status < 500, what).toBe(true);
            expect(op.statuses.has(String(res.status)), `undeclared status: ${what}`).toBe(true);
            if (res.status === 204) return;
            if (res.status < 300 && String(res.headers["content-type"]).startsWith("application/xml")) {
              // a document the operation declares instead of the envelope (the SEPA payout file)
              expect(op.documents, `undeclared XML answer: ${what}`).toContain("application/xml");
              expect(res.text, what).toMatch(/^<\?xml /);
              return;
            }
            expect(res.body.meta?.version, what).toBe(surface === "platform" ? "v1" : "v2");
            expect(res.body.success, what).toBe(res.status < 400);
            const check = validator.validateResponse(res.body, op.operationId, res.status);
            expect(check.errors ?? [], `body breaks the document: ${what}`).toEqual([]);
            expect(res.body.errors?.length ?? 0, `more than 20 errors: ${what}`).toBeLessThanOrEqual(20);
            if (m.kind === "rawParam" && raw) expect(res.status, `malformed percent-encoding: ${what}`).toBe(400);
            if (m.kind === "duplicate" && text?.startsWith("{\"") && res.status !== 401 && res.status !== 403) expect(res.status, `duplicate key: ${what}`).toBe(400);
            // the caller is admitted (or not) before the body is read: past that, the body decides
            const admitted = res.status !== 401 && res.status !== 403 && res.status !== 429;
            if (m.kind === "wrapped" && text !== undefined && admitted) expect(res.status, `string-wrapped body: ${what}`).toBe(400);
            if (m.kind === "chunked" && text !== undefined && text.length > 0 && admitted) expect(res.status, `chunked body without Content-Type: ${what}`).toBe(415);
            if (m.kind === "nul" && nulStrings > 0 && admitted) expect(res.status, `NUL in every string: ${what}`).toBe(422);
            if (m.kind === "lowerBearer") expect(res.status, `lower-case bearer: ${what}`).not.toBe(401);
          }),
          { numRuns: RUNS, seed: SEED, endOnFailure: true },
        );
      }, 120_000);
    }
  });
}

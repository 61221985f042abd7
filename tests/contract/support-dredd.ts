/**
 * Dredd harness of the contract tests of both documents (tests/contract/dredd.test.ts for the
 * platform, dredd-credit.test.ts for the credit core): reads an emitted document, turns its
 * response schemas into JSON Schema that Dredd's validator (Gavel: ajv 6, draft-07) understands,
 * seeds the platform's example fixtures over HTTP and runs Dredd programmatically with the
 * document's hookfile ({@link ContractSurface}). Everything Dredd and the hooks talk to is the test
 * server on 127.0.0.1.
 */
import { EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import http from "node:http";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import type { RequestHandler } from "express";
import { creditAccess, creditNotImplemented } from "../../src/http/credit/wiring.js";
import { platformAccess } from "../../src/http/platform/access.js";
import { platformNotImplemented } from "../../src/http/platform/handlers.js";
import type { Access } from "../../src/http/surface.js";
import { TEST_MASTER_KEY } from "../support/app.js";
import { userBody } from "../support/fixtures.js";

export const DOCUMENT_PATH = fileURLToPath(new URL("../../generated/openapi/platform.openapi.yaml", import.meta.url));
export const HOOKFILE_PATH = fileURLToPath(new URL("./dredd-hooks.cjs", import.meta.url));
const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** Path of the platform surface under the server (the document's paths are relative to it). */
export const BASE_PATH = "/api/v1";

/** One emitted document as Dredd checks it: where it is, its hookfile, where it is served and its access rules. */
export interface ContractSurface {
  name: string;
  documentPath: string;
  hookfilePath: string;
  /** Path of the surface under the server (the document's paths are relative to it). */
  basePath: string;
  access: Record<string, Access>;
  notImplemented: readonly string[];
}

/** The platform document (`/api/v1`), checked with tests/contract/dredd-hooks.cjs. */
export const PLATFORM_SURFACE: ContractSurface = {
  name: "platform",
  documentPath: DOCUMENT_PATH,
  hookfilePath: HOOKFILE_PATH,
  basePath: BASE_PATH,
  access: platformAccess as Record<string, Access>,
  notImplemented: platformNotImplemented,
};

/** The credit core document (served at the root: its paths start with `/v2`), checked with tests/contract/dredd-credit-hooks.cjs. */
export const CREDIT_SURFACE: ContractSurface = {
  name: "credit",
  documentPath: fileURLToPath(new URL("../../generated/openapi/credit.openapi.yaml", import.meta.url)),
  hookfilePath: fileURLToPath(new URL("./dredd-credit-hooks.cjs", import.meta.url)),
  basePath: "",
  access: creditAccess as Record<string, Access>,
  notImplemented: creditNotImplemented,
};

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface Parameter {
  name: string;
  in: string;
}
interface Operation {
  operationId: string;
  summary?: string;
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { content: Record<string, { example?: Json }> };
  responses: Record<string, { content?: Record<string, { schema?: Json }> }>;
}
/** The parts of an OpenAPI 3.0 document this harness reads. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { parameters: Record<string, Parameter>; schemas: Record<string, Json> };
}

/** One operation as the hooks see it, keyed by `METHOD /path` (the path as in the document). */
export interface ContractOperation {
  operationId: string;
  method: string;
  path: string;
  summary: string;
  access: Access;
  implemented: boolean;
  /** JSON Schema (draft-07) of the `application/json` body of each declared status; `null` without a body. */
  responses: Record<string, Json>;
  /** The request body example of the document, if any. */
  requestExample: Json;
}

/** Ids, keys and tokens the seeding creates; the hooks put them into requests. */
export interface Fixtures {
  masterKey: string;
  operatorToken: string;
  /** The document's example customer (`acme-corp`) and an owner key of it. */
  customerId: string;
  ownerKey: string;
  /** A second credential of the example customer, revoked by Delete Credential. */
  revocableCredentialId: string;
  /** Another customer (no webhook, no poller) and a session of it: a valid credential that may not touch the example customer. */
  otherCustomerId: string;
  otherCustomerSession: string;
  /** An owner key of that other customer: it sees none of the example customer's wallets. */
  otherOwnerKey: string;
  /** A customer that Delete Customer deletes. */
  doomedCustomerId: string;
  /** An id, absent from the database, that Create Customer can create. */
  newCustomerId: string;
  /** The document's example user (created with its example `user_id`), activated, with a wallet. */
  userId: string;
  /**
   * The example user's wallet, created from the Create Wallet example (so its name is taken) and
   * credited once through the sandbox deposit example: wallet ids are generated, the hooks put it in.
   */
  walletId: string;
  /** A PENDING user that Delete User deletes. */
  doomedUserId: string;
  /** A PENDING user that stays so (never activated: cannot be deactivated). */
  pendingUserId: string;
  /** An active user (not deletable), its email and a token of it. */
  activeUserId: string;
  activeUserEmail: string;
  userToken: string;
  /** Email and phone number no user has yet, for Create User. */
  freshEmail: string;
  freshPhoneNumber: string;
  /** An owner key of a customer whose id starts with `novault` (no custody vault upstream) and an active user of it. */
  novaultOwnerKey: string;
  novaultUserId: string;
  /** The example user's email: withdrawal codes go there (the sandbox outbox, `GET /sandbox/mail?to=`). */
  userEmail: string;
  /**
   * Withdrawals of the example user from {@link walletId} (1 usdt each, seeded with their own
   * `Idempotency-Key`s, never the document's example key), by the state the cases need; their ids
   * are generated, the hooks put them into paths.
   */
  withdrawals: {
    /** PENDING, confirmed by Confirm Withdrawal with {@link confirmationCode}. */
    toConfirm: string;
    /** PENDING, cancelled by Cancel Withdrawal. */
    toCancel: string;
    /** PENDING, gets a new code from Resend Code. */
    toResend: string;
    /** PENDING, receives {@link wrongCode} once (one wrong attempt of five). */
    wrongCode: string;
    /** COMPLETED (confirmed with its code while seeding). */
    completed: string;
    /** CANCELLED while seeding. */
    cancelled: string;
    /** PENDING and blocked: it received the maximum of wrong codes (5, the default), so confirm answers 403. */
    blocked: string;
  };
  /** The code of `withdrawals.toConfirm`, read from the sandbox outbox. */
  confirmationCode: string;
  /** A code that is not the current code of `withdrawals.wrongCode`. */
  wrongCode: string;
  /** The `Idempotency-Key` and body that seeded `withdrawals.completed`: a repeat is a duplicate, another body a 409. */
  seededInitiate: { idempotencyKey: string; body: JsonObject };
  /** A real HTTP receiver on 127.0.0.1: the example customer's webhook points at it (registered before the withdrawals were seeded). */
  hookUrl: string;
  /** A customer with a webhook that Delete Webhook deletes. */
  hookDoomedCustomerId: string;
  /** A delivery of the example customer's webhook (a `withdrawal.pin` of a seeded withdrawal), for Retry Webhook Delivery. */
  deliveryId: string;
  /** A real IMAP server (Dovecot on 127.0.0.1) and the example customer's mailbox on it. */
  imap: { host: string; port: number; tls: boolean; password: string };
  /** The example customer's email poller (seeded on {@link imap}; its login is the owner credential's email). */
  pollerId: string;
  /** A customer without a poller, for Create Email Poller. */
  pollerNewCustomerId: string;
  /** A customer with a poller that Delete Email Poller deletes. */
  pollerDoomedCustomerId: string;
}

/** What the hooks get in `hooks.configuration.custom.contract`; `F` is the fixtures of the surface's seeding. */
export interface HookContract<F = Fixtures> {
  baseUrl: string;
  basePath: string;
  operations: Record<string, ContractOperation>;
  fixtures: F;
  /** Leave Dredd's own expectation (key comparison of the example) alone: only for the negative control. */
  keysOnly?: boolean;
  /**
   * How many extra runs check the alternative cases of statuses that arise in several ways (Dredd
   * compiles one transaction per status); the hooks fail a status with more alternatives than that.
   */
  alternativeRuns?: number;
  /** Which alternative this run checks: 0 (default) is the main run; k > 0 runs only the k-th alternatives. */
  alternative?: number;
}

export function loadContractDocument(surface: ContractSurface = PLATFORM_SURFACE): OpenApiDocument {
  return parse(readFileSync(surface.documentPath, "utf8")) as OpenApiDocument;
}

const resolveParameter = (doc: OpenApiDocument, p: Parameter | { $ref: string }): Parameter =>
  "$ref" in p ? (resolvePointer(doc, p.$ref) as unknown as Parameter) : p;

function resolvePointer(doc: OpenApiDocument, ref: string): Json {
  if (!ref.startsWith("#/")) throw new Error(`Only local references are supported: ${ref}`);
  let node: Json = doc as unknown as Json;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object" || Array.isArray(node) || !(key in node)) throw new Error(`Unresolvable reference ${ref}`);
    node = node[key] as Json;
  }
  return node;
}

/**
 * The document as Dredd gets it. dredd-transactions 10 drops every transaction of an operation
 * whose query parameter names contain brackets (`filter[limit]`: "Ambiguous URI parameter in
 * template"), so those optional parameters are removed from this copy; the hooks add them back to
 * the request where a case needs them. Nothing else changes.
 */
export function dreddDescription(doc: OpenApiDocument): string {
  const copy = structuredClone(doc);
  for (const item of Object.values(copy.paths)) {
    for (const op of Object.values(item)) {
      if (!op || typeof op !== "object" || !op.parameters) continue;
      op.parameters = op.parameters.filter((p) => {
        const param = resolveParameter(copy, p);
        return !(param.in === "query" && /[[\]]/.test(param.name));
      });
    }
  }
  return JSON.stringify(copy);
}

/** Formats ajv 6 (Gavel) knows; the OpenAPI-only ones (int32, double, decimal…) are dropped. */
const KNOWN_FORMATS = new Set(["date", "date-time", "time", "email", "hostname", "ipv4", "ipv6", "uri", "uri-reference", "uuid", "regex"]);
/** OpenAPI keywords with no JSON Schema meaning. */
const OPENAPI_ONLY = new Set(["nullable", "discriminator", "example", "xml", "externalDocs", "deprecated"]);
/** Keywords whose value is a map of names to schemas. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "definitions"]);
/** Keywords whose value is data, not schemas. */
const DATA_KEYWORDS = new Set(["enum", "const", "default", "required", "examples"]);

/**
 * An OpenAPI 3.0 Schema Object as a self-contained JSON Schema: `$ref`s inlined, `nullable`
 * turned into a `null` type, OpenAPI-only keywords and unknown formats removed.
 * @throws on a cyclic or non-local reference.
 */
export function toJsonSchema(doc: OpenApiDocument, node: Json, trail: readonly string[] = []): Json {
  if (Array.isArray(node)) return node.map((n) => toJsonSchema(doc, n, trail));
  if (node === null || typeof node !== "object") return node;
  if (typeof node.$ref === "string") {
    const ref = node.$ref;
    if (trail.includes(ref)) throw new Error(`Cyclic schema reference ${[...trail, ref].join(" → ")}`);
    return toJsonSchema(doc, resolvePointer(doc, ref), [...trail, ref]);
  }
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (OPENAPI_ONLY.has(key) || key.startsWith("x-")) continue;
    if (key === "format" && !KNOWN_FORMATS.has(String(value))) continue;
    if (SCHEMA_MAPS.has(key) && value && typeof value === "object" && !Array.isArray(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, toJsonSchema(doc, s, trail)]));
    } else {
      out[key] = DATA_KEYWORDS.has(key) ? value : toJsonSchema(doc, value, trail);
    }
  }
  if (node.nullable === true) {
    if (typeof out.type === "string") {
      out.type = [out.type, "null"];
      if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
    } else {
      return { anyOf: [out, { type: "null" }] };
    }
  }
  return out;
}

/** Every operation of the document with its access rule (from `surface`), implementation state and response schemas. */
export function contractOperations(doc: OpenApiDocument, surface: ContractSurface = PLATFORM_SURFACE): Record<string, ContractOperation> {
  const notImplemented = new Set<string>(surface.notImplemented);
  const access = surface.access;
  const operations: Record<string, ContractOperation> = {};
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op || typeof op !== "object" || !op.operationId) continue;
      const rule = access[op.operationId];
      if (!rule) throw new Error(`No access rule for ${op.operationId}`);
      const responses: Record<string, Json> = {};
      for (const [status, response] of Object.entries(op.responses)) {
        const schema = response.content?.["application/json"]?.schema;
        responses[status] = schema === undefined ? null : toJsonSchema(doc, schema);
      }
      operations[`${method.toUpperCase()} ${path}`] = {
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        summary: op.summary ?? op.operationId,
        access: rule,
        implemented: !notImplemented.has(op.operationId),
        responses,
        requestExample: op.requestBody?.content["application/json"]?.example ?? null,
      };
    }
  }
  return operations;
}

/** Dredd's name of a transaction of a single-document run. */
export function transactionName(op: ContractOperation, status: string): string {
  return op.responses[status] === null ? `${op.path} > ${op.summary} > ${status}` : `${op.path} > ${op.summary} > ${status} > application/json`;
}

/** A small JSON-over-HTTP client for seeding; throws unless the answer has `expected` status. */
export function client(baseUrl: string) {
  return async (method: string, path: string, expected: number, options: { headers?: Record<string, string>; body?: Json } = {}) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...(options.body !== undefined && { "content-type": "application/json" }), ...options.headers },
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
    });
    const text = await res.text();
    if (res.status !== expected) throw new Error(`Seeding: ${method} ${path} answered ${res.status}, expected ${expected}: ${text}`);
    return (text ? JSON.parse(text) : null) as { data: Record<string, Json> };
  };
}

/**
 * Seeds, over the platform API of `baseUrl`, the records the document's examples name (customer
 * `acme-corp`, user `6f1c2d3e-…` and its wallet, created from the document's own request examples)
 * and the extra records the order-dependent and error cases need.
 */
export async function seedFixtures(
  baseUrl: string,
  operations: Record<string, ContractOperation>,
  hookUrl: string,
  imap: Fixtures["imap"],
): Promise<Fixtures> {
  const call = client(baseUrl);
  const example = (key: string): JsonObject => {
    const value = operations[key]?.requestExample;
    if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error(`The document has no request example for ${key}`);
    return value;
  };
  const operatorToken = String((await call("POST", "/sessions", 201, { headers: { "x-master-api-key": TEST_MASTER_KEY } })).data.token);
  const operator = { authorization: `Bearer ${operatorToken}` };
  const createCustomer = async (body: JsonObject) => call("POST", "/customers", 201, { headers: operator, body });
  const credential = async (customerId: string) => (await call("POST", `/customers/${customerId}/credentials`, 201, { headers: operator })).data;

  const customerExample = example("POST /customers");
  const customerId = String(customerExample.customer_id);
  await createCustomer(customerExample);
  const owner = await credential(customerId);
  const revocable = await credential(customerId);

  const otherCustomerId = "dredd-other-co";
  await createCustomer({ customer_id: otherCustomerId, email: `ops@${otherCustomerId}.example`, entity_name: "Dredd Other Co" });
  const otherOwnerKey = String((await credential(otherCustomerId)).customer_secret);
  const otherCustomerSession = String(
    (await call("POST", "/sessions", 201, { body: { customer_id: otherCustomerId, customer_secret: otherOwnerKey } })).data.token,
  );
  const doomedCustomerId = "dredd-doomed-co";
  await createCustomer({ customer_id: doomedCustomerId, email: `ops@${doomedCustomerId}.example`, entity_name: "Dredd Doomed Co" });

  const ownerKey = String(owner.customer_secret);
  const asOwner = { "x-api-key": ownerKey };
  await call("POST", `/customers/${customerId}/webhooks`, 201, { headers: operator, body: { url: hookUrl } });
  const hookDoomedCustomerId = "dredd-hook-doomed-co";
  await createCustomer({ customer_id: hookDoomedCustomerId, email: `ops@${hookDoomedCustomerId}.example`, entity_name: "Dredd Hook Doomed Co" });
  await call("POST", `/customers/${hookDoomedCustomerId}/webhooks`, 201, { headers: operator, body: { url: hookUrl } });
  const pollerBody = { imap, description: "Dredd mailbox" };
  const pollerId = String((await call("POST", `/customers/${customerId}/email/poller`, 201, { headers: operator, body: pollerBody })).data.poller_id);
  const pollerNewCustomerId = "dredd-poller-new-co";
  await createCustomer({ customer_id: pollerNewCustomerId, email: `ops@${pollerNewCustomerId}.example`, entity_name: "Dredd Poller New Co" });
  await credential(pollerNewCustomerId);
  const pollerDoomedCustomerId = "dredd-poller-doomed-co";
  await createCustomer({ customer_id: pollerDoomedCustomerId, email: `ops@${pollerDoomedCustomerId}.example`, entity_name: "Dredd Poller Doomed Co" });
  await credential(pollerDoomedCustomerId);
  await call("POST", `/customers/${pollerDoomedCustomerId}/email/poller`, 201, { headers: operator, body: pollerBody });
  const user = (await call("POST", "/users", 201, { headers: asOwner, body: example("POST /users") })).data;
  const userId = String(user.user_id);
  await call("POST", `/users/${userId}/activate`, 200, { headers: asOwner });
  const wallet = (await call("POST", `/users/${userId}/wallets`, 201, { headers: asOwner, body: example("POST /users/{user_id}/wallets") })).data;
  const walletId = String(wallet.wallet_id);
  await call("POST", "/sandbox/deposits", 201, { headers: asOwner, body: { ...example("POST /sandbox/deposits"), wallet_id: walletId } });
  const seeded = await seedWithdrawals(call, asOwner, userId, String(user.email), { ...example(WITHDRAWALS), wallet_id: walletId });
  const doomed = (await call("POST", "/users", 201, { headers: asOwner, body: userBody() as JsonObject })).data;
  const pending = (await call("POST", "/users", 201, { headers: asOwner, body: userBody() as JsonObject })).data;
  const active = (await call("POST", "/users", 201, { headers: asOwner, body: userBody() as JsonObject })).data;
  await call("POST", `/users/${String(active.user_id)}/activate`, 200, { headers: asOwner });
  const userToken = String((await call("POST", `/users/${String(active.user_id)}/token`, 201, { headers: asOwner })).data.token);
  const fresh = userBody();

  const novaultCustomerId = "novault-dredd-co";
  await createCustomer({ customer_id: novaultCustomerId, email: `ops@${novaultCustomerId}.example`, entity_name: "Dredd No Vault Co" });
  const novaultOwnerKey = String((await credential(novaultCustomerId)).customer_secret);
  const deliveries = (await call("GET", `/customers/${customerId}/webhooks/deliveries`, 200, { headers: operator })).data as unknown as { delivery_id: string }[];
  if (!deliveries[0]) throw new Error("Seeding: the seeded withdrawals made no webhook delivery");
  const asNovaultOwner = { "x-api-key": novaultOwnerKey };
  const novaultUser = (await call("POST", "/users", 201, { headers: asNovaultOwner, body: userBody() as JsonObject })).data;
  await call("POST", `/users/${String(novaultUser.user_id)}/activate`, 200, { headers: asNovaultOwner });

  return {
    masterKey: TEST_MASTER_KEY,
    operatorToken,
    customerId,
    ownerKey,
    revocableCredentialId: String(revocable.credential_id),
    otherCustomerId,
    otherCustomerSession,
    otherOwnerKey,
    doomedCustomerId,
    newCustomerId: "dredd-created-co",
    userId,
    walletId,
    doomedUserId: String(doomed.user_id),
    pendingUserId: String(pending.user_id),
    activeUserId: String(active.user_id),
    activeUserEmail: String(active.email),
    userToken,
    freshEmail: String(fresh.email),
    freshPhoneNumber: String(fresh.phone_number),
    novaultOwnerKey,
    novaultUserId: String(novaultUser.user_id),
    userEmail: String(user.email),
    ...seeded,
    hookUrl,
    hookDoomedCustomerId,
    deliveryId: deliveries[0].delivery_id,
    imap,
    pollerId,
    pollerNewCustomerId,
    pollerDoomedCustomerId,
  };
}

/** The document path of Initiate Withdrawal (its request example is the base of the seeded ones). */
const WITHDRAWALS = "POST /users/{user_id}/accounts/crypto/withdrawals";
/** Wrong codes that block a withdrawal: `WITHDRAWAL_CODE_MAX_ATTEMPTS`, default 5 (decisions.md §4). */
const MAX_CODE_ATTEMPTS = 5;
const CODE_IN_MAIL = /Confirmation code: (\d{6})\b/;

/** A code of the same shape that is not `code`. */
const otherCode = (code: string): string => String((Number(code) + 1) % 1_000_000).padStart(code.length, "0");

/**
 * Seeds the withdrawals of {@link Fixtures.withdrawals}: each from `base` (the document's example
 * body on the seeded wallet) with 1 usdt, its own memo and its own `Idempotency-Key`; the codes
 * are read from the sandbox outbox, as a user would read their email.
 */
async function seedWithdrawals(
  call: ReturnType<typeof client>,
  asOwner: Record<string, string>,
  userId: string,
  email: string,
  base: JsonObject,
): Promise<Pick<Fixtures, "withdrawals" | "confirmationCode" | "wrongCode" | "seededInitiate">> {
  const path = `/users/${userId}/accounts/crypto/withdrawals`;
  const request = (role: string) => ({ idempotencyKey: `dredd-fixture-${role}`, body: { ...base, amount: 1, memo: `Dredd fixture: ${role}` } });
  const initiate = async (role: string) => {
    const { idempotencyKey, body } = request(role);
    const created = (await call("POST", path, 201, { headers: { ...asOwner, "Idempotency-Key": idempotencyKey }, body })).data;
    return String(created.id);
  };
  const codeOf = async (withdrawalId: string) => {
    const mails = (await call("GET", `/sandbox/mail?to=${encodeURIComponent(email)}`, 200, { headers: asOwner })).data as unknown as { subject: string; text: string }[];
    const mail = mails.find((m) => m.subject.includes(withdrawalId) && m.text.includes(withdrawalId));
    const code = mail && CODE_IN_MAIL.exec(mail.text)?.[1];
    if (!code) throw new Error(`Seeding: no confirmation code of withdrawal ${withdrawalId} in the sandbox outbox of ${email}`);
    return code;
  };
  const confirm = async (withdrawalId: string, code: string, expected: number) =>
    call("POST", `${path}/${withdrawalId}/confirm`, expected, { headers: asOwner, body: { code } });

  const completed = await initiate("completed");
  await confirm(completed, await codeOf(completed), 200);
  const cancelled = await initiate("cancelled");
  await call("DELETE", `${path}/${cancelled}`, 204, { headers: asOwner });
  const blocked = await initiate("blocked");
  const notBlockedCode = otherCode(await codeOf(blocked));
  for (let attempt = 0; attempt < MAX_CODE_ATTEMPTS; attempt++) await confirm(blocked, notBlockedCode, 400);
  const toConfirm = await initiate("to-confirm");
  const wrongCode = await initiate("wrong-code");
  return {
    withdrawals: {
      toConfirm,
      toCancel: await initiate("to-cancel"),
      toResend: await initiate("to-resend"),
      wrongCode,
      completed,
      cancelled,
      blocked,
    },
    confirmationCode: await codeOf(toConfirm),
    wrongCode: otherCode(await codeOf(wrongCode)),
    seededInitiate: request("completed"),
  };
}

/** A Dredd test result as its reporter events carry it. */
export interface DreddTest {
  status: "pass" | "fail" | "skip" | "error";
  name: string;
  method: string;
  /** The document path (`resourceName`) and status of the transaction. */
  path: string;
  expectedStatus: string;
  message: string;
}

export interface DreddRun {
  stats: { tests: number; failures: number; errors: number; passes: number; skipped: number };
  tests: DreddTest[];
}

interface DreddInstance {
  run(callback: (error: Error | null, stats: DreddRun["stats"]) => void): void;
}
type DreddConstructor = new (config: Record<string, unknown>) => DreddInstance;
interface ReporterTest {
  title?: string;
  message?: string;
  origin?: { resourceName?: string; actionName?: string; exampleName?: string };
  request?: { method?: string };
  expected?: { statusCode?: string };
}

/**
 * Runs Dredd on the document (as {@link dreddDescription}) against `endpoint` with the hookfile.
 * Only the dot reporter (no file reporter, so no Apiary reporter and no network beyond
 * `endpoint`): it prints one character per transaction and the details of failures. `only` restricts the run to these transaction names.
 */
export async function runDredd<F>(options: {
  /** The document and hookfile (default: the platform's). */
  surface?: ContractSurface;
  endpoint: string;
  contract: HookContract<F>;
  description: string;
  only?: string[];
  /** Do not print the details of failures (for runs that are meant to fail). */
  quiet?: boolean;
}): Promise<DreddRun> {
  const require = createRequire(import.meta.url);
  const Dredd = require("dredd") as DreddConstructor;
  const reporterOutput = (require("dredd/build/reporters/reporterOutputLogger") as { default: { transports: { console: { silent?: boolean } } } })
    .default.transports.console;
  const surface = options.surface ?? PLATFORM_SURFACE;
  const emitter = new EventEmitter();
  const tests: DreddTest[] = [];
  const record = (status: DreddTest["status"]) => (test: ReporterTest) => {
    const [, statusFromName = ""] = /^(\d{3})/.exec(test.origin?.exampleName ?? "") ?? [];
    tests.push({
      status,
      name: `${test.origin?.resourceName} > ${test.origin?.actionName} > ${test.origin?.exampleName}`,
      method: test.request?.method ?? "",
      path: test.origin?.resourceName ?? "",
      expectedStatus: test.expected?.statusCode ?? statusFromName,
      message: test.message ?? "",
    });
  };
  emitter.on("test pass", record("pass"));
  emitter.on("test fail", record("fail"));
  emitter.on("test skip", record("skip"));
  emitter.on("test error", (_error: Error, test: ReporterTest) => record("error")(test));
  const dredd = new Dredd({
    endpoint: options.endpoint,
    apiDescriptions: [{ location: surface.documentPath, content: options.description }],
    hookfiles: [surface.hookfilePath],
    language: "nodejs",
    only: options.only ?? [],
    reporter: options.quiet ? [] : ["dot"],
    output: [],
    color: false,
    loglevel: "error",
    custom: { cwd: PROJECT_ROOT, contract: options.contract },
    emitter,
  });
  reporterOutput.silent = options.quiet === true;
  try {
    const stats = await new Promise<DreddRun["stats"]>((resolve, reject) => {
      dredd.run((error, result) => (error ? reject(error) : resolve(result)));
    });
    return { stats: { ...stats }, tests };
  } finally {
    reporterOutput.silent = false;
  }
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost", "::ffff:127.0.0.1"]);

/**
 * Records every TCP connection this process opens until `stop()`, which returns them all and the
 * ones that went anywhere but the loopback interface (unix sockets count as local and are not listed).
 * Every request through an HTTP agent is recorded too (`http.Agent.prototype.addRequest`: Dredd's
 * `request` sends through Node's global agent): a request on a reused keep-alive socket opens no
 * connection, so a connection watch alone can miss all of Dredd's requests.
 */
export function watchOutboundConnections(): { stop(): { all: string[]; outside: string[] } } {
  const original = net.Socket.prototype.connect;
  const targets: string[] = [];
  type AddRequest = (this: http.Agent, req: http.ClientRequest, options: { host?: string; port?: number | string; socketPath?: string }, ...rest: unknown[]) => void;
  const agentPrototype = http.Agent.prototype as unknown as { addRequest: AddRequest };
  const originalAddRequest = agentPrototype.addRequest;
  agentPrototype.addRequest = function addRequest(this: http.Agent, req, options, ...rest) {
    if (options.socketPath === undefined) targets.push(`${options.host ?? "localhost"}:${options.port}`);
    return originalAddRequest.call(this, req, options, ...rest);
  };
  net.Socket.prototype.connect = function connect(this: net.Socket, ...args: unknown[]) {
    // net.connect() passes its normalised arguments as one array: [options, callback].
    const normalised = Array.isArray(args[0]);
    const first = normalised ? (args[0] as unknown[])[0] : args[0];
    if (first && typeof first === "object") {
      const o = first as { host?: string; port?: number; path?: string };
      if (o.path === undefined) targets.push(`${o.host ?? "localhost"}:${o.port}`);
    } else if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
      const host = normalised ? undefined : args[1];
      targets.push(`${typeof host === "string" ? host : "localhost"}:${first}`);
    }
    return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof original;
  return {
    stop() {
      net.Socket.prototype.connect = original;
      agentPrototype.addRequest = originalAddRequest;
      const host = (target: string) => target.replace(/:[^:]*$/, "").replace(/^\[|\]$/g, "");
      return { all: [...targets], outside: targets.filter((t) => !LOOPBACK.has(host(t))) };
    },
  };
}

/**
 * The negative control's switch: while `on`, every JSON response keeps its keys but the first string
 * field of `data` (or of its first item, or of the first error) becomes a number.
 */
export function responseBreaker(): { on: boolean; middleware: RequestHandler } {
  const state = { on: false, middleware: (() => {}) as RequestHandler };
  state.middleware = (_req, res, next) => {
    if (state.on) {
      const json = res.json.bind(res);
      res.json = (body: unknown) => json(breakShape(body));
    }
    next();
  };
  return state;
}

/** Changes the type of the first string field of `data` (or of its first item, or of the first error). */
function breakShape(body: unknown): unknown {
  if (!body || typeof body !== "object") return body;
  const copy = structuredClone(body) as { data?: unknown; errors?: unknown[] };
  const target = Array.isArray(copy.data) ? copy.data[0] : (copy.data ?? copy.errors?.[0]);
  if (target && typeof target === "object") {
    const record = target as Record<string, unknown>;
    const key = Object.keys(record).find((k) => typeof record[k] === "string");
    if (key) record[key] = 12345;
  }
  return copy;
}

/** Tests of a run by `operationId status`, with their outcomes. */
export function outcomes(run: DreddRun, operations: Record<string, ContractOperation>): Map<string, DreddTest["status"][]> {
  const byKey = new Map<string, DreddTest["status"][]>();
  for (const test of run.tests) {
    const op = operations[`${test.method} ${test.path}`];
    const key = `${op?.operationId ?? test.name} ${test.expectedStatus}`;
    byKey.set(key, [...(byKey.get(key) ?? []), test.status]);
  }
  return byKey;
}

/** The failed and errored tests of a run, with Dredd's messages. */
export const failureReport = (run: DreddRun): string =>
  run.tests
    .filter((x) => x.status === "fail" || x.status === "error")
    .map((x) => `${x.status.toUpperCase()} ${x.method} ${x.name}\n${x.message}`)
    .join("\n");

/** Ids and keys the credit seeding creates; the credit hooks put them into requests. */
export interface CreditFixtures {
  /** The master key, sent in `x-api-key` to the operator operations (credit products). */
  masterKey: string;
  /** The document's example tenant (`acme-bank`) and an owner key of it. */
  customerId: string;
  ownerKey: string;
  /** Another tenant with the example product and a VERIFIED user but no notification URL (Create Credit Wallet answers 409, Get Notifications Settings 404). */
  otherOwnerKey: string;
  otherUserId: string;
  /** The document's example user of Create Credit Wallet (created with its `userId`), VERIFIED. */
  userId: string;
  /** The real HTTP receiver on 127.0.0.1 the example tenant enlisted (NotificationsEnlist). */
  hookUrl: string;
  /** The example tenant's sandbox clock after seeding (set to {@link clockStart} before the first wallet, then advanced past the first cut). */
  clockStart: string;
  clockNow: string;
  /**
   * Wallets of the example user, each created from the Create Credit Wallet example (wallet ids are
   * generated, the hooks put them into paths), by the role the cases need.
   */
  wallets: {
    /** Active, charged and cut once: it has a statement and events. */
    main: string;
    /** Active: Block Credit Wallet blocks it. */
    toBlock: string;
    /** Blocked while seeding: blocking it again is a 409, Unblock Credit Wallet unblocks it. */
    blocked: string;
    /** Active: Dissolve Credit Wallet dissolves it. */
    toDissolve: string;
    /** Dissolved while seeding: every change of it is a 409. */
    dissolved: string;
  };
  /** The `Idempotency-Key` and body of a charge and of a payment seeded on `wallets.main`, with other amounts than the examples'. */
  seededCharge: { idempotencyKey: string; body: JsonObject };
  seededPayment: { idempotencyKey: string; body: JsonObject };
}

/**
 * Seeds, over the platform API (`platformUrl`) and the credit API (`creditUrl`), the records the
 * credit document's examples name: tenant `acme-bank` with an owner key, its product `001` (the
 * Create Credit Product example, with the master key), the example user `6f1d2c3b-…` (activated:
 * VERIFIED), NotificationsEnlist to `hookUrl`, the sandbox clock set to 2026-01-01 before the first
 * wallet, the wallets of {@link CreditFixtures.wallets} from the Create Credit Wallet example, a
 * charge and the clock advanced past the example's first cut (2026-01-31), so statements and events exist.
 */
export async function seedCreditFixtures(
  platformUrl: string,
  creditUrl: string,
  operations: Record<string, ContractOperation>,
  hookUrl: string,
): Promise<CreditFixtures> {
  const platform = client(platformUrl);
  const credit = client(creditUrl);
  const example = (key: string): JsonObject => {
    const value = operations[key]?.requestExample;
    if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error(`The document has no request example for ${key}`);
    return value;
  };
  const operator = { authorization: `Bearer ${String((await platform("POST", "/sessions", 201, { headers: { "x-master-api-key": TEST_MASTER_KEY } })).data.token)}` };
  const productExample = example("POST /v2/credit-products");
  const walletExample = example("POST /v2/wallet/credits");
  const asMaster = { "x-api-key": TEST_MASTER_KEY };

  /** A tenant with the example product and a VERIFIED user (`userId` when given); returns its owner key. */
  const tenant = async (customerId: string, userId?: string) => {
    await platform("POST", "/customers", 201, { headers: operator, body: { customer_id: customerId, email: `ops@${customerId}.example`, entity_name: `Dredd ${customerId}` } });
    const key = String((await platform("POST", `/customers/${customerId}/credentials`, 201, { headers: operator })).data.customer_secret);
    await credit("POST", "/v2/credit-products", 201, { headers: asMaster, body: { ...productExample, customerId } });
    const user = (await platform("POST", "/users", 201, { headers: { "x-api-key": key }, body: userBody(userId ? { user_id: userId } : {}) as JsonObject })).data;
    await platform("POST", `/users/${String(user.user_id)}/activate`, 200, { headers: { "x-api-key": key } });
    return { key, userId: String(user.user_id) };
  };
  const customerId = String(productExample.customerId);
  const { key: ownerKey, userId } = await tenant(customerId, String(walletExample.userId));
  const { key: otherOwnerKey, userId: otherUserId } = await tenant("dredd-other-bank");
  const asOwner = { "x-api-key": ownerKey };
  await credit("PUT", "/v2/notifications", 200, { headers: asOwner, body: { creditNotificationsURL: hookUrl } });
  const clockStart = "2026-01-01T00:00:00.000Z";
  await credit("PUT", "/v2/sandbox/clock", 200, { headers: asOwner, body: { now: clockStart } });

  const wallet = async () => String((await credit("POST", "/v2/wallet/credits", 201, { headers: asOwner, body: walletExample })).data.walletId);
  const [main, toBlock, blocked, toDissolve, dissolved] = [await wallet(), await wallet(), await wallet(), await wallet(), await wallet()] as [string, string, string, string, string];
  const seededCharge = { idempotencyKey: "dredd-fixture-charge", body: { amount: 30000, description: "Dredd fixture" } };
  const seededPayment = { idempotencyKey: "dredd-fixture-payment", body: { amount: 1000 } };
  const charge = { headers: { ...asOwner, "Idempotency-Key": seededCharge.idempotencyKey }, body: seededCharge.body };
  await credit("POST", `/v2/wallet/credits/${main}/charges`, 201, charge);
  await credit("POST", `/v2/wallet/credits/${blocked}/block`, 200, { headers: asOwner });
  await credit("POST", `/v2/wallet/credits/${dissolved}/dissolve`, 200, { headers: asOwner });
  await credit("POST", "/v2/sandbox/clock/advance", 200, { headers: asOwner, body: { to: "2026-02-01T00:00:00Z" } });
  await credit("POST", `/v2/wallet/credits/${main}/payments`, 201, { headers: { ...asOwner, "Idempotency-Key": seededPayment.idempotencyKey }, body: seededPayment.body });
  const clockNow = String((await credit("GET", "/v2/sandbox/clock", 200, { headers: asOwner })).data.now);
  return {
    masterKey: TEST_MASTER_KEY,
    customerId,
    ownerKey,
    otherOwnerKey,
    otherUserId,
    userId,
    hookUrl,
    clockStart,
    clockNow,
    wallets: { main, toBlock, blocked, toDissolve, dissolved },
    seededCharge,
    seededPayment,
  };
}

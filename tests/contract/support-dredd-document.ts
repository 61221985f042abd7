/**
 * The emitted documents as the Dredd harness (support-dredd.ts) checks them: where each is, its
 * hookfile and access rules ({@link ContractSurface}), its operations keyed by `METHOD /path` with
 * their response schemas turned into JSON Schema that Dredd's validator (Gavel: ajv 6, draft-07)
 * understands, and the copy of the document Dredd is given.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { creditAccess, creditNotImplemented } from "../../src/http/credit/wiring.js";
import { platformAccess } from "../../src/http/platform/access.js";
import { platformNotImplemented } from "../../src/http/platform/handlers.js";
import type { Access } from "../../src/http/surface.js";

export const DOCUMENT_PATH = fileURLToPath(new URL("../../generated/openapi/platform.openapi.yaml", import.meta.url));
export const HOOKFILE_PATH = fileURLToPath(new URL("./dredd-hooks.cjs", import.meta.url));
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
export type JsonObject = { [key: string]: Json };

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
  /** The media type of each status whose body is a document other than JSON (the SEPA payout file's `application/xml`). */
  documents: Record<string, string>;
  /** The request body example of the document, if any. */
  requestExample: Json;
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
 * the request where a case needs them. A parameter with named `examples` (an operation with a titled
 * or several `@opExample`s, as Authorize Credit) gets the value of its first one as `example`:
 * Dredd's OpenAPI 3 parser reads only `example` on a parameter and refuses a path parameter without
 * one ("Required URI parameter … has no example"), while it reads the first of a body's `examples`.
 * Nothing else changes.
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
      for (const p of op.parameters) {
        if ("$ref" in p) continue;
        const named = p as Parameter & { example?: Json; examples?: Record<string, { value?: Json }> };
        const first = named.examples && Object.values(named.examples)[0];
        if (named.example === undefined && first && first.value !== undefined) {
          named.example = first.value;
          delete named.examples;
        }
      }
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
      const documents: Record<string, string> = {};
      for (const [status, response] of Object.entries(op.responses)) {
        const schema = response.content?.["application/json"]?.schema;
        responses[status] = schema === undefined ? null : toJsonSchema(doc, schema);
        const other = Object.keys(response.content ?? {}).find((type) => type !== "application/json");
        if (schema === undefined && other !== undefined) documents[status] = other;
      }
      operations[`${method.toUpperCase()} ${path}`] = {
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        summary: op.summary ?? op.operationId,
        access: rule,
        implemented: !notImplemented.has(op.operationId),
        responses,
        documents,
        requestExample: op.requestBody?.content["application/json"]?.example ?? null,
      };
    }
  }
  return operations;
}

/** Dredd's name of a transaction of a single-document run. */
export function transactionName(op: ContractOperation, status: string): string {
  const document = op.documents[status];
  if (document !== undefined) return `${op.path} > ${op.summary} > ${status} > ${document}`;
  return op.responses[status] === null ? `${op.path} > ${op.summary} > ${status}` : `${op.path} > ${op.summary} > ${status} > application/json`;
}

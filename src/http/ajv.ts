/**
 * The surfaces' Ajv (src/http/surface.ts): the formats it checks, and its errors turned into the
 * field problems of a 422 answer (docs/security.md, "Paths, queries and validation answers").
 */
import type { Ajv, ErrorObject } from "ajv";
import ajvFormats from "ajv-formats";
import { clip, quote, type FieldProblem } from "../domain/errors.js";
import { isRealDate, isRealInstant } from "../domain/dates.js";
import { MAX_FIELD_ERRORS } from "./errors.js";

/**
 * Adds ajv-formats to a shared Ajv (CommonJS: its default export arrives as the module object under
 * NodeNext), with real days and instants only: no leap second, no year 0 (src/domain/dates.ts).
 */
export function customizeAjv(ajv: Ajv): Ajv {
  (ajvFormats as unknown as { default: (a: Ajv) => void }).default(ajv);
  ajv.addFormat("date", { type: "string", validate: isRealDate });
  ajv.addFormat("date-time", { type: "string", validate: isRealInstant });
  return ajv;
}

/**
 * Converts ajv errors of openapi-backend's combined request object into field problems: one per
 * invalid field (the first rule it breaks), named by its dotted path within the body or parameters.
 * A stray key (`additionalProperties`) is the caller's text: the field names it clipped to its
 * first 32 characters and the message quotes it (`quote`), so a 300-character key is never echoed;
 * a stray query parameter is named as one. At most {@link MAX_FIELD_ERRORS} problems
 * (docs/security.md, "Paths, queries and validation answers").
 */
export function problemsFromAjv(errors: ErrorObject[]): FieldProblem[] {
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  for (const e of errors) {
    const segments = e.instancePath.split("/").slice(1).map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
    const location = segments.shift();
    if (e.keyword === "required" && typeof e.params.missingProperty === "string") segments.push(e.params.missingProperty);
    const stray = e.keyword === "additionalProperties" && typeof e.params.additionalProperty === "string" ? e.params.additionalProperty : undefined;
    if (stray !== undefined) segments.push(clip(stray));
    const field = segments.length > 0 ? segments.join(".") : location === "requestBody" || e.keyword === "parse" ? "body" : (location ?? "request");
    if (e.keyword === "if" || e.keyword === "anyOf" || e.keyword === "oneOf") continue;
    const message =
      e.keyword === "required" ? `${field} is required.` :
      e.keyword === "enum" ? `${field} must be one of: ${(e.params.allowedValues as unknown[]).join(", ")}.` :
      e.keyword === "parse" ? `Malformed JSON body: ${e.message ?? ""}` :
      stray !== undefined && location === "query" ? `${quote(stray)} is not a query parameter of this operation.` :
      stray !== undefined && location === "headers" ? `${quote(stray)} is not a header of this operation.` :
      stray !== undefined ? `${quote(stray)} is not a field of ${segments.length > 1 ? segments.slice(0, -1).join(".") : "the request body"}.` :
      `${field} ${e.message ?? "is invalid"}.`;
    if (seen.has(field)) continue;
    seen.add(field);
    problems.push({ field, message });
    if (problems.length >= MAX_FIELD_ERRORS) break;
  }
  return problems.length > 0 ? problems : [{ field: "request", message: "The request is invalid." }];
}

/**
 * Typed domain errors. Services throw these; the HTTP layer maps each `code` to a status in one
 * place (src/http/errors.ts). Codes are the reference's ("Codes of the platform API"), taken from
 * the emitted contract so that a code the spec does not list cannot be thrown.
 */
import type { components } from "../../generated/types/platform.js";

/** Every platform error code (the `ErrorCode` union of spec/common/platform-envelope.tsp). */
export type ErrorCode = components["schemas"]["ErrorCode"];

/** One invalid field of a validation failure: dotted path in the request's naming, and why. */
export interface FieldProblem {
  field: string;
  message: string;
}

/** A rule of the product was broken; `code` decides the HTTP status (src/http/errors.ts). */
export class DomainError extends Error {
  constructor(
    public readonly code: ErrorCode,
    message: string,
    public readonly field?: string,
    /** Seconds after which a retry may succeed (429 and 503); sent as `Retry-After`. */
    public readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = "DomainError";
  }
}

/**
 * Field validation failed beyond what the schema checks (phone numbers, sanitisation…): answers
 * 422 `UNPROCESSABLE_ENTITY` (credit core: `VALIDATION_ERROR`) with one entry per field.
 */
export class ValidationFailed extends Error {
  constructor(public readonly problems: FieldProblem[]) {
    super(problems.map((p) => `${p.field}: ${p.message}`).join("; "));
    this.name = "ValidationFailed";
  }
}

/** Throws `ValidationFailed` when `problems` is not empty. */
export function assertNoProblems(problems: FieldProblem[]): void {
  if (problems.length > 0) throw new ValidationFailed(problems);
}

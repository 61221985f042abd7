/** Shared assertions of the unit tests. */
import { expect } from "vitest";
import { DomainError } from "../../src/domain/errors.js";

/** Runs `fn`, expecting a DomainError with `code` (and `field` when given); returns it. */
export function expectDomainError(fn: () => unknown, code: string, field?: string): DomainError {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `expected DomainError ${code}`).toBeInstanceOf(DomainError);
  const error = thrown as DomainError;
  expect(error.code).toBe(code);
  if (field !== undefined) expect(error.field).toBe(field);
  expect(error.message.length).toBeGreaterThan(0);
  return error;
}

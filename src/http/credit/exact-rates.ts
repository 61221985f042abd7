/**
 * The credit handlers' side of "Money stays exact" (docs/security.md): a percentage the client wrote
 * with more digits than a double holds (`12.00000000000000001`) reaches the credit services as its
 * source text, so their rule of at most 4 decimal places counts every digit sent and a product stores
 * the rate exactly. The services take these plain values and never look at how the body was parsed.
 */
import type { WithExactRates } from "../../domain/credit/rates.js";
import { exactNumber } from "../json-numbers.js";

/**
 * A copy of request body `body` whose fields `fields` present in it hold the number exactly as the
 * client wrote it (src/http/json-numbers.ts `exactNumber`: the parsed number, or its JSON source
 * text when the double lost digits). Absent fields stay absent; other fields are copied as they are.
 */
export function withExactRates<T extends object, K extends keyof T & string>(body: T, fields: readonly K[]): WithExactRates<T, K> {
  const copy = { ...body } as Record<string, unknown>;
  for (const field of fields) if (field in body) copy[field] = exactNumber(body, field);
  return copy as WithExactRates<T, K>;
}

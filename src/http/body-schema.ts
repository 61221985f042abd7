/**
 * What a surface reads once per operation from its (dereferenced) request body schema, for the body
 * reader (src/http/json-body.ts): the numeric fields whose source text is kept, and the shape of the
 * top level.
 */
import type { Operation } from "openapi-backend";
import type { BodyShape } from "./json-body.js";
import { PATH_SEPARATOR, type NumericFields, type NumericKind } from "./json-numbers.js";

/** What the body reader needs of one operation, read once from its schema: its numeric fields and its body's top level. */
export interface BodyFacts {
  numeric: NumericFields;
  shape: BodyShape;
}

/** The facts of an operation that takes no JSON body: no numeric field, an object. */
export const NO_BODY_FACTS: BodyFacts = { numeric: new Map(), shape: "object" };

/** {@link BodyFacts} of `operation`. */
export function bodyFactsOf(operation: Operation): BodyFacts {
  return { numeric: numericFieldsOf(operation), shape: bodyShapeOf(operation) };
}

/** The (dereferenced) schema of an operation's JSON request body, if it takes one. */
const jsonBodySchema = (operation: Operation): SchemaNode | undefined =>
  (operation.requestBody as { content?: Record<string, { schema?: SchemaNode }> } | undefined)?.content?.["application/json"]?.schema;

/** What an operation's JSON request body takes at its top level: an array only where its schema says so. */
function bodyShapeOf(operation: Operation): BodyShape {
  return jsonBodySchema(operation)?.type === "array" ? "array" : "object";
}

/** JSON Schema of an (already dereferenced) document, as far as {@link numericFieldsOf} reads it. */
interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  allOf?: SchemaNode[];
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
}

/**
 * The numeric fields of an operation's JSON request body, by path (keys joined with
 * {@link PATH_SEPARATOR}), read from its (dereferenced) schema: `integer` and `number` properties of
 * the body object and of the objects it nests (arrays are not followed: no numeric field of either
 * document lies in one).
 */
function numericFieldsOf(operation: Operation): NumericFields {
  const fields = new Map<string, NumericKind>();
  const walk = (node: SchemaNode | undefined, path: string[], depth: number): void => {
    if (!node || depth > 8) return;
    for (const part of [...(node.allOf ?? []), ...(node.anyOf ?? []), ...(node.oneOf ?? [])]) walk(part, path, depth + 1);
    if ((node.type === "integer" || node.type === "number") && path.length > 0) {
      const key = path.join(PATH_SEPARATOR);
      if (fields.get(key) !== "integer") fields.set(key, node.type);
    }
    for (const [name, child] of Object.entries(node.properties ?? {})) walk(child, [...path, name], depth + 1);
  };
  walk(jsonBodySchema(operation), [], 0);
  return fields;
}

/**
 * What a surface reads once per operation from its (dereferenced) request body schema, for the body
 * reader (src/http/json-body.ts): the numeric fields whose source text is kept, and the shape of the
 * top level.
 */
import type { Operation } from "openapi-backend";
import type { BodyShape } from "./json-body.js";
import { PATH_SEPARATOR, type NumericFields, type NumericKind } from "./json-numbers.js";

/** No declared numeric field. */
export const NO_NUMBERS: NumericFields = new Map();

/** What an operation's JSON request body takes at its top level: an array only where its schema says so. */
export function bodyShapeOf(operation: Operation): BodyShape {
  const schema = (operation.requestBody as { content?: Record<string, { schema?: SchemaNode }> } | undefined)?.content?.["application/json"]?.schema;
  return schema?.type === "array" ? "array" : "object";
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
export function numericFieldsOf(operation: Operation): NumericFields {
  const fields = new Map<string, NumericKind>();
  const schema = (operation.requestBody as { content?: Record<string, { schema?: SchemaNode }> } | undefined)?.content?.["application/json"]?.schema;
  const walk = (node: SchemaNode | undefined, path: string[], depth: number): void => {
    if (!node || depth > 8) return;
    for (const part of [...(node.allOf ?? []), ...(node.anyOf ?? []), ...(node.oneOf ?? [])]) walk(part, path, depth + 1);
    if ((node.type === "integer" || node.type === "number") && path.length > 0) {
      const key = path.join(PATH_SEPARATOR);
      if (fields.get(key) !== "integer") fields.set(key, node.type);
    }
    for (const [name, child] of Object.entries(node.properties ?? {})) walk(child, [...path, name], depth + 1);
  };
  walk(schema, [], 0);
  return fields;
}

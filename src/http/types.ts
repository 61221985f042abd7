/**
 * Handler types derived from the generated OpenAPI types, so that a handler's body, parameters and
 * the `data` it returns are checked against the contract at compile time.
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Principal } from "../modules/identity/auth.js";
import type { Pagination } from "./envelope.js";

type Responses<O> = O extends { responses: infer R } ? R : never;
type JsonOf<R> = R extends { content: { "application/json": infer B } } ? B : never;
type XmlOf<R> = R extends { content: { "application/xml": infer B } } ? B : never;
type DataOf<O, S extends PropertyKey> = S extends keyof Responses<O> ? (JsonOf<Responses<O>[S]> extends { data: infer D } ? D : never) : never;

/** The JSON request body of operation `O` (undefined when it has none). */
export type BodyOf<O> = O extends { requestBody?: infer RB } ? JsonOf<NonNullable<RB>> : undefined;
/** The path parameters of operation `O`. */
export type ParamsOf<O> = O extends { parameters: { path?: infer P } } ? (P extends object ? P : Record<string, never>) : Record<string, never>;
/** The query parameters of operation `O`. */
export type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? (Q extends object ? Q : Record<string, never>) : Record<string, never>;

/**
 * What a handler returns: a success status of its operation and the envelope's `data`; for an
 * operation whose 200 is an XML document (the SEPA payout file), the document's text as `xml`.
 */
export type Reply<O> =
  | (200 extends keyof Responses<O> ? { status: 200; data: DataOf<O, 200>; pagination?: Pagination } : never)
  | (200 extends keyof Responses<O> ? ([XmlOf<Responses<O>[200]>] extends [never] ? never : { status: 200; xml: string }) : never)
  | (201 extends keyof Responses<O> ? { status: 201; data: DataOf<O, 201> } : never)
  | (204 extends keyof Responses<O> ? { status: 204 } : never);

/** Everything a handler gets for one request. */
export interface Call<O> {
  operationId: string;
  params: ParamsOf<O>;
  query: QueryOf<O>;
  body: BodyOf<O>;
  /**
   * The body's bytes as received, unparsed, for an operation authenticated by a signature over
   * them (access `signature`, src/http/surface.ts); `body` is then undefined. Absent otherwise.
   */
  rawBody?: Buffer;
  headers: Record<string, string | string[] | undefined>;
  /** The resolved caller; null only on operations that allow anonymous calls (Create Session). */
  principal: Principal | null;
  /** A fresh EntityManager for this request. */
  em: EntityManager;
  traceId: string;
}

/** A handler of operation `O`. */
export type OperationHandler<O> = (call: Call<O>) => Promise<Reply<O>>;

/** Handlers of every operation of a surface, keyed by operationId. */
export type HandlerMap<Ops> = { [K in keyof Ops]?: OperationHandler<Ops[K]> };

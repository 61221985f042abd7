/**
 * The Pact consumer's client: the fetch client generated from the platform document by
 * @hey-api/openapi-ts (generated/client/platform/, `npm run generate`), given one credential, and
 * three readers of its answers that the consumer cases use to unwrap the response envelope.
 *
 * The generated client answers `{ data, error, response }` and leaves the envelope alone. The
 * readers turn that into what a caller of the platform API branches on: the success envelope's
 * `data` (with `meta.pagination` for lists), or a {@link PlatformApiError} carrying the status, the
 * envelope's `errors[]` and its trace id (docs/contract.md).
 */
import { createClient, type Auth, type Client } from "../../../../generated/client/platform/client/index.js";
import type { ErrorCode, ErrorItem, Pagination } from "../../../../generated/client/platform/types.gen.js";

/**
 * The one credential a client sends, chosen by the security scheme the generated client asks for
 * (docs/decisions/credentials-and-tokens.md, "One credential per request"; docs/contract.md,
 * "Generated clients send one credential": an `auth` answering every scheme would send an owner
 * key and a user token together where an operation takes either): the master key as
 * `x-master-api-key`, an owner key as `x-api-key`, a session token or a user token as
 * `Authorization: Bearer`. An operation that does not list the credential's scheme goes out
 * without any, and the server answers 401 `UNAUTHORIZED`.
 */
export type PlatformCredential = { masterKey: string } | { apiKey: string } | { sessionToken: string } | { userToken: string };

/** The token to send for `scheme`, from `credential`; undefined when the credential is of another scheme. */
function tokenFor(credential: PlatformCredential | undefined, scheme: Auth): string | undefined {
  if (!credential) return undefined;
  if (scheme.type === "http") {
    if ("sessionToken" in credential) return credential.sessionToken;
    return "userToken" in credential ? credential.userToken : undefined;
  }
  if (scheme.name === "x-master-api-key") return "masterKey" in credential ? credential.masterKey : undefined;
  if (scheme.name === "x-api-key") return "apiKey" in credential ? credential.apiKey : undefined;
  return undefined;
}

/**
 * A generated client for the platform API at `origin` (the document's server `/api/v1` is
 * appended), sending `credential` where an operation's security allows it, nothing without one.
 */
export function platformClient(origin: string, credential?: PlatformCredential): Client {
  return createClient({ baseUrl: `${origin.replace(/\/+$/, "")}/api/v1`, auth: (scheme) => tokenFor(credential, scheme) });
}

/** The credential headers of the platform API (docs/decisions/credentials-and-tokens.md). */
const CREDENTIAL_HEADERS = ["x-master-api-key", "x-api-key", "authorization"] as const;

/** Records, for every request `client` sends from now on, which credential headers it carries (in {@link CREDENTIAL_HEADERS} order). */
export function recordCredentials(client: Client): string[][] {
  const sent: string[][] = [];
  client.interceptors.request.use((request) => {
    sent.push(CREDENTIAL_HEADERS.filter((name) => request.headers.has(name)));
    return request;
  });
  return sent;
}

/**
 * A non-2xx answer of the platform API, or a 2xx answer that is not a success envelope.
 * `errors` holds the envelope's `errors[]` (empty when the body was not an error envelope);
 * validation failures carry one entry per invalid field, named in `field`.
 */
export class PlatformApiError extends Error {
  override readonly name = "PlatformApiError";

  constructor(
    /** HTTP status. */
    readonly status: number,
    /** `errors[]` of the error envelope. */
    readonly errors: ErrorItem[],
    /** `meta.trace_id` of the envelope, else the `x-trace-id` response header. */
    readonly traceId: string | undefined,
    message?: string,
  ) {
    super(message ?? PlatformApiError.describe(status, errors));
  }

  /** The first error's code, the one to branch on together with `status`. */
  get code(): ErrorCode | undefined {
    return this.errors[0]?.code;
  }

  private static describe(status: number, errors: ErrorItem[]): string {
    if (errors.length === 0) return `HTTP ${status}`;
    return `HTTP ${status}: ${errors.map((e) => `${e.code}${e.field ? ` (${e.field})` : ""}: ${e.message}`).join("; ")}`;
  }
}

/** What a generated SDK function resolves to (its `fields` response style). */
interface Answer<T> {
  data?: T;
  error?: unknown;
  response?: Response;
}

/** The `data` of success envelope `T`. */
type EnvelopeData<T> = NonNullable<T> extends { data: infer D } ? D : never;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Waits for one call and checks its answer: the parsed success envelope (empty for 204).
 * @throws PlatformApiError on a non-2xx status, or a 2xx body that is not `{success: true, data}`;
 *   a request that was never answered (network failure, abort) rejects with the fetch error.
 */
async function settle<T>(call: Promise<Answer<T>>): Promise<{ envelope: Record<string, unknown>; status: number; traceId: string | undefined }> {
  const { data, error, response } = await call;
  if (!response) throw error instanceof Error ? error : new Error(`the request was not answered: ${JSON.stringify(error)}`);
  const body: unknown = response.ok ? data : error;
  const meta = isObject(body) && isObject(body.meta) ? body.meta : undefined;
  const traceId = typeof meta?.trace_id === "string" ? meta.trace_id : (response.headers.get("x-trace-id") ?? undefined);
  if (!response.ok) {
    const errors = isObject(body) && Array.isArray(body.errors) ? (body.errors as ErrorItem[]) : [];
    throw new PlatformApiError(response.status, errors, traceId);
  }
  if (response.status === 204) return { envelope: {}, status: 204, traceId };
  if (!isObject(body) || body.success !== true || !("data" in body)) {
    throw new PlatformApiError(response.status, [], traceId, `HTTP ${response.status}: response is not a success envelope`);
  }
  return { envelope: body, status: response.status, traceId };
}

/** The `data` of the call's success envelope. @throws PlatformApiError as {@link settle}. */
export async function data<T>(call: Promise<Answer<T>>): Promise<EnvelopeData<T>> {
  return (await settle(call)).envelope.data as EnvelopeData<T>;
}

/** One page of a list call: `data` and `meta.pagination`. @throws PlatformApiError as {@link settle}, or when `meta.pagination` is missing. */
export async function listed<T>(call: Promise<Answer<T>>): Promise<{ data: EnvelopeData<T>; pagination: Pagination }> {
  const { envelope, status, traceId } = await settle(call);
  const meta = envelope.meta;
  if (!isObject(meta) || !isObject(meta.pagination)) {
    throw new PlatformApiError(status, [], traceId, `HTTP ${status}: list response without meta.pagination`);
  }
  return { data: envelope.data as EnvelopeData<T>, pagination: meta.pagination as Pagination };
}

/** Waits for a call answered without a payload (204). @throws PlatformApiError as {@link settle}. */
export async function done<T>(call: Promise<Answer<T>>): Promise<void> {
  await settle(call);
}

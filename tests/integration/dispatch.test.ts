/**
 * The surfaces' own dispatch of a matched operation (src/http/dispatch.ts; docs/performance.md
 * "What keeps the request path cheap") answers as openapi-backend's `handleRequest` would: each
 * request below is sent twice, once as it is (the dispatch) and once with a `Cookie` header, which
 * the dispatch hands to `handleRequest` whole, and both answers must match (status, rate-limit-free
 * headers, body without `meta`). None of the requests changes anything, so the two runs see the same state.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { OpenAPIBackend } from "openapi-backend";
import { useTestApp } from "../support/app.js";
import { BASE, Walk } from "../support/fixtures.js";

const t = useTestApp();
let key: string;
let userId: string;
let token: string;

beforeAll(async () => {
  const walk = new Walk(t.express);
  key = (await walk.tenant("dispatch-co")).key;
  ({ userId, token } = await walk.activeUserWithToken(key));
});

/** A request of the comparison: method, path, headers, body. */
interface Sent {
  method: "get" | "post" | "put";
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** Answered before dispatch (401, 403, or a body the reader refuses), so neither the dispatch nor handleRequest runs. */
  early?: true;
}

/** Status, `Allow` and body without `meta` of one answer to `sent`, with `cookie` or without. */
async function answer(sent: Sent, cookie: boolean): Promise<{ status: number; allow: unknown; body: unknown }> {
  let call = t.api()[sent.method](sent.path);
  for (const [name, value] of Object.entries(sent.headers ?? {})) call = call.set(name, value);
  if (cookie) call = call.set("cookie", "session=unrelated");
  const res = sent.body === undefined ? await call : await call.send(sent.body as object);
  const { meta: _meta, ...body } = res.body as Record<string, unknown>;
  return { status: res.status, allow: res.headers.allow, body };
}

describe("the dispatch of a matched operation", () => {
  it("answers every request as openapi-backend's handleRequest does, and only the cookie request goes through it", async () => {
    const owner = { "x-api-key": key };
    const user = { Authorization: `Bearer ${token}` };
    const cases: Sent[] = [
      { method: "get", path: `${BASE}/currencies`, headers: owner },
      { method: "get", path: `${BASE}/currencies`, early: true },
      { method: "get", path: `${BASE}/currencies`, headers: { "x-api-key": "not-a-key" }, early: true },
      { method: "get", path: `${BASE}/users?filter[limit]=2&filter[skip]=0`, headers: owner },
      { method: "get", path: `${BASE}/users?filter[limit]=abc`, headers: owner },
      { method: "get", path: `${BASE}/users?filter[limit]=1&filter[limit]=2`, headers: owner },
      { method: "get", path: `${BASE}/users/${userId}`, headers: owner },
      { method: "get", path: `${BASE}/users/not-a-uuid`, headers: owner },
      { method: "get", path: `${BASE}/users/${userId}`, headers: user, early: true },
      { method: "get", path: `${BASE}/customers`, headers: owner, early: true },
      { method: "post", path: `${BASE}/users`, headers: owner, body: { first_name: 7 } },
      // a top level that is not an object is refused by the body reader, before either dispatch
      { method: "post", path: `${BASE}/users`, headers: owner, body: [], early: true },
      { method: "post", path: `${BASE}/sessions`, body: { customer_id: "dispatch-co" } },
      { method: "put", path: `${BASE}/users/${userId}`, headers: owner, body: { email: "not an address" } },
      { method: "get", path: "/v2/credit-products?limit=0", headers: owner },
      { method: "get", path: "/v2/credit-products?limit=5", headers: owner },
      { method: "post", path: "/v2/credit-products", headers: owner, body: { code: "" }, early: true },
      { method: "post", path: "/v2/wallet/credits", headers: owner, body: { creditProductCode: 5 } },
      { method: "get", path: "/v2/wallet/credits/not-a-wallet", headers: owner },
    ];
    // Counts the calls of openapi-backend's handleRequest (the library's own method, which the
    // surfaces' instances inherit), restored below.
    const original = Object.getOwnPropertyDescriptor(OpenAPIBackend.prototype, "handleRequest")?.value as OpenAPIBackend["handleRequest"];
    let handled = 0;
    OpenAPIBackend.prototype.handleRequest = function (this: OpenAPIBackend, ...args) {
      handled += 1;
      return original.apply(this, args);
    };
    try {
      for (const sent of cases) {
        const label = `${sent.method.toUpperCase()} ${sent.path}`;
        handled = 0;
        const dispatched = await answer(sent, false);
        expect(handled, label).toBe(0);
        const viaHandleRequest = await answer(sent, true);
        expect(handled, label).toBe(sent.early ? 0 : 1);
        expect(dispatched, label).toEqual(viaHandleRequest);
      }
    } finally {
      OpenAPIBackend.prototype.handleRequest = original;
    }
  });

  it("coerces query parameters for the handler as openapi-backend does (a page of one user, skip as a number)", async () => {
    const res = await t.api().get(`${BASE}/users?filter[limit]=1&filter[skip]=0`).set("x-api-key", key);
    expect(res.status).toBe(200);
    expect(res.body.meta.pagination.records).toMatchObject({ limit: 1, skip: 0 });
    expect(res.body.data).toHaveLength(1);
  });
});

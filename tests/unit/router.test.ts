/**
 * The surfaces' own router (src/http/router.ts) answers as openapi-backend's router does, on both
 * documents: for every operation's path (templates filled with ordinary and awkward values), every
 * method, trailing slashes, query strings and paths no operation has, the same operation, the same
 * 404 or 405 (with the methods that match), and the same path parameters as openapi-backend's
 * `parseRequest`.
 */
import { OpenAPIBackend, type Document } from "openapi-backend";
import { beforeAll, describe, expect, it } from "vitest";
import { loadDocument } from "../../src/http/docs.js";
import { SurfaceRouter } from "../../src/http/router.js";

const METHODS = ["get", "post", "put", "patch", "delete"];
/** Values put in each `{param}` of a template: a UUID, a code, percent-encoded text, a dot. */
const FILLERS = ["0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e", "acme-corp", "a%20b%2Fc", "x.y"];

for (const name of ["platform", "credit"] as const) {
  describe(`${name} document`, () => {
    let api: OpenAPIBackend;
    let router: SurfaceRouter;

    beforeAll(async () => {
      api = new OpenAPIBackend({ definition: loadDocument(name) as unknown as Document, strict: true, validate: false, quick: false });
      await api.init();
      router = new SurfaceRouter(api.router);
    });

    /** The paths tried: every operation's path filled with each filler, with variants, and some no operation has. */
    const paths = (): string[] => {
      const out = new Set<string>(["/", "/nowhere", "/v2", "/v2/", "//", "/users/a/b/c/d/e"]);
      for (const operation of api.getOperations()) {
        for (const filler of FILLERS) {
          const path = operation.path.replace(/\{[^}]+\}/g, filler);
          out.add(path);
          out.add(`${path}/`);
          out.add(`${path}?x=1`);
          out.add(`${path}/extra`);
        }
      }
      return [...out];
    };

    it("matches every method and path as openapi-backend's matchOperation does", () => {
      let compared = 0;
      for (const path of paths()) {
        for (const method of METHODS) {
          const theirs = api.router.matchOperation({ method, path, headers: {} }, false);
          const ours = router.match(method, path);
          const label = `${method.toUpperCase()} ${path}`;
          if (theirs) {
            expect("operation" in ours && ours.operation.operationId, label).toBe(theirs.operationId);
            if ("operation" in ours) expect(router.paramsOf(ours.operation, path), label).toEqual(api.router.parseRequest({ method, path, headers: {} }, theirs).params);
          } else {
            let error = "";
            try {
              api.router.matchOperation({ method, path, headers: {} }, true);
            } catch (e) {
              error = (e as Error).message;
            }
            expect("operation" in ours, label).toBe(false);
            expect("allowed" in ours ? "405" : "404", label).toBe(error.slice(0, 3));
            if ("allowed" in ours) {
              const allowed = api.getOperations().filter((o) => api.router.matchOperation({ method: o.method, path, headers: {} }, false)?.operationId === o.operationId);
              expect([...ours.allowed].sort(), label).toEqual([...new Set(allowed.map((o) => o.method.toUpperCase()))].sort());
            }
          }
          compared++;
        }
      }
      expect(compared).toBeGreaterThan(1000);
      // openapi-backend's matching is the slow side (the reason src/http/router.ts exists): over
      // 20 s for the platform document on a busy 2-core machine, so the default 30 s is too tight
    }, 120_000);
  });
}

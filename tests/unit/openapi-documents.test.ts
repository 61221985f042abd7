/**
 * Both emitted documents pass openapi-backend's own check against the OpenAPI 3.0 meta-schema. The
 * service skips that check at start (src/http/surface.ts `CheckedInCiBackend`, docs/operations.md
 * "Start and memory": 0.15 s of a 2.1 s start), so it runs here, in CI, on the documents the service serves.
 */
import { OpenAPIBackend, type Document } from "openapi-backend";
import { describe, expect, it } from "vitest";
import { loadDocument } from "../../src/http/docs.js";

/** openapi-backend's check of `definition` (what `init()` runs unless quick): the document back, or an Error naming the problems. */
async function check(definition: unknown): Promise<Document> {
  const api = new OpenAPIBackend({ definition: definition as Document, strict: true, validate: false });
  await api.loadDocument();
  return api.validateDefinition();
}

describe("the emitted OpenAPI documents", () => {
  it.each(["platform", "credit"] as const)("%s passes openapi-backend's meta-schema check", async (name) => {
    const document = loadDocument(name);
    await expect(check(document)).resolves.toEqual(document);
  });

  it("a document that breaks the meta-schema fails the same check (negative control)", async () => {
    const broken = { ...loadDocument("platform"), info: { title: "no version" } };
    await expect(check(broken)).rejects.toThrow(/Document is not valid OpenAPI/);
  });
});

/**
 * `/openapi/*` (the emitted documents, downloadable) and `/docs` (a Swagger UI reference page for
 * both surfaces, assets served from the local `swagger-ui-dist` package, no CDN).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import express, { type Router } from "express";
import swaggerUiDist from "swagger-ui-dist";

/** Directory of the committed, generated OpenAPI documents. */
export const OPENAPI_DIR = resolve(import.meta.dirname, "../../generated/openapi");

/** Reads an emitted document as parsed JSON (`platform` or `credit`). */
export function loadDocument(name: "platform" | "credit"): Record<string, unknown> {
  return JSON.parse(readFileSync(resolve(OPENAPI_DIR, `${name}.openapi.json`), "utf8")) as Record<string, unknown>;
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Custody, Wallet and Credit Platform API reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({
  urls: [
    { url: "/openapi/platform.json", name: "Platform API (/api/v1)" },
    { url: "/openapi/credit.json", name: "Credit core (/v2)" }
  ],
  dom_id: "#swagger-ui",
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: "StandaloneLayout"
});
`;

/** Routes of the documents and the reference page. */
export function docsRouter(): Router {
  const router = express.Router();
  const files: Record<string, [string, string]> = {
    "/openapi/platform.json": ["platform.openapi.json", "application/json"],
    "/openapi/platform.yaml": ["platform.openapi.yaml", "application/yaml"],
    "/openapi/credit.json": ["credit.openapi.json", "application/json"],
    "/openapi/credit.yaml": ["credit.openapi.yaml", "application/yaml"],
  };
  for (const [path, [file, type]] of Object.entries(files)) {
    const body = readFileSync(resolve(OPENAPI_DIR, file), "utf8");
    router.get(path, (_req, res) => {
      res.type(type).send(body);
    });
  }
  router.get(["/docs", "/docs/"], (_req, res) => {
    res.type("html").send(PAGE);
  });
  router.get("/docs/init.js", (_req, res) => {
    res.type("application/javascript").send(INIT);
  });
  router.use("/docs/assets", express.static(swaggerUiDist.getAbsoluteFSPath(), { index: false }));
  return router;
}

/**
 * `/openapi/*` (the emitted documents, downloadable) and `/docs` (a Scalar API reference page for
 * both surfaces). The page loads nothing but this service: Scalar's browser bundle is served from
 * the local `@scalar/api-reference` package (no CDN), its web fonts (otherwise fetched from
 * fonts.scalar.com) are turned off in favour of the system fonts, and telemetry, the AI agent and
 * the developer toolbar (the parts that talk to scalar.com) are disabled. A Content-Security-Policy
 * on the page keeps it that way for scripts, styles, fonts and images.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import express, { type Router } from "express";

/** Directory of the committed, generated OpenAPI documents. */
export const OPENAPI_DIR = resolve(import.meta.dirname, "../../generated/openapi");

/**
 * Scalar's standalone browser bundle (UMD: one file, no chunks, no workers, no eval; it defines
 * `window.Scalar`). Only its path is resolved, through Node's resolution from this module, so it
 * is found from src/ (tsx) and from dist/ alike, wherever node_modules is; the package is never
 * loaded into the process. The package exports no subpath for the bundle, so the path is taken
 * relative to its main entry (`dist/index.js` → `dist/browser/standalone.js`).
 */
export const SCALAR_BUNDLE = resolve(
  dirname(createRequire(import.meta.url).resolve("@scalar/api-reference")),
  "browser/standalone.js",
);

/** Reads an emitted document as parsed JSON (`platform` or `credit`). */
export function loadDocument(name: "platform" | "credit"): Record<string, unknown> {
  return JSON.parse(readFileSync(resolve(OPENAPI_DIR, `${name}.openapi.json`), "utf8")) as Record<string, unknown>;
}

/**
 * The page's policy. Scripts only from this origin (the bundle and init.js; no inline script, no
 * eval). Styles: Scalar injects its stylesheet and sets `style` attributes at run time, hence
 * 'unsafe-inline' for styles only. `connect-src` allows this origin (the documents, and "Try it"
 * against the documents' first, relative server) and https: (the other, templated deployment
 * servers a reader may pick in "Try it").
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self' https:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Custody, Wallet and Credit Platform API reference</title>
  <link rel="icon" href="data:,">
</head>
<body>
  <div id="app"></div>
  <script src="/docs/assets/scalar.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

/**
 * Scalar's configuration: both documents as sources (a selector in the sidebar switches between
 * them; the platform document opens first), the modern layout (sidebar, reference, request and
 * response examples: three panes), code samples and search as Scalar's defaults. No proxy: the
 * documents' first servers are relative (`/api/v1`, `/`), so "Try it" calls the host serving the page.
 */
const CONFIGURATION = {
  sources: [
    { url: "/openapi/platform.json", title: "Platform API (/api/v1)", slug: "platform", default: true, agent: { disabled: true } },
    { url: "/openapi/credit.json", title: "Credit core (/v2)", slug: "credit", agent: { disabled: true } },
  ],
  layout: "modern",
  withDefaultFonts: false,
  telemetry: false,
  showDeveloperTools: "never",
  mcp: { disabled: true },
};

const INIT = `Scalar.createApiReference("#app", ${JSON.stringify(CONFIGURATION, null, 2)});\n`;

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
    res.set("Content-Security-Policy", DOCS_CSP).type("html").send(PAGE);
  });
  router.get("/docs/init.js", (_req, res) => {
    res.type("application/javascript").send(INIT);
  });
  router.get("/docs/assets/scalar.js", (_req, res, next) => {
    res.sendFile(SCALAR_BUNDLE, { dotfiles: "allow", headers: { "Content-Type": "application/javascript; charset=utf-8" } }, (error) => {
      if (error) next(error);
    });
  });
  return router;
}

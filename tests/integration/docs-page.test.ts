/**
 * The reference page at `/docs` (docs/decisions/surfaces-and-process.md "The `/docs` page") in a real browser: Debian's Chromium driven by
 * playwright-core loads the page from the real test app on an ephemeral port, finds an operation
 * of each surface (the platform document first, then the credit document through Scalar's document
 * selector), search, the code samples and "Try it" aimed at the serving host (a request sent from the
 * API client reaches the test app), and checks that the page asked nothing of any other origin (no
 * CDN, no fonts, no telemetry) and broke no Content-Security-Policy rule. Needs `/usr/bin/chromium`
 * (`apt-get install chromium`; `.ci/run` installs it) or `CHROMIUM_PATH`: without it the test
 * fails, it does not skip.
 */
import { existsSync } from "node:fs";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";

/** Debian's Chromium (package `chromium`). */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const STEP_TIMEOUT_MS = 20_000;

const app = useTestApp();
let server: Server;
let origin: string;
let browser: Browser | undefined;

beforeAll(async () => {
  server = app.express.listen(0, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 90_000);

afterAll(async () => {
  await browser?.close();
  if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("/docs in a real browser", () => {
  it(
    "shows an operation of each surface, aims Try it at the serving host and requests nothing outside it",
    async () => {
      // Checked here, not in beforeAll: a failing hook would report the test as skipped.
      expect(
        existsSync(CHROMIUM),
        `Chromium is missing at ${CHROMIUM}: install it (apt-get install -y chromium; .ci/run does it) or set ` +
          "CHROMIUM_PATH. The /docs page test needs a real browser and does not skip.",
      ).toBe(true);
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"], timeout: 30_000 });
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      page.setDefaultTimeout(STEP_TIMEOUT_MS);
      const requests: string[] = [];
      const problems: string[] = [];
      page.on("request", (req) => requests.push(req.url()));
      page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
      });
      try {
        const response = await page.goto(`${origin}/docs`, { waitUntil: "load" });
        expect(response?.status()).toBe(200);
        expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");

        // The platform document opens first: three panes (sidebar, reference, examples).
        const selector = page.getByRole("button", { name: "Platform API (/api/v1)" });
        await selector.waitFor();
        await page.getByRole("button", { name: "Currencies" }).first().click();
        await page.getByRole("link", { name: /List currencies/ }).first().click();
        const listCurrencies = page.locator("h3", { hasText: "List currencies" }).first();
        await listCurrencies.waitFor();
        // The example request (code samples) and the server of "Try it" are this host, through
        // the document's relative first server.
        await page.getByText(`${origin}/api/v1/currencies`).first().waitFor();
        // "Try it": the operation's API client sends the request to this host (no proxy); 401
        // without a credential.
        const operation = page.locator("section", { has: listCurrencies }).last();
        await operation.getByRole("button", { name: /Test Request/ }).first().click();
        const send = page.getByRole("button", { name: /^Send/ }).first();
        await send.waitFor();
        const tried = page.waitForResponse((res) => new URL(res.url()).pathname === "/api/v1/currencies");
        await send.click();
        expect((await tried).status()).toBe(401);
        await page.keyboard.press("Escape");
        await page.locator("h3", { hasText: "List currencies" }).first().waitFor();

        // Search (Scalar's default) finds an operation of the open document.
        await page.getByRole("button", { name: /Search/ }).first().click();
        await page.keyboard.type("List trading pairs");
        await page.getByRole("option", { name: /List trading pairs/ }).first().waitFor();
        await page.keyboard.press("Escape");

        // The credit document: chosen in the sidebar's document selector.
        await selector.click();
        await page.getByRole("option", { name: "Credit core (/v2)" }).click();
        await page.getByRole("button", { name: "Credit core (/v2)" }).waitFor();
        await page.getByRole("link", { name: /List credit products/ }).first().click();
        await page.locator("h3", { hasText: "List credit products" }).first().waitFor();
        await page.getByText(`${origin}/v2/credit-products`).first().waitFor();

        const paths = requests.map((url) => new URL(url)).filter((url) => url.origin === origin).map((url) => url.pathname);
        expect(paths).toEqual(expect.arrayContaining(["/docs", "/docs/assets/scalar.js", "/docs/init.js", "/openapi/platform.json", "/openapi/credit.json"]));
        expect(requests.filter((url) => new URL(url).origin !== origin), "requests outside the test server").toEqual([]);
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    },
    90_000,
  );
});

/**
 * SDK in CI: a TypeScript SDK generated from each emitted document by @hey-api/openapi-ts
 * (client-fetch) compiles under `tsc --strict` together with the README walk-through written
 * against it (tests/sdk/walkthrough.sdk.ts.txt), and that walk-through runs against the real app
 * on 127.0.0.1: master key → operator session → customer → credentials → user → activate → user
 * token → wallet → sandbox deposit → balance → withdrawal → code from the sandbox mail → confirm →
 * the debit in the balance; then the credit core: product (master key in x-api-key) → credit
 * wallet (after the tenant's NotificationsEnlist) → charge → payment. Every request carries exactly one credential, chosen by the SDK's
 * `auth` per security scheme.
 */
import { execFile } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createClient as generateSdk } from "@hey-api/openapi-ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_MASTER_KEY, startTestApp, type TestApp } from "../support/app.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DOCUMENTS = { platform: "generated/openapi/platform.openapi.json", credit: "generated/openapi/credit.openapi.json" } as const;
const SCRIPT = fileURLToPath(new URL("./walkthrough.sdk.ts.txt", import.meta.url));
const TSC = createRequire(import.meta.url).resolve("typescript/bin/tsc");

/** The strict compile: the generated SDKs and the walk-through, nothing else. */
const TSCONFIG = {
  compilerOptions: {
    strict: true,
    noEmit: true,
    target: "ES2023",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    lib: ["ES2023", "DOM"],
    types: ["node"],
  },
  include: ["walkthrough.ts", "platform", "credit"],
};

/** The walk-through module's result (its own type lives in the generated folder). */
interface Line {
  balance: string;
  available: string;
  held: string;
}
interface WalkthroughResult {
  customerId: string;
  userId: string;
  walletId: string;
  depositedBalance: Line;
  withdrawalId: string;
  withdrawalStatus: string;
  finalBalance: Line;
  signingSecret: string;
  creditWalletId: string;
  creditAfterCharge: { availableAmount: number; principalOutstanding: number };
  creditAfterPayment: { availableAmount: number; principalOutstanding: number };
  credentialsSent: string[][];
}

let t: TestApp;
let server: Server;
let origin: string;
let dir: string;
let receiver: Server;
let notificationUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sdk-walkthrough-"));
  for (const [name, document] of Object.entries(DOCUMENTS)) {
    await generateSdk({ input: join(ROOT, document), output: { path: join(dir, name) }, plugins: ["@hey-api/client-fetch"], logs: { level: "silent" } });
  }
  copyFileSync(SCRIPT, join(dir, "walkthrough.ts"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ private: true, type: "module" }));
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(TSCONFIG, null, 2));
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir"); // @types/node for the compile
  // the tenant's credit notification receiver, on loopback (hence ALLOW_PRIVATE_NETWORK_TARGETS)
  receiver = createServer((_req, res) => res.writeHead(204).end()).listen(0, "127.0.0.1");
  await once(receiver, "listening");
  notificationUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/credit`;
  t = await startTestApp({ ALLOW_PRIVATE_NETWORK_TARGETS: "true" });
  server = t.express.listen(0, "127.0.0.1");
  await once(server, "listening");
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await t?.dispose();
  await new Promise((resolve) => receiver?.close(resolve));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `tsc --strict --noEmit -p <tsconfig>` in the folder: its exit code and output. */
async function compile(tsconfig: string): Promise<{ code: number; output: string }> {
  return promisify(execFile)(process.execPath, [TSC, "-p", join(dir, tsconfig), "--strict", "--noEmit"], { cwd: dir }).then(
    () => ({ code: 0, output: "" }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? 1, output: `${error.stdout ?? ""}${error.stderr ?? ""}` }),
  );
}

describe("the README walk-through with SDKs generated from both documents", () => {
  it("compiles under tsc --strict (the generated SDKs and the walk-through)", async () => {
    const result = await compile("tsconfig.json");
    expect(result.output).toBe("");
    expect(result.code).toBe(0);
  }, 60_000);

  it("negative control: a call that does not match the document fails that compile", async () => {
    writeFileSync(
      join(dir, "broken.ts"),
      'import { createWallet } from "./platform/sdk.gen.js";\nawait createWallet({ path: { user_id: "u" }, body: { name: 1, networks: [] } });\n',
    );
    writeFileSync(join(dir, "tsconfig.broken.json"), JSON.stringify({ ...TSCONFIG, include: ["broken.ts"] }));
    const result = await compile("tsconfig.broken.json");
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/broken\.ts\(2,\d+\): error TS2322/);
  }, 60_000);

  it("runs against the app: withdrawal confirmed and debited, credit charge and payment booked, one credential per request", async () => {
    const { walkthrough } = (await import(pathToFileURL(join(dir, "walkthrough.ts")).href)) as {
      walkthrough: (origin: string, masterKey: string, notificationUrl: string) => Promise<WalkthroughResult>;
    };
    const result = await walkthrough(origin, TEST_MASTER_KEY, notificationUrl);

    expect(result.customerId).toBe("acme-corp");
    expect(result.depositedBalance).toEqual({ balance: "0.50000000", available: "0.50000000", held: "0.00000000" });
    expect(result.withdrawalStatus).toBe("COMPLETED");
    expect(result.finalBalance.balance).toBe("0.40000000");
    expect(result.finalBalance.held).toBe("0.00000000");

    expect(result.signingSecret).toMatch(/^whsec_/);
    expect(result.creditAfterCharge).toEqual({ availableAmount: 70000, principalOutstanding: 30000 });
    expect(result.creditAfterPayment.principalOutstanding).toBe(20000);
    expect(result.creditAfterPayment.availableAmount).toBe(80000);

    // every request: exactly one credential header
    expect(result.credentialsSent.length).toBeGreaterThan(15);
    for (const sent of result.credentialsSent) expect(sent).toHaveLength(1);
  }, 60_000);
});

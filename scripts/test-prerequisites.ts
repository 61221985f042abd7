/**
 * The system packages the test run drives (docs/testing.md): Debian's Dovecot for the email poller
 * tests (tests/support/dovecot.ts), Debian's Chromium for the /docs page test
 * (tests/integration/docs-page.test.ts) and Debian's PgBouncer for the transaction pooling test
 * (tests/integration/pgbouncer.test.ts, tests/support/pgbouncer.ts). `npm test` checks them before any test
 * (tests/support/prerequisites.ts, a vitest globalSetup); this file holds the decision and its
 * execution, and runs the same check on its own with `npx tsx scripts/test-prerequisites.ts`.
 *
 * When one is missing: as root with apt-get, it is installed (`apt-get update -qq`, then
 * `apt-get install -y -qq --no-install-recommends …`, as `.ci/run` does); otherwise the run stops
 * at once with the one command that installs them.
 */
import { execFileSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** A program the tests run, and the Debian package that brings it. */
export interface Prerequisite {
  /** What it is, for messages ("Dovecot"). */
  name: string;
  /** Absolute path of the executable the tests start. */
  path: string;
  /** Debian package name. */
  debianPackage: string;
}

/** The programs the tests run; `CHROMIUM_PATH` moves Chromium's (as docs-page.test.ts reads it). */
export function systemPrerequisites(env: NodeJS.ProcessEnv = process.env): Prerequisite[] {
  return [
    { name: "Dovecot", path: "/usr/sbin/dovecot", debianPackage: "dovecot-imapd" },
    { name: "Chromium", path: env.CHROMIUM_PATH ?? "/usr/bin/chromium", debianPackage: "chromium" },
    { name: "PgBouncer", path: "/usr/sbin/pgbouncer", debianPackage: "pgbouncer" },
  ];
}

/** What the decision looks at, injected so that it can be tested without touching the machine. */
export interface PrerequisiteProbe {
  /** Whether an executable file exists at `path`. */
  exists(path: string): boolean;
  /** Whether this process runs as root (uid 0). */
  isRoot(): boolean;
  /** Whether `apt-get` is on the PATH. */
  hasAptGet(): boolean;
}

/** What to do before the tests. */
export type PrerequisitePlan =
  | { action: "none" }
  | { action: "install"; missing: Prerequisite[]; packages: string[] }
  | { action: "stop"; missing: Prerequisite[]; command: string; message: string };

/**
 * Decides: nothing missing → `none`; something missing, root and apt-get → `install` its
 * packages; otherwise → `stop`, with the `sudo apt-get install -y …` command to run and a message
 * naming it.
 */
export function planPrerequisites(probe: PrerequisiteProbe, prerequisites: Prerequisite[] = systemPrerequisites()): PrerequisitePlan {
  const missing = prerequisites.filter((p) => !probe.exists(p.path));
  if (missing.length === 0) return { action: "none" };
  const packages = [...new Set(missing.map((p) => p.debianPackage))];
  if (probe.isRoot() && probe.hasAptGet()) return { action: "install", missing, packages };
  const command = `sudo apt-get install -y ${packages.join(" ")}`;
  const what = missing.map((p) => `${p.name} (${p.path})`).join(" and ");
  const how = probe.hasAptGet()
    ? `Run: ${command}`
    : `Install ${missing.length > 1 ? "them" : "it"} with the system's package manager (on Debian: ${command})`;
  return { action: "stop", missing, command, message: `The tests need ${what}, which ${missing.length > 1 ? "are" : "is"} not installed. ${how}` };
}

/** Runs a command with its output shown; throws when it exits non-zero. */
export type CommandRunner = (file: string, args: string[]) => void;

const runInherit: CommandRunner = (file, args) => {
  execFileSync(file, args, { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
};

/**
 * Carries the plan out: installs the missing packages with apt-get (then checks again), or throws.
 * @throws Error with the plan's message (and the command to run) when it is `stop`, or when a
 *   program is still missing after the install.
 */
export function ensurePrerequisites(probe: PrerequisiteProbe = machineProbe, run: CommandRunner = runInherit, prerequisites: Prerequisite[] = systemPrerequisites()): PrerequisitePlan {
  const plan = planPrerequisites(probe, prerequisites);
  if (plan.action === "stop") throw new Error(plan.message);
  if (plan.action === "install") {
    process.stderr.write(`Installing the tests' system packages: ${plan.packages.join(" ")}\n`);
    run("apt-get", ["update", "-qq"]);
    run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...plan.packages]);
    const still = plan.missing.filter((p) => !probe.exists(p.path));
    if (still.length > 0) throw new Error(`Still missing after apt-get install ${plan.packages.join(" ")}: ${still.map((p) => p.path).join(", ")}`);
  }
  return plan;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The probe of this machine: the file system, the process's uid and the PATH. */
export const machineProbe: PrerequisiteProbe = {
  exists: isExecutable,
  isRoot: () => process.getuid?.() === 0,
  hasAptGet: () => (process.env.PATH ?? "").split(delimiter).some((dir) => dir !== "" && isExecutable(join(dir, "apt-get"))),
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const plan = ensurePrerequisites();
    if (plan.action === "install") console.log(`Installed ${plan.packages.join(" ")}.`);
    else console.log("The tests' system packages are installed.");
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}

/**
 * The test run's system-package check (scripts/test-prerequisites.ts, docs/testing.md), with the
 * machine probe and the command runner injected: missing + root + apt-get → install; missing and
 * not root (or no apt-get) → stop with the one command to run; all present → nothing.
 */
import { describe, expect, it } from "vitest";
import { ensurePrerequisites, planPrerequisites, systemPrerequisites, type PrerequisiteProbe } from "../../scripts/test-prerequisites.js";

const DOVECOT = "/usr/sbin/dovecot";
const CHROMIUM = "/usr/bin/chromium";
const PGBOUNCER = "/usr/sbin/pgbouncer";
const ALL = systemPrerequisites({});

/** A machine with the files of `present` (a mutable set: an install adds to it), root or not, apt-get or not. */
function machine(present: string[], root: boolean, apt = true): PrerequisiteProbe & { files: Set<string> } {
  const files = new Set(present);
  return { files, exists: (path) => files.has(path), isRoot: () => root, hasAptGet: () => apt };
}

describe("planPrerequisites", () => {
  it("does nothing when Dovecot, Chromium and PgBouncer are there", () => {
    expect(planPrerequisites(machine([DOVECOT, CHROMIUM, PGBOUNCER], false, false), ALL)).toEqual({ action: "none" });
    expect(planPrerequisites(machine([DOVECOT, CHROMIUM, PGBOUNCER], true), ALL)).toEqual({ action: "none" });
  });

  it("installs the missing packages, and only those, as root with apt-get", () => {
    const both = planPrerequisites(machine([], true), ALL);
    expect(both).toMatchObject({ action: "install", packages: ["dovecot-imapd", "chromium", "pgbouncer"] });
    expect(planPrerequisites(machine([DOVECOT, PGBOUNCER], true), ALL)).toMatchObject({ action: "install", packages: ["chromium"] });
    expect(planPrerequisites(machine([CHROMIUM, PGBOUNCER], true), ALL)).toMatchObject({ action: "install", packages: ["dovecot-imapd"] });
  });

  it("stops with the one sudo apt-get command when not root", () => {
    const plan = planPrerequisites(machine([CHROMIUM, PGBOUNCER], false), ALL);
    expect(plan).toMatchObject({ action: "stop", command: "sudo apt-get install -y dovecot-imapd" });
    expect(plan.action === "stop" && plan.message).toBe("The tests need Dovecot (/usr/sbin/dovecot), which is not installed. Run: sudo apt-get install -y dovecot-imapd");
    const both = planPrerequisites(machine([], false), ALL);
    expect(both).toMatchObject({ action: "stop", command: "sudo apt-get install -y dovecot-imapd chromium pgbouncer" });
    expect(both.action === "stop" && both.message).toContain("Dovecot (/usr/sbin/dovecot) and Chromium (/usr/bin/chromium) and PgBouncer (/usr/sbin/pgbouncer), which are not installed");
  });

  it("stops, naming the Debian command, as root without apt-get", () => {
    const plan = planPrerequisites(machine([DOVECOT, PGBOUNCER], true, false), ALL);
    expect(plan).toMatchObject({ action: "stop", command: "sudo apt-get install -y chromium" });
    expect(plan.action === "stop" && plan.message).toMatch(/package manager \(on Debian: sudo apt-get install -y chromium\)$/);
  });

  it("checks the Chromium of CHROMIUM_PATH when it is set", () => {
    const custom = systemPrerequisites({ CHROMIUM_PATH: "/opt/chromium/chrome" });
    expect(planPrerequisites(machine([DOVECOT, "/opt/chromium/chrome", PGBOUNCER], false), custom)).toEqual({ action: "none" });
    expect(planPrerequisites(machine([DOVECOT, CHROMIUM, PGBOUNCER], false), custom)).toMatchObject({ action: "stop", command: "sudo apt-get install -y chromium" });
  });
});

describe("ensurePrerequisites", () => {
  it("runs apt-get update, then apt-get install of the missing packages, as root", () => {
    const probe = machine([], true);
    const commands: string[] = [];
    const plan = ensurePrerequisites(probe, (file, args) => {
      commands.push([file, ...args].join(" "));
      if (args[0] === "install") [DOVECOT, CHROMIUM, PGBOUNCER].forEach((path) => probe.files.add(path));
    }, ALL);
    expect(plan.action).toBe("install");
    expect(commands).toEqual(["apt-get update -qq", "apt-get install -y -qq --no-install-recommends dovecot-imapd chromium pgbouncer"]);
  });

  it("runs nothing when everything is there", () => {
    const commands: string[] = [];
    expect(ensurePrerequisites(machine([DOVECOT, CHROMIUM, PGBOUNCER], true), (file) => commands.push(file), ALL)).toEqual({ action: "none" });
    expect(commands).toEqual([]);
  });

  it("throws the message with the command, running nothing, when not root", () => {
    const commands: string[] = [];
    expect(() => ensurePrerequisites(machine([], false), (file) => commands.push(file), ALL)).toThrow(/Run: sudo apt-get install -y dovecot-imapd chromium pgbouncer$/);
    expect(commands).toEqual([]);
  });

  it("throws when a program is still missing after the install", () => {
    expect(() => ensurePrerequisites(machine([DOVECOT, PGBOUNCER], true), () => undefined, ALL)).toThrow("Still missing after apt-get install chromium: /usr/bin/chromium");
  });
});

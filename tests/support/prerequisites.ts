/**
 * vitest globalSetup, listed first by the projects that need the machine's services
 * (vitest.config.ts): before any test, checks that Dovecot, Chromium and PgBouncer are installed, installs
 * them as root with apt-get, or stops the run with the command to run (scripts/test-prerequisites.ts,
 * docs/testing.md). The check runs once per run, whichever project asks first.
 */
import { ensurePrerequisites } from "../../scripts/test-prerequisites.js";

const KEY = Symbol.for("custody-tests.prerequisites-checked");
const holder = globalThis as { [KEY]?: boolean };

export function setup(): void {
  if (holder[KEY]) return;
  ensurePrerequisites();
  holder[KEY] = true;
}

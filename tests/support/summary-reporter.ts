/**
 * Prints one plain closing line, `Tests: N passed, N failed[, N skipped]`, after vitest's own
 * summary, so CI logs end with a count any reader (or tool) can parse. One line for the whole run,
 * whichever projects ran (vitest.config.ts); an error outside any test counts as a failure.
 */
import type { Reporter, TestModule, TestRunEndReason } from "vitest/node";

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown> = [], reason?: TestRunEndReason): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed += 1;
        else if (state === "failed") failed += 1;
        else skipped += 1;
      }
      if (module.state() === "failed" && [...module.children.allTests()].length === 0) failed += 1;
    }
    // Errors outside any test (one thrown after its test ended) fail the run too, and so does a run
    // that failed with no test failing (a globalSetup that threw, such as a missing system package).
    failed += unhandledErrors.length;
    if (reason === "failed" && failed === 0) failed = 1;
    process.stdout.write(`\nTests: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}\n`);
  }
}

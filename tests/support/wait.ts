/** Waiting for a condition in integration tests: poll with a deadline instead of sleeping. */

/**
 * Calls `probe` every 50 ms until it returns something other than undefined, and returns it.
 * @throws Error naming `what` when `timeoutMs` passes first.
 */
export async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves after `ms` milliseconds (only to show that something does NOT happen within a time). */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

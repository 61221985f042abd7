/**
 * Waiting in tests (docs/testing.md): poll a condition with a deadline, or wait for the clock to
 * pass an instant, instead of sleeping a fixed time. `sleep` is kept for the one case a fixed time
 * is the point: showing that something does NOT happen within a window.
 */

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

/**
 * Resolves once `Date.now()` is past `instant` (epoch ms, or an ISO 8601 string such as a stored
 * `created_at`): a write made after it gets a later millisecond timestamp than the one at `instant`,
 * so orderings by time are strict. Resolves at once when the clock is already past it.
 */
export async function clockPast(instant: number | string): Promise<void> {
  const at = typeof instant === "string" ? Date.parse(instant) : instant;
  if (Number.isNaN(at)) throw new Error(`clockPast: not an instant: ${String(instant)}`);
  while (Date.now() <= at) await new Promise((r) => setTimeout(r, at + 1 - Date.now()));
}

/** Resolves after `ms` milliseconds: only to show that something does NOT happen within a window. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

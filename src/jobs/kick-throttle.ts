/**
 * Coalesces the kicks of one job (docs/outbox.md "Jobs"): a kick asks for a round of
 * the job soon, because a change just wrote work for it (outbox rows, credit events). Under load
 * every write kicks, and each kick is a job row inserted and announced to every worker, yet one
 * round takes all the due work. So a job is started at most once per `windowMs`: the first kick of a
 * window starts it at once, the later ones of that window become one trailing start at the window's
 * end, which takes whatever was written after the first round claimed. No kick is lost; a kick
 * waits at most `windowMs`.
 */

/** Default window: 100 ms. */
export const KICK_WINDOW_MS = 100;

/** Per job name, at most one start per window, the first at once and one trailing (see the module note). */
export class KickThrottle {
  private readonly lastStart = new Map<string, number>();
  private readonly trailing = new Map<string, ReturnType<typeof setTimeout>>();

  /**
   * @param start starts job `name` (fire and forget).
   * @param windowMs the window, milliseconds.
   * @param clock the current time in epoch milliseconds (tests pass a fake one).
   */
  constructor(
    private readonly start: (name: string) => void,
    private readonly windowMs = KICK_WINDOW_MS,
    private readonly clock: () => number = Date.now,
  ) {}

  /** A kick of job `name`. */
  kick(name: string): void {
    const now = this.clock();
    const last = this.lastStart.get(name);
    if (last === undefined || now - last >= this.windowMs) {
      this.fire(name, now);
      return;
    }
    if (this.trailing.has(name)) return;
    const timer = setTimeout(() => {
      this.trailing.delete(name);
      this.fire(name, this.clock());
    }, this.windowMs - (now - last));
    timer.unref?.();
    this.trailing.set(name, timer);
  }

  /** Drops the pending trailing starts (at shutdown: the recurring rounds of the next process catch up). */
  stop(): void {
    for (const timer of this.trailing.values()) clearTimeout(timer);
    this.trailing.clear();
  }

  private fire(name: string, at: number): void {
    this.lastStart.set(name, at);
    this.start(name);
  }
}

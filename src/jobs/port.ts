/**
 * The job queue as the modules see it (docs/outbox.md "Jobs"): a narrow port the Agenda
 * implementation (src/jobs/scheduler.ts `JobScheduler`) satisfies. Modules take a {@link JobQueue}
 * to start work on a worker after their commit, and describe their background work as
 * {@link JobSpec}s that the app hands to the registry (src/jobs/registry.ts); they never build or
 * start the scheduler themselves.
 */

/** What the modules may ask of the job queue (defining jobs is the registry's: src/jobs/registry.ts). */
export interface JobQueue {
  /** Runs job `name` once, as soon as a worker is free. @throws when the database is unreachable. */
  now(name: string, data?: Record<string, unknown>): Promise<void>;
  /** {@link now} without waiting; a failure is logged (the recurring round catches up). Never throws. */
  kick(name: string): void;
  /** Makes `name` run every `seconds` (one such job in the whole database). */
  every(name: string, seconds: number): Promise<void>;
  /** Makes `name` run every `seconds` with `data`, one job per value of `data[key]`. */
  everyFor(name: string, seconds: number, data: Record<string, string>, key: string): Promise<void>;
  /** Removes every job `name` whose data holds `data`. @returns how many. */
  cancel(name: string, data: Record<string, string>): Promise<number>;
}

/**
 * A background job as a module describes it: its name, its body, how many may run at once on one
 * worker and, for a recurring job, its interval.
 */
export interface JobSpec {
  /** The job's name in the job table (`webhook-delivery`, `credit-cycles`…). */
  name: string;
  /** The body: a round of work, given the job's data (`{}` for recurring rounds; a keyed job's own data, see {@link JobQueue.everyFor}). */
  run: (data: Record<string, unknown>) => Promise<void>;
  /** Runs at once on one worker (default 5, the scheduler's). */
  concurrency?: number;
  /** Seconds between two runs of a recurring job (also run once at start); absent: run on demand only. */
  everyS?: number;
}

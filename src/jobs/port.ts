/**
 * The job queue as the modules see it (docs/outbox.md "Jobs"): a narrow port the Agenda
 * implementation (src/jobs/scheduler.ts `JobScheduler`) satisfies. Modules take a {@link JobQueue}
 * to start work on a worker after their commit, and describe their background work as
 * {@link JobSpec}s that the app hands to the registry (src/jobs/registry.ts); they never build or
 * start the scheduler themselves.
 */

/** A job body: gets the job's data; a throw is logged and recorded on the job. */
export type JobRun<D> = (data: D) => Promise<void>;

/** What the modules may ask of the job queue. */
export interface JobQueue {
  /**
   * Defines job `name` on this process (every process defines every job; only workers run them).
   * @param settings.concurrency runs of this job at once on one worker (default 5).
   */
  define<D>(name: string, run: JobRun<D>, settings?: { concurrency?: number }): void;
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
  /** The body: a round of work; its data is ignored. */
  run: () => Promise<void>;
  /** Runs at once on one worker (default 5, the scheduler's). */
  concurrency?: number;
  /** Seconds between two runs of a recurring job (also run once at start); absent: run on demand only. */
  everyS?: number;
}

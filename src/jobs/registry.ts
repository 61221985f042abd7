/**
 * The one place where the service's background jobs are registered (docs/outbox.md "Jobs"):
 * {@link startJobs} defines every job the app lists on the scheduler, connects it (a worker also
 * starts running due jobs) and schedules the recurring ones. The app assembles the list from the
 * modules' {@link JobSpec}s (src/app.ts); modules never import the scheduler.
 */
import type { JobSpec } from "./port.js";
import type { JobScheduler } from "./scheduler.js";

/**
 * Defines each job of `specs` on `scheduler` (every process, so an api process can create jobs of
 * names it never runs), starts the scheduler (running due jobs when `runJobs`: roles `worker` and
 * `all`) and makes each recurring job (`everyS`) run at its interval, once in the whole database.
 * @throws when the database is unreachable or a job name is listed twice.
 */
export async function startJobs(scheduler: JobScheduler, specs: readonly JobSpec[], runJobs: boolean): Promise<void> {
  const names = new Set<string>();
  for (const spec of specs) {
    if (names.has(spec.name)) throw new Error(`job ${spec.name} is registered twice`);
    names.add(spec.name);
    scheduler.define<Record<string, unknown>>(spec.name, (data) => spec.run(data ?? {}), spec.concurrency !== undefined ? { concurrency: spec.concurrency } : {});
  }
  await scheduler.start(runJobs);
  for (const spec of specs) if (spec.everyS !== undefined) await scheduler.every(spec.name, spec.everyS);
}

/**
 * What PostgreSQL's backends are doing during a run: `pg_stat_activity` of the benchmark's database
 * sampled every 50 ms on a connection of its own. The withdrawal scenarios report how many backends
 * were busy on average and how many of them waited on a lock, and the statement most often waiting
 * (so a hot row shows up by name).
 */
import pg from "pg";

/** What the samples of one run showed. */
export interface ActivitySummary {
  /** Backends not idle (outside this sampler), on average over the samples. */
  busy: number;
  /** Of them, waiting on a lock (`wait_event_type = 'Lock'`), on average. */
  lockWaits: number;
  /** The statement most often seen waiting on a lock (its first 120 characters, values masked), with its share of the lock waits. */
  topLockWait: { statement: string; share: number } | null;
}

/** Samples `pg_stat_activity` from `start()` to `stop()`. */
export class ActivitySampler {
  private client: pg.Client | undefined;
  private running: Promise<void> | undefined;
  private stopping = false;
  private samples = 0;
  private busy = 0;
  private waits = new Map<string, number>();

  constructor(private readonly databaseUrl: string) {}

  async start(): Promise<void> {
    this.client = new pg.Client({ connectionString: this.databaseUrl });
    await this.client.connect();
    const client = this.client;
    this.stopping = false;
    this.running = (async () => {
      while (!this.stopping) {
        const { rows } = await client.query<{ wait_event_type: string | null; statement: string }>(
          `select wait_event_type, left(regexp_replace(query, '\\s+', ' ', 'g'), 120) as statement from pg_stat_activity
            where datname = current_database() and state <> 'idle' and pid <> pg_backend_pid()`,
        );
        this.samples++;
        for (const row of rows) {
          this.busy++;
          if (row.wait_event_type !== "Lock") continue;
          // literals (MikroORM inlines them) and parameters masked, so one statement counts as one
          const shape = row.statement.replace(/'(?:[^']|'')*'?/g, "?").replace(/\$\d+/g, "?");
          this.waits.set(shape, (this.waits.get(shape) ?? 0) + 1);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
  }

  async stop(): Promise<ActivitySummary> {
    this.stopping = true;
    await this.running;
    await this.client?.end();
    const samples = Math.max(1, this.samples);
    const waited = [...this.waits.values()].reduce((a, b) => a + b, 0);
    const [top] = [...this.waits.entries()].sort((a, b) => b[1] - a[1]);
    return {
      busy: this.busy / samples,
      lockWaits: waited / samples,
      topLockWait: top ? { statement: top[0], share: top[1] / waited } : null,
    };
  }
}

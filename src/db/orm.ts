/**
 * MikroORM on PostgreSQL: one `initORM()` that connects (failing fast), runs the committed
 * migrations, and returns the ORM. The entities are the caller's (src/modules/entities.ts): the
 * database layer imports no module.
 */
import { randomBytes } from "node:crypto";
import { MikroORM, defineConfig, type Options } from "@mikro-orm/postgresql";
import pg from "pg";
import type { Logger } from "pino";
import { Migrator } from "@mikro-orm/migrations";
import { migrationsList } from "./migrations/index.js";

/**
 * The entities the ORM maps: every module's, assembled outside the database layer
 * (src/modules/entities.ts `ENTITIES`) and passed in by the caller.
 */
export type EntityList = NonNullable<Options["entities"]>;

/** Tables the ORM does not own, each created by a committed migration: Agenda's job table and the rate-limit buckets. */
export const FOREIGN_TABLES = ["agenda_jobs", "rate_limit"];

/** How long a checked-out connection that died may stay checked out before {@link releaseDeadConnections} releases it, ms. */
const DEAD_CONNECTION_GRACE_MS = 1_000;

/**
 * Keeps connections that die while checked out from leaking out of `pool`
 * (docs/decisions/requests-and-validation.md "When the database cannot be reached"). Kysely (under
 * MikroORM) releases a transaction's connection only after its COMMIT or
 * ROLLBACK succeeded; when PostgreSQL goes away mid-transaction both fail, the connection is never
 * released, and after a few outages the pool has no connection left even though the database is
 * back. Here a checked-out connection that ends or fails is released with its error (so pg-pool
 * destroys it instead of reusing it) once {@link DEAD_CONNECTION_GRACE_MS} has passed without its
 * holder releasing it; a later release by the holder is then a no-op.
 */
export function releaseDeadConnections(pool: pg.Pool): void {
  const checkedOut = new Set<pg.PoolClient>();
  pool.on("acquire", (client) => {
    checkedOut.add(client);
    if ((client as { deadConnectionGuard?: boolean }).deadConnectionGuard) return;
    (client as { deadConnectionGuard?: boolean }).deadConnectionGuard = true;
    const died = (error?: Error): void => {
      setTimeout(() => {
        if (!checkedOut.has(client)) return;
        checkedOut.delete(client);
        client.release(error ?? new Error("Connection terminated"));
        client.release = () => {};
      }, DEAD_CONNECTION_GRACE_MS).unref();
    };
    client.on("error", died);
    client.on("end", () => died());
  });
  pool.on("release", (_error, client) => {
    checkedOut.delete(client as pg.PoolClient);
  });
}

/** The ORM configuration for a PostgreSQL connection URL and the service's `entities`. */
export function ormConfig(clientUrl: string, entities: EntityList, overrides: Partial<Options> = {}): Options {
  return defineConfig({
    clientUrl,
    entities,
    extensions: [Migrator],
    migrations: { migrationsList, transactional: true, allOrNothing: true, snapshot: false, silent: true },
    pool: { min: 0, max: 10 },
    driverOptions: { onPoolCreated: releaseDeadConnections },
    debug: false,
    schemaGenerator: { skipTables: FOREIGN_TABLES },
    ...overrides,
  });
}

/** Key of the advisory lock that serialises the migrations of processes starting together. */
export const MIGRATIONS_LOCK_KEY = 7_211_935_001;

/**
 * Connects to `clientUrl`, applies pending migrations, and returns the ORM mapping `entities`
 * (src/modules/entities.ts `ENTITIES`). Processes starting together on one database (API replicas
 * and workers, docs/operations.md "Containers") take turns: the migrations run under a session
 * advisory lock held on a connection of their own, so the first applies each pending migration
 * and the others then find none.
 * @param sessionUrl a direct connection to the same database for that lock (`DATABASE_SESSION_URL`:
 *   a session lock cannot live behind a transaction pooler); default `clientUrl`.
 * @throws the driver's connection error when the database is unreachable.
 */
export async function initORM(clientUrl: string, entities: EntityList, sessionUrl: string = clientUrl): Promise<MikroORM> {
  const orm = await MikroORM.init(ormConfig(clientUrl, entities));
  await orm.connect();
  const lock = new pg.Client({ connectionString: sessionUrl });
  try {
    await lock.connect();
    await lock.query("select pg_advisory_lock($1)", [MIGRATIONS_LOCK_KEY]);
    await orm.migrator.up();
  } catch (error) {
    await orm.close(true).catch(() => {});
    throw error;
  } finally {
    await lock.query("select pg_advisory_unlock($1)", [MIGRATIONS_LOCK_KEY]).catch(() => {});
    await lock.end().catch(() => {});
  }
  return orm;
}

/** The `application_name` of this process's connections once {@link nameProcessConnections} has run. */
let processName: string | undefined;

/**
 * Gives every PostgreSQL connection this process opens from now on one name of its own, so that
 * the shutdown finds this process's backends in `pg_stat_activity`, and no other process's
 * (docs/security.md "Shutdown"). node-postgres takes `PGAPPNAME` as the default `application_name`
 * of every client (the ORM's pool, the rate limits' and the job scheduler's): it is set to
 * `<PGAPPNAME or "platform", at most 40 characters>/<pid>-<8 hex digits>` (at most 60 characters,
 * under PostgreSQL's 63). A `DATABASE_URL` that sets `application_name` itself overrides the name;
 * then nothing is cancelled at shutdown and the process still exits within its bound. Called once by
 * src/main.ts before the first connection; later calls return the same name.
 * @returns the name.
 */
export function nameProcessConnections(): string {
  if (processName === undefined) {
    const prefix = (process.env.PGAPPNAME || "platform").slice(0, 40);
    processName = `${prefix}/${process.pid}-${randomBytes(4).toString("hex")}`;
    process.env.PGAPPNAME = processName;
  }
  return processName;
}

/** After the shutdown deadline, how often running statements are cancelled again, ms. */
const CUT_INTERVAL_MS = 250;
/** After the shutdown deadline, when the backends still busy are terminated instead, ms. */
export const TERMINATE_AFTER_MS = 2_000;
/** Bound of each connection and query of the cut itself, ms. */
const CUT_QUERY_TIMEOUT_MS = 2_000;

/**
 * Cancels (`pg_cancel_backend`: the running statement fails with SQLSTATE 57014, its transaction
 * rolls back) or terminates (`pg_terminate_backend`: the backend ends, its transaction rolls back)
 * the busy backends named `name`, other than the one asking, on a connection of its own to
 * `databaseUrl` (any database of the server: the name is the process's own).
 * @returns how many backends were signalled.
 * @throws the driver's error when the server cannot be reached within 2 s.
 */
export async function signalProcessBackends(databaseUrl: string, name: string, how: "cancel" | "terminate"): Promise<number> {
  const client = new pg.Client({
    connectionString: databaseUrl,
    application_name: `${name} shutdown`,
    connectionTimeoutMillis: CUT_QUERY_TIMEOUT_MS,
    query_timeout: CUT_QUERY_TIMEOUT_MS,
  });
  client.on("error", () => {});
  await client.connect();
  try {
    const signal = how === "cancel" ? "pg_cancel_backend" : "pg_terminate_backend";
    // cancel: statements running now; terminate: also transactions left open between statements.
    const states = how === "cancel" ? "state = 'active'" : "state <> 'idle'";
    const { rows } = await client.query<{ n: number }>(
      `select count(*) filter (where ${signal}(pid))::int as n from pg_stat_activity
       where application_name = $1 and pid <> pg_backend_pid() and ${states}`,
      [name],
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A running cut of this process's statements (see {@link cutStatementsAt}). */
export interface StatementCut {
  /** Stops cutting (the close has ended) and waits for a round under way. */
  stop(): Promise<void>;
}

/**
 * From `deadline` (epoch ms) on, until stopped: every 250 ms, cancels the statements still running
 * on this process's connections (named by {@link nameProcessConnections}); from `deadline` + 2 s on,
 * terminates the backends still busy, whether running or between the statements of an open
 * transaction. Either way the transaction rolls back: nothing is half-written. A pool waiting in
 * `end()` for its checked-out connections then gets them back and closes. Without a process name
 * (an app built by tests) nothing is cut. Failures of a round are logged, never thrown
 * (docs/security.md "Shutdown").
 */
export function cutStatementsAt(deadline: number, databaseUrl: string, logger: Logger): StatementCut {
  const name = processName;
  let stopped = false;
  let round: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const tick = (): void => {
    if (stopped) return;
    const how = Date.now() >= deadline + TERMINATE_AFTER_MS ? "terminate" : "cancel";
    round = signalProcessBackends(databaseUrl, name as string, how).then(
      (count) => {
        if (count > 0) logger.warn({ backends: count, how }, how === "cancel" ? "shutdown: cancelled running statements" : "shutdown: terminated busy connections");
      },
      (error: unknown) => logger.warn({ err: error, how }, "shutdown: could not reach the database to cut the running statements"),
    ).finally(() => {
      if (!stopped) timer = setTimeout(tick, CUT_INTERVAL_MS);
    });
  };
  if (name !== undefined) {
    timer = setTimeout(() => {
      logger.warn({ name }, "shutdown: SHUTDOWN_TIMEOUT_S reached: cancelling the statements still running on this process's connections");
      tick();
    }, Math.max(0, deadline - Date.now()));
  }
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
}

export { MikroORM };

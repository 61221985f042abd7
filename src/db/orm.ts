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

/** Idle time before the first TCP keepalive probe of a connection, ms. */
const KEEPALIVE_DELAY_MS = 1_000;
/** How much sooner than `DATABASE_WAIT_S` PostgreSQL cancels a statement itself (so its own clean cancel wins over the driver's), ms. */
const SERVER_MARGIN_MS = 500;

/**
 * The `pg` pool settings that bound a request's waits on the database to `waitS` seconds
 * (`DATABASE_WAIT_S`; docs/operations.md "Database waits"): a pool connection within `waitS`
 * (`connectionTimeoutMillis`: else "timeout exceeded when trying to connect"), each statement within
 * `waitS` on the driver's side for a server that does not answer at all (`query_timeout`: "Query read
 * timeout", the connection is then ended: {@link endClientsOnReadTimeout}), TCP keepalive after 1 s
 * idle. PostgreSQL's own bounds come with {@link serverTimeoutsOnConnect}.
 */
export function boundedWaitOptions(waitS: number): pg.PoolConfig {
  const waitMs = waitS * 1000;
  return { connectionTimeoutMillis: waitMs, query_timeout: waitMs, keepAlive: true, keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS };
}

/** PostgreSQL's `statement_timeout` and `lock_timeout` for `DATABASE_WAIT_S` = `waitS`: half a second sooner (at least half of it), ms. */
export function serverTimeoutMs(waitS: number): number {
  const waitMs = waitS * 1000;
  return Math.max(waitMs - SERVER_MARGIN_MS, waitMs / 2);
}

/** Sets the session's `statement_timeout` and `lock_timeout` to `$1` ms (text). */
const SET_TIMEOUTS = "select set_config('statement_timeout', $1, false), set_config('lock_timeout', $1, false)";

/**
 * The pool's `onConnect` hook that sets PostgreSQL's `statement_timeout` and `lock_timeout` to `ms`
 * on each new connection before pg-pool hands it out: a statement past it is cancelled by the
 * server (SQLSTATE 57014), a lock wait past it given up (55P03), the transaction rolls back and the
 * connection stays usable (docs/operations.md "Database waits"). Set per connection rather than as
 * start-up parameters, which PgBouncer refuses; never behind a transaction pooler, where a session
 * setting would stay on a server connection other clients get. A connection the setting fails on
 * is ended and its request gets the error.
 */
export function serverTimeoutsOnConnect(ms: number): (client: pg.ClientBase) => Promise<void> {
  return async (client) => {
    await client.query(SET_TIMEOUTS, [String(ms)]);
  };
}

/** A `pg` error of a statement the driver gave up on (`query_timeout`): the server may still be running it. */
function isReadTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === "Query read timeout";
}

/**
 * Ends each connection of `pool` as soon as one of its statements passes the driver's
 * `query_timeout` (docs/operations.md "Database waits"): node-postgres keeps such a statement as
 * the connection's active one, so every later statement (the transaction's ROLLBACK included)
 * would queue behind an answer that may never come. Ended, the ROLLBACK fails at once, the holder
 * releases the connection with that error (or {@link releaseDeadConnections} does) and the pool
 * destroys it instead of reusing it.
 */
export function endClientsOnReadTimeout(pool: pg.Pool): void {
  pool.on("connect", (client) => {
    // the class's query, looked up at each call (not bound once): what the class has then is what runs
    const query = (...args: unknown[]): unknown => (Object.getPrototypeOf(client) as { query: (...a: unknown[]) => unknown }).query.apply(client, args);
    const ended = (error: unknown): void => {
      if (isReadTimeout(error)) client.end().catch(() => {});
    };
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]): unknown => {
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback === "function") {
        args[last] = (error: unknown, result: unknown): void => {
          ended(error);
          (callback as (error: unknown, result: unknown) => void)(error, result);
        };
        return query(...args);
      }
      const result = query(...args);
      if (result instanceof Promise) result.catch(ended);
      return result;
    };
  });
}

/** How the ORM's pool bounds its waits: `DATABASE_WAIT_S`, and whether PostgreSQL's own timeouts are set on its sessions (not behind a transaction pooler). */
export interface DatabaseWait {
  waitS: number;
  serverSettings: boolean;
}

/**
 * The ORM configuration for a PostgreSQL connection URL and the service's `entities`; with `wait`,
 * the pool bounds every wait ({@link boundedWaitOptions}), without it (scripts, the migrations) nothing is bounded.
 */
export function ormConfig(clientUrl: string, entities: EntityList, overrides: Partial<Options> = {}, wait?: DatabaseWait): Options {
  const onPoolCreated = (pool: pg.Pool): void => {
    releaseDeadConnections(pool);
    if (wait) endClientsOnReadTimeout(pool);
  };
  const bounds = wait && {
    ...boundedWaitOptions(wait.waitS),
    ...(wait.serverSettings && { onConnect: serverTimeoutsOnConnect(serverTimeoutMs(wait.waitS)) }),
  };
  return defineConfig({
    clientUrl,
    entities,
    extensions: [Migrator],
    migrations: { migrationsList, transactional: true, allOrNothing: true, snapshot: false, silent: true },
    pool: { min: 0, max: 10 },
    driverOptions: { onPoolCreated, ...bounds },
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
 * and the others then find none. The migrations run on a pool of their own without `wait`'s bounds
 * (a migration may take minutes: docs/operations.md "Database waits"), closed before the ORM's pool opens.
 * @param sessionUrl a direct connection to the same database for that lock (`DATABASE_SESSION_URL`:
 *   a session lock cannot live behind a transaction pooler); default `clientUrl`.
 * @param wait the bounds of the returned ORM's pool (`DATABASE_WAIT_S`); none when absent.
 * @throws the driver's connection error when the database is unreachable.
 */
export async function initORM(clientUrl: string, entities: EntityList, sessionUrl: string = clientUrl, wait?: DatabaseWait): Promise<MikroORM> {
  await migrate(clientUrl, sessionUrl);
  const orm = await MikroORM.init(ormConfig(clientUrl, entities, {}, wait));
  try {
    await orm.connect();
  } catch (error) {
    await orm.close(true).catch(() => {});
    throw error;
  }
  return orm;
}

/** Applies the pending migrations under {@link MIGRATIONS_LOCK_KEY}, on an ORM of their own (raw SQL: no entity). */
async function migrate(clientUrl: string, sessionUrl: string): Promise<void> {
  const orm = await MikroORM.init(ormConfig(clientUrl, [], { discovery: { warnWhenNoEntities: false } }));
  const lock = new pg.Client({ connectionString: sessionUrl });
  try {
    await orm.connect();
    await lock.connect();
    await lock.query("select pg_advisory_lock($1)", [MIGRATIONS_LOCK_KEY]);
    await orm.migrator.up();
  } finally {
    await lock.query("select pg_advisory_unlock($1)", [MIGRATIONS_LOCK_KEY]).catch(() => {});
    await lock.end().catch(() => {});
    await orm.close(true).catch(() => {});
  }
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

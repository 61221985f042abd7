/**
 * How the outbox's repository builds a channel's statements (docs/architecture.md "Reaching the
 * database"): once per channel object, from the channel's fixed identifiers (its table, columns,
 * stream and claim condition; src/modules/outbox/channel.ts), never per message. Values are always
 * `$n` parameters; {@link Params} numbers them by name so that a statement's text and its values
 * cannot drift apart.
 */
import type { PreparedStatement } from "../../../db/sql.js";
import type { OutboxChannel } from "../channel.js";

/**
 * A builder of `$n` placeholders by name: `ref("id")` is `$1` the first time and every time after,
 * so a value used twice in a text is bound once.
 */
export class Params {
  private readonly names: string[] = [];

  /** The placeholder of value `name` (`$n`). */
  ref(name: string): string {
    let at = this.names.indexOf(name);
    if (at < 0) at = this.names.push(name) - 1;
    return `$${at + 1}`;
  }

  /** The statement `name`/`text` and how to bind its values from named arguments. */
  bind<A extends object>(name: string, text: string): Bound<A> {
    const names = [...this.names];
    return {
      statement: { name, text },
      values: (args: A) => names.map((n) => {
        if (!(n in args)) throw new Error(`statement ${name}: no value for ${n}`);
        return (args as Record<string, unknown>)[n];
      }),
    };
  }
}

/** A statement and its values from named arguments (`A`). */
export interface Bound<A extends object> {
  statement: PreparedStatement;
  values(args: A): unknown[];
}

/**
 * `build` memoised per channel object: the statements of a channel are built at its first use and
 * kept as long as the channel (the services make each channel once, when they are constructed).
 */
export function perChannel<T>(build: (channel: OutboxChannel<unknown>) => T): <M>(channel: OutboxChannel<M>) => T {
  const built = new WeakMap<object, T>();
  return <M>(channel: OutboxChannel<M>): T => {
    let value = built.get(channel);
    if (value === undefined) {
      value = build(channel as OutboxChannel<unknown>);
      built.set(channel, value);
    }
    return value;
  };
}

/** The statement name of `what` for `channel`: `outbox_<channel>_<what>` (unique: channel names are). */
export const statementName = (channel: { name: string }, what: string): string => `outbox_${channel.name}_${what}`;

/** SQL of a due-now `next_attempt_at`: null where null is due (credit), else now(). */
export const dueNow = (channel: OutboxChannel<unknown>): string => (channel.table.nullIsDue ? "null" : "now()");

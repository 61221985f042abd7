/**
 * The insert trigger that orders a stream channel's messages (docs/outbox.md "Order within a
 * stream"): a message written while an earlier message of its stream is pending gets
 * `next_attempt_at` = `WAITING_AT` (src/domain/outbox.ts), so only a stream's head is ever due and
 * the claim's index scan never walks a stream's later messages. The trigger first locks the
 * stream's current head (`FOR NO KEY UPDATE`): a delivery ending that head at the same time either
 * commits first (the new message is then the head, due as written) or waits for the writer's commit
 * and then makes the new message due (src/modules/outbox/outbox.ts `deliver`, ./record.ts `promoteNext`). Writers need not
 * know: they insert rows without the delivery columns.
 */
import { WAITING_AT } from "../../../domain/outbox.js";
import type { StreamOrder } from "../channel.js";

/** Name of the trigger (and of its function) of `table`. */
export const streamOrderTriggerName = (table: string): string => `${table}_outbox_order`;

/**
 * The DDL of the ordering trigger of a stream channel's table: its function, then the `before
 * insert … for each row` trigger. The entity of the table declares it (MikroORM `triggers`, as a
 * raw `expression`) and a migration creates it (migration 20261126040000 for `credit_event`).
 * @param table the channel's table (a fixed SQL identifier).
 * @param stream the stream's key and order columns.
 * @param status the table's status column (pending value `pending`).
 */
export function streamOrderTriggerDdl(table: string, stream: StreamOrder, status: string): string {
  const name = streamOrderTriggerName(table);
  return `create or replace function "${name}"() returns trigger language plpgsql as $$
      begin
        if new.${status} = 'pending' then
          perform 1 from ${table} p
            where p.${stream.key} = new.${stream.key} and p.${status} = 'pending' and p.${stream.order} < new.${stream.order}
            order by p.${stream.order} limit 1
            for no key update;
          if found then
            new.next_attempt_at := '${WAITING_AT.toISOString()}';
          end if;
        end if;
        return new;
      end $$;
create trigger "${name}" before insert on "${table}" for each row execute function "${name}"();`;
}

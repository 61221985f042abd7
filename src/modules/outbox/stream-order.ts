/**
 * The ordering trigger of a stream channel's table now lives in the outbox's repository
 * (./repository/stream-order.ts); this re-export keeps the entities that declare it
 * (src/modules/credit/accounts/entities.ts) working until they import it from there.
 */
export { streamOrderTriggerDdl, streamOrderTriggerName } from "./repository/stream-order.js";

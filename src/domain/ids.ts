/** Identifier formats the service checks before touching the database (ids are stored lower-case). */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** Whether `value` is a UUID of any version (case-insensitive). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** Whether `value` is a UUID v4 (case-insensitive): user ids, trace ids of the credit core. */
export function isUuidV4(value: string): boolean {
  return UUID_V4.test(value);
}

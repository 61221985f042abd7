/**
 * The identity module's statements (docs/architecture.md "Reaching the database"), on its tables
 * `credential`, `customer` and `service_setting` (src/modules/identity/entities.ts): the
 * authentication statements of the hot path (docs/performance.md "What keeps the request path
 * cheap"; {@link USER_TOKEN} also reads the users module's `app_user`), the service settings the
 * start-up reads and writes (src/modules/identity/bootstrap.ts), the insert of a credential, and
 * whether a customer is active. Every statement that carries a secret's hash binds it as a
 * parameter, so the hash never appears in SQL text (server logs, `pg_stat_activity`).
 *
 * The plain CRUD of customers and credentials (create, read, update, list, revoke, soft-delete)
 * stays with MikroORM's unit of work in src/modules/identity/service.ts: it carries no secret.
 */
import type { PreparedStatement, Sql, Tx } from "../../db/sql.js";

// --- authentication (src/modules/identity/auth.ts) ---------------------------------------------

/** Status of a credential and its customer, as {@link CREDENTIAL_BY_HASH} and {@link CREDENTIAL_BY_ID} return it. */
export interface CredentialRow {
  credential_id: string;
  customer_id: string;
  credential_active: boolean;
  /** Null when the customer row is missing. */
  customer_active: boolean | null;
}

/** The columns of a {@link CredentialRow}, from `credential c` joined to its customer `cu` (a constant fragment). */
const CREDENTIAL_SELECT = `select c.credential_id, c.customer_id, c.is_active as credential_active, cu.is_active as customer_active
           from credential c left join customer cu on cu.customer_id = c.customer_id`;

/** A credential by its secret's keyed hash `$1` (an owner API key, or a customer secret opening a session). At most one row. */
export const CREDENTIAL_BY_HASH: PreparedStatement = {
  name: "identity_credential_by_hash",
  text: `${CREDENTIAL_SELECT}
          where c.secret_hash = $1`,
};

/** A credential by id `$1` (the credential a customer session or a user token names; a UUID). At most one row. */
export const CREDENTIAL_BY_ID: PreparedStatement = {
  name: "identity_credential_by_id",
  text: `${CREDENTIAL_SELECT}
          where c.credential_id = $1`,
};

/** {@link CredentialRow} plus the token's user (null columns when the user row is missing). */
export interface UserTokenRow extends CredentialRow {
  user_exists: boolean;
  user_deleted: boolean | null;
  user_active: boolean | null;
  user_status: string | null;
  /** Whether the token's version is no longer the user's `token_version` (a deactivation came after its issue). */
  token_revoked: boolean | null;
}

/**
 * A user token's credential, customer and user (the users module's `app_user`) in one statement.
 * `$1` credential id, `$2` user id, `$3` the token's customer id, `$4` the token's version (an
 * integer; 0 when the token carries none). Revocation compares versions, not instants: a
 * deactivation bumps the user's `token_version`, so a token issued in the same second after a
 * re-activation still works (docs/security.md "Tokens and rate-limit headers").
 */
export const USER_TOKEN: PreparedStatement = {
  name: "identity_user_token",
  text: `select c.credential_id, c.customer_id, c.is_active as credential_active, cu.is_active as customer_active,
                u.user_id is not null as user_exists, u.deleted_at is not null as user_deleted, u.is_active as user_active,
                u.status as user_status,
                u.token_version <> $4::integer as token_revoked
           from credential c
           left join customer cu on cu.customer_id = c.customer_id
           left join app_user u on u.user_id = $2::uuid and u.customer_id = $3
          where c.credential_id = $1::uuid`,
};

/** The credential of keyed hash `secretHash` with its customer's status, or undefined. @throws the driver's error. */
export async function credentialByHash(sql: Sql, secretHash: string): Promise<CredentialRow | undefined> {
  return (await sql.rows<CredentialRow>(CREDENTIAL_BY_HASH, [secretHash]))[0];
}

/** The credential `credentialId` (a UUID) with its customer's status, or undefined. @throws the driver's error. */
export async function credentialById(sql: Sql, credentialId: string): Promise<CredentialRow | undefined> {
  return (await sql.rows<CredentialRow>(CREDENTIAL_BY_ID, [credentialId]))[0];
}

/**
 * What a user token's statement ({@link USER_TOKEN}) reads: credential `credentialId` and user
 * `userId` (both UUIDs) of customer `customerId`, compared with token version `tokenVersion`
 * (0…2^31 − 1); undefined when there is no such credential. @throws the driver's error.
 */
export async function userTokenStatus(sql: Sql, credentialId: string, userId: string, customerId: string, tokenVersion: number): Promise<UserTokenRow | undefined> {
  return (await sql.rows<UserTokenRow>(USER_TOKEN, [credentialId, userId, customerId, tokenVersion]))[0];
}

// --- service settings (src/modules/identity/bootstrap.ts) ---------------------------------------

/** The value of setting `$1`. At most one row. */
export const SETTING_VALUE: PreparedStatement = {
  name: "identity_setting_value",
  text: `select value from service_setting where key = $1`,
};

/** Deletes setting `$1`, returning its key when there was one. */
export const DELETE_SETTING: PreparedStatement = {
  name: "identity_setting_delete",
  text: `delete from service_setting where key = $1 returning key`,
};

/** Inserts setting `$1` = `$2` unless the key has a row (race-safe across replicas), returning the key when inserted. */
export const INSERT_SETTING_IF_ABSENT: PreparedStatement = {
  name: "identity_setting_insert_if_absent",
  text: `insert into service_setting (key, value, created_at) values ($1, $2, now()) on conflict (key) do nothing returning key`,
};

/** Sets setting `$1` = `$2`, inserted or replaced. */
export const UPSERT_SETTING: PreparedStatement = {
  name: "identity_setting_upsert",
  text: `insert into service_setting (key, value, created_at) values ($1, $2, now()) on conflict (key) do update set value = excluded.value`,
};

/** The value of setting `key`, or undefined when it has no row. @throws the driver's error. */
export async function settingValue(sql: Sql, key: string): Promise<string | undefined> {
  return (await sql.rows<{ value: string }>(SETTING_VALUE, [key]))[0]?.value;
}

/** Deletes setting `key`. @returns whether a row was deleted. @throws the driver's error. */
export async function deleteSetting(sql: Sql, key: string): Promise<boolean> {
  return (await sql.run(DELETE_SETTING, [key])) > 0;
}

/**
 * Inserts `key` = `value` unless the key has a row (race-safe across replicas), the value bound
 * (a secret's hash never appears in SQL text).
 * @returns whether this call inserted it. @throws the driver's error.
 */
export async function insertSettingIfAbsent(sql: Sql, key: string, value: string): Promise<boolean> {
  return (await sql.rows<{ key: string }>(INSERT_SETTING_IF_ABSENT, [key, value])).length > 0;
}

/** Sets `key` = `value`, inserted or replaced, the value bound. @throws the driver's error. */
export async function upsertSetting(sql: Sql, key: string, value: string): Promise<void> {
  await sql.run(UPSERT_SETTING, [key, value]);
}

// --- credentials (src/modules/identity/service.ts) ----------------------------------------------

/** An owner credential to insert: its id, customer, the secret's keyed hash and display prefix, and the holder. */
export interface NewOwnerCredential {
  credentialId: string;
  customerId: string;
  secretHash: string;
  secretPrefix: string;
  userEmail: string;
  userName: string;
}

/**
 * Inserts an active owner credential: `$1` credential id, `$2` customer id, `$3` the secret's keyed
 * hash, `$4` its display prefix, `$5` holder's email, `$6` holder's name.
 */
export const INSERT_OWNER_CREDENTIAL: PreparedStatement = {
  name: "identity_credential_insert_owner",
  text: `insert into credential (credential_id, customer_id, secret_hash, secret_prefix, is_owner, user_email, user_name, is_active, revoked_at, created_at, updated_at)
       values ($1, $2, $3, $4, true, $5, $6, true, null, now(), now())`,
};

/** Inserts an active owner credential, the secret's hash bound (never in SQL text). @throws the driver's error (a duplicate hash: unique violation). */
export async function insertOwnerCredential(sql: Sql, c: NewOwnerCredential): Promise<void> {
  await sql.run(INSERT_OWNER_CREDENTIAL, [c.credentialId, c.customerId, c.secretHash, c.secretPrefix, c.userEmail, c.userName]);
}

// --- customers ---------------------------------------------------------------------------------

/** Whether customer `$1` is active: one row (`is_active`) when it exists. */
export const CUSTOMER_IS_ACTIVE: PreparedStatement = {
  name: "identity_customer_is_active",
  text: `select is_active from customer where customer_id = $1`,
};

/**
 * Whether customer `customerId` exists and is active: one indexed read, for a module that stops
 * serving a deactivated tenant and reads nothing else with it (the outbox channels join `customer`
 * in their claim statements instead: docs/outbox.md "Channels"). @throws the driver's error.
 */
export async function customerIsActive(sql: Sql, customerId: string): Promise<boolean> {
  const [customer] = await sql.rows<{ is_active: boolean }>(CUSTOMER_IS_ACTIVE, [customerId]);
  return customer?.is_active === true;
}

// --- revocations (src/modules/identity/service.ts, src/modules/users/service.ts) ------------------

/**
 * Soft-deletes customer `$1` if it is active: inactive, `INACTIVE`, `deleted_at` now; returns its
 * id when it was (no row: unknown or already deleted).
 */
export const SOFT_DELETE_CUSTOMER: PreparedStatement = {
  name: "identity_customer_soft_delete",
  text: `update customer set is_active = false, status = 'INACTIVE', deleted_at = now(), updated_at = now()
          where customer_id = $1 and is_active
      returning customer_id`,
};

/** Revokes every active credential of customer `$1` (`revoked_at` now). */
export const REVOKE_CUSTOMER_CREDENTIALS: PreparedStatement = {
  name: "identity_credential_revoke_all",
  text: `update credential set is_active = false, revoked_at = now(), updated_at = now() where customer_id = $1 and is_active`,
};

/** Revokes credential `$1` (a UUID) of customer `$2` if it is active (`revoked_at` now). */
export const REVOKE_CREDENTIAL: PreparedStatement = {
  name: "identity_credential_revoke",
  text: `update credential set is_active = false, revoked_at = now(), updated_at = now()
          where credential_id = $1::uuid and customer_id = $2 and is_active`,
};

/**
 * Sends payload `$2` on channel `$1` when the transaction commits (PostgreSQL delivers a NOTIFY
 * only then, and never for a rollback): the revocation notice every process's credential cache
 * listens to (src/modules/identity/credential-cache.ts).
 */
export const NOTIFY: PreparedStatement = {
  name: "identity_notify",
  text: `select pg_notify($1, $2)`,
};

/** Soft-deletes customer `customerId` and revokes its credentials in `tx`. @returns false when it was not an active customer (nothing written). @throws the driver's error. */
export async function softDeleteCustomer(tx: Tx, customerId: string): Promise<boolean> {
  if ((await tx.rows(SOFT_DELETE_CUSTOMER, [customerId])).length === 0) return false;
  await tx.run(REVOKE_CUSTOMER_CREDENTIALS, [customerId]);
  return true;
}

/** Revokes credential `credentialId` (a UUID) of `customerId` in `tx`. @returns whether it was active. @throws the driver's error. */
export async function revokeCredential(tx: Tx, credentialId: string, customerId: string): Promise<boolean> {
  return (await tx.run(REVOKE_CREDENTIAL, [credentialId, customerId])) > 0;
}

/** Sends `payload` on `channel` from `tx`, delivered when `tx` commits. @throws the driver's error. */
export async function notify(tx: Tx, channel: string, payload: string): Promise<void> {
  await tx.rows(NOTIFY, [channel, payload]);
}

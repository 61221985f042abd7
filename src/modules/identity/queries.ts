/**
 * The identity module's SQL: the authentication statements of the hot path (prepared, docs/performance.md "What keeps the request path cheap"),
 * the service settings the start-up reads and writes, the insert of a credential, and whether a
 * customer is active. Every
 * statement that carries a secret's hash binds it as a parameter, so the hash never appears in SQL
 * text (server logs, `pg_stat_activity`; src/db/statements.ts).
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { boundQuery } from "../../db/statements.js";
import type { PreparedStatement } from "../../db/sql.js";

// --- authentication (src/modules/identity/auth.ts) ---------------------------------------------

/** Status of a credential and its customer, as {@link CREDENTIAL_BY_HASH} and {@link CREDENTIAL_BY_ID} return it. */
export interface CredentialRow {
  credential_id: string;
  customer_id: string;
  credential_active: boolean;
  /** Null when the customer row is missing. */
  customer_active: boolean | null;
}

/** The columns of a {@link CredentialRow}, from `credential c` joined to its customer `cu`. */
const CREDENTIAL_SELECT = `select c.credential_id, c.customer_id, c.is_active as credential_active, cu.is_active as customer_active
           from credential c left join customer cu on cu.customer_id = c.customer_id`;

/** A credential by its secret's keyed hash (an owner API key, or a customer secret opening a session). */
export const CREDENTIAL_BY_HASH: PreparedStatement = {
  name: "auth_credential_by_hash",
  text: `${CREDENTIAL_SELECT}
          where c.secret_hash = $1`,
};

/** A credential by id (the credential a customer session or a user token names). */
export const CREDENTIAL_BY_ID: PreparedStatement = {
  name: "auth_credential_by_id",
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
 * A user token's credential, customer and user in one statement. `$1` credential id, `$2` user id,
 * `$3` the token's customer id, `$4` the token's version (an integer; 0 when the token carries
 * none). Revocation compares versions, not instants: a deactivation bumps the user's
 * `token_version`, so a token issued in the same second after a re-activation still works
 * (docs/security.md "Tokens and rate-limit headers").
 */
export const USER_TOKEN: PreparedStatement = {
  name: "auth_user_token",
  text: `select c.credential_id, c.customer_id, c.is_active as credential_active, cu.is_active as customer_active,
                u.user_id is not null as user_exists, u.deleted_at is not null as user_deleted, u.is_active as user_active,
                u.status as user_status,
                u.token_version <> $4::integer as token_revoked
           from credential c
           left join customer cu on cu.customer_id = c.customer_id
           left join app_user u on u.user_id = $2::uuid and u.customer_id = $3
          where c.credential_id = $1::uuid`,
};

// --- service settings (src/modules/identity/bootstrap.ts) ---------------------------------------

/** The value of setting `key`, or undefined when it has no row. */
export async function settingValue(em: EntityManager, key: string): Promise<string | undefined> {
  const rows = await em.getConnection().execute<{ value: string }[]>(`select value from service_setting where key = ?`, [key]);
  return rows[0]?.value;
}

/** Deletes setting `key`. @returns whether a row was deleted. */
export async function deleteSetting(em: EntityManager, key: string): Promise<boolean> {
  const deleted = await em.getConnection().execute<{ key: string }[]>(`delete from service_setting where key = ? returning key`, [key]);
  return deleted.length > 0;
}

/**
 * Inserts `key` = `value` unless the key has a row (race-safe across replicas), with bound
 * parameters. Runs outside any transaction of `em` (src/db/statements.ts `boundQuery`).
 * @returns whether this call inserted it.
 */
export async function insertSettingIfAbsent(em: EntityManager, key: string, value: string): Promise<boolean> {
  const rows = await boundQuery<{ key: string }>(
    em,
    `insert into service_setting (key, value, created_at) values ($1, $2, now()) on conflict (key) do nothing returning key`,
    [key, value],
  );
  return rows.length > 0;
}

/** Sets `key` = `value`, inserted or replaced, with bound parameters (outside any transaction of `em`). */
export async function upsertSetting(em: EntityManager, key: string, value: string): Promise<void> {
  await boundQuery(
    em,
    `insert into service_setting (key, value, created_at) values ($1, $2, now()) on conflict (key) do update set value = excluded.value`,
    [key, value],
  );
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
 * Inserts an active owner credential with bound parameters, outside any transaction of `em`
 * (MikroORM inlines values, and the secret's hash must not appear in SQL text).
 */
export async function insertOwnerCredential(em: EntityManager, c: NewOwnerCredential): Promise<void> {
  await boundQuery(
    em,
    `insert into credential (credential_id, customer_id, secret_hash, secret_prefix, is_owner, user_email, user_name, is_active, revoked_at, created_at, updated_at)
       values ($1, $2, $3, $4, true, $5, $6, true, null, now(), now())`,
    [c.credentialId, c.customerId, c.secretHash, c.secretPrefix, c.userEmail, c.userName],
  );
}

// --- customers ---------------------------------------------------------------------------------

/**
 * Whether customer `customerId` exists and is active: one indexed read, for the outbox channels
 * that stop delivering to a deactivated tenant (docs/outbox.md "Channels").
 */
export async function customerIsActive(em: EntityManager, customerId: string): Promise<boolean> {
  const [customer] = await em.execute<{ is_active: boolean }[]>(`select is_active from customer where customer_id = ?`, [customerId]);
  return customer?.is_active === true;
}

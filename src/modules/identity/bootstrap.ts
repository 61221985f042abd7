/**
 * Start-up of the identity secrets (docs/decisions/credentials-and-tokens.md "Secrets at rest"):
 * - the secrets key: `SECRETS_KEY`, or (embedded PostgreSQL only: src/config.ts refuses
 *   `DATABASE_URL` without `SECRETS_KEY`) one generated on first start and kept in the file
 *   `DATA_DIR/secrets.key` (mode 0600), never in the database, so a dump of the database gives
 *   neither the token signing key nor the key of the withdrawal codes' keyed hashes. Installs of
 *   earlier versions kept it in `service_setting` (key `secrets_key`): that row is moved to the
 *   file and deleted on the first start of this version, so issued tokens and stored hashes stay
 *   valid; with `SECRETS_KEY` set the row is deleted;
 * - the master key: `MASTER_API_KEY`, or one generated on first start whose keyed hash alone is
 *   stored; the clear key is returned once so the caller can print it.
 */
import { randomBytes } from "node:crypto";
import type { Sql } from "../../db/sql.js";
import { SecretBox, generateMasterKey } from "./secrets.js";
import { SecretFileError, readSecretFile, writeSecretFileIfAbsent } from "../../db/secret-file.js";
import { deleteSetting, insertSettingIfAbsent, settingValue, upsertSetting } from "./repository.js";

/** Key of the row where earlier versions kept the generated secrets key (now in a file under `DATA_DIR`). */
export const LEGACY_SECRETS_KEY_ROW = "secrets_key";
const MASTER_KEY_HASH = "master_key_hash";
/** Shortest secrets key accepted, in characters (the same bound as `SECRETS_KEY`). */
const MIN_SECRETS_KEY = 32;

/** What start-up produced: the secret box, the master key's hash, and a generated master key to print once. */
export interface IdentitySecrets {
  box: SecretBox;
  masterHash: string;
  /** Set only on the start that generated the master key. */
  generatedMasterKey?: string;
  /** Where the secrets key came from: `SECRETS_KEY`, the key file as it was, or a key file this start created. */
  secretsKeySource: "env" | "file" | "file-created";
  /** What happened to a legacy `secrets_key` row: none found, moved to the key file, or deleted (`SECRETS_KEY` set). */
  legacyRow: "none" | "moved" | "deleted";
}

/**
 * The secrets key when `SECRETS_KEY` is unset: the key file, created on first use with a fresh
 * random key (48 bytes, base64url) or with the value of a legacy `secrets_key` row.
 * @throws SecretFileError when the file's mode is wider than 0600, it is unreadable or too short,
 *   or it holds another key than the legacy row (the file was replaced: refuse rather than
 *   invalidate every stored hash).
 */
async function keyFromFile(sql: Sql, file: string): Promise<{ key: string; created: boolean; legacy: boolean }> {
  const legacy = await settingValue(sql, LEGACY_SECRETS_KEY_ROW);
  let created = false;
  if (readSecretFile(file, MIN_SECRETS_KEY) === undefined) {
    created = writeSecretFileIfAbsent(file, legacy ?? randomBytes(48).toString("base64url"));
  }
  const key = readSecretFile(file, MIN_SECRETS_KEY) as string;
  if (legacy !== undefined) {
    if (legacy !== key) {
      throw new SecretFileError(
        `${file} holds another key than the secrets_key row of service_setting (kept by an earlier version); remove the file to move the row's key into it, or delete the row to keep the file's key`,
      );
    }
    await deleteSetting(sql, LEGACY_SECRETS_KEY_ROW);
  }
  return { key, created, legacy: legacy !== undefined };
}

/** Inserts `key` = `value` unless present; returns the stored value (race-safe across replicas). */
async function insertIfAbsent(sql: Sql, key: string, value: string): Promise<{ value: string; inserted: boolean }> {
  if (await insertSettingIfAbsent(sql, key, value)) return { value, inserted: true };
  const existing = await settingValue(sql, key);
  if (existing === undefined) throw new Error(`the service setting ${key} was neither inserted nor found`);
  return { value: existing, inserted: false };
}

/**
 * Loads or creates the secrets key and the master key hash, reading and writing `service_setting`
 * through the statements of ./repository.ts on `sql` (the pool: each statement on its own).
 * @param config.secretsKey `SECRETS_KEY`; when set, a legacy `secrets_key` row is deleted.
 * @param config.secretsKeyFile the key file to use when `secretsKey` is unset (`DATA_DIR/secrets.key`).
 * @throws SecretFileError when the key file cannot be used (see {@link readSecretFile}); Error when
 *   neither `secretsKey` nor `secretsKeyFile` is given.
 */
export async function bootstrapIdentitySecrets(
  sql: Sql,
  config: { secretsKey: string | undefined; masterApiKey: string | undefined; secretsKeyFile?: string },
): Promise<IdentitySecrets> {
  let secretsKey: string;
  let secretsKeySource: IdentitySecrets["secretsKeySource"] = "env";
  let legacyRow: IdentitySecrets["legacyRow"] = "none";
  if (config.secretsKey !== undefined) {
    secretsKey = config.secretsKey;
    if (await deleteSetting(sql, LEGACY_SECRETS_KEY_ROW)) legacyRow = "deleted";
  } else if (config.secretsKeyFile !== undefined) {
    const fromFile = await keyFromFile(sql, config.secretsKeyFile);
    secretsKey = fromFile.key;
    secretsKeySource = fromFile.created ? "file-created" : "file";
    if (fromFile.legacy) legacyRow = "moved";
  } else {
    throw new Error("no secrets key: set SECRETS_KEY (at least 32 characters)");
  }
  const box = new SecretBox(secretsKey);
  const common = { box, secretsKeySource, legacyRow };
  if (config.masterApiKey) {
    const masterHash = box.hash(config.masterApiKey);
    // Bound parameters: the master key's hash never appears in SQL text (./repository.ts).
    await upsertSetting(sql, MASTER_KEY_HASH, masterHash);
    return { ...common, masterHash };
  }
  const candidate = generateMasterKey();
  const stored = await insertIfAbsent(sql, MASTER_KEY_HASH, box.hash(candidate));
  return stored.inserted ? { ...common, masterHash: stored.value, generatedMasterKey: candidate } : { ...common, masterHash: stored.value };
}

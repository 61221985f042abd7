/**
 * Start-up of the identity secrets (decisions.md §2):
 * - the secrets key: `SECRETS_KEY`, or one generated on first start and kept in `service_setting`
 *   (shared by every replica on the same database; set `SECRETS_KEY` in production);
 * - the master key: `MASTER_API_KEY`, or one generated on first start whose keyed hash alone is
 *   stored; the clear key is returned once so the caller can print it.
 */
import { randomBytes } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import { ServiceSetting } from "./entities.js";
import { SecretBox, generateMasterKey } from "./secrets.js";

const SECRETS_KEY = "secrets_key";
const MASTER_KEY_HASH = "master_key_hash";

/** What start-up produced: the secret box, the master key's hash, and a generated master key to print once. */
export interface IdentitySecrets {
  box: SecretBox;
  masterHash: string;
  /** Set only on the start that generated the master key. */
  generatedMasterKey?: string;
}

/** Inserts `key` = `value` unless present; returns the stored value (race-safe across replicas). */
async function insertIfAbsent(em: EntityManager, key: string, value: string): Promise<{ value: string; inserted: boolean }> {
  const rows = await em.getConnection().execute<{ key: string }[]>(
    `insert into service_setting (key, value, created_at) values (?, ?, now()) on conflict (key) do nothing returning key`,
    [key, value],
  );
  if (rows.length > 0) return { value, inserted: true };
  const existing = await em.findOneOrFail(ServiceSetting, { key });
  return { value: existing.value, inserted: false };
}

/** Loads or creates the secrets key and the master key hash. */
export async function bootstrapIdentitySecrets(
  em: EntityManager,
  config: { secretsKey: string | undefined; masterApiKey: string | undefined },
): Promise<IdentitySecrets> {
  const secretsKey = config.secretsKey ?? (await insertIfAbsent(em, SECRETS_KEY, randomBytes(48).toString("base64url"))).value;
  const box = new SecretBox(secretsKey);
  if (config.masterApiKey) {
    const masterHash = box.hash(config.masterApiKey);
    await em.getConnection().execute(
      `insert into service_setting (key, value, created_at) values (?, ?, now()) on conflict (key) do update set value = excluded.value`,
      [MASTER_KEY_HASH, masterHash],
    );
    return { box, masterHash };
  }
  const candidate = generateMasterKey();
  const stored = await insertIfAbsent(em, MASTER_KEY_HASH, box.hash(candidate));
  return stored.inserted ? { box, masterHash: stored.value, generatedMasterKey: candidate } : { box, masterHash: stored.value };
}

/**
 * Secret files under `DATA_DIR` (docs/decisions/credentials-and-tokens.md "Secrets at rest"): the generated secrets key
 * (`secrets.key`) and the embedded PostgreSQL's password (`pg-password`). Each is one line, mode
 * 0600, owned by the service's user, and created atomically (written to a temporary name, then
 * hard-linked into place, so a reader never sees a half-written file and two starts racing on one
 * data directory end with the same content). Used by src/db/embedded.ts and, as a port of the
 * infrastructure (eslint.config.js), by src/modules/identity/bootstrap.ts.
 */
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/** Raised when a secret file exists but cannot be used; the message names the file and the fix. */
export class SecretFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretFileError";
  }
}

/**
 * Reads a secret file written by {@link writeSecretFileIfAbsent}.
 * @param minLength shortest acceptable content, in characters (after trimming the line end).
 * @returns the content, or `undefined` when the file does not exist.
 * @throws SecretFileError when its mode gives any access to group or others (wider than 0600),
 *   when it cannot be read, or when it is shorter than `minLength`.
 */
export function readSecretFile(path: string, minLength: number): string | undefined {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new SecretFileError(`${path} cannot be read: ${(error as Error).message}`);
  }
  if ((mode & 0o077) !== 0) {
    throw new SecretFileError(`${path} has mode ${(mode & 0o777).toString(8).padStart(4, "0")}; it holds a secret and must be readable by its owner only: chmod 600 ${path}`);
  }
  let value: string;
  try {
    value = readFileSync(path, "utf8").trim();
  } catch (error) {
    throw new SecretFileError(`${path} cannot be read: ${(error as Error).message}`);
  }
  if (value.length < minLength) throw new SecretFileError(`${path} holds ${value.length} characters; at least ${minLength} are needed`);
  return value;
}

/**
 * Creates `path` with `value` (and a line end), mode 0600, unless it exists: the value is written
 * and synced under a temporary name in the same folder, then linked to `path` (link fails when
 * `path` exists, so an existing file is never replaced). Creates the folder when missing.
 * @returns `true` when this call created the file, `false` when it already existed.
 * @throws the file system's error (EACCES, ENOSPC…) as is.
 */
export function writeSecretFileIfAbsent(path: string, value: string): boolean {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  const fd = openSync(temporary, "wx", 0o600);
  try {
    writeSync(fd, `${value}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    unlinkSync(temporary);
  }
}

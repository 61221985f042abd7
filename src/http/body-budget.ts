/**
 * The bytes of request bodies one process holds while reading them (`MAX_BODY_BYTES_IN_FLIGHT`;
 * docs/security.md, "Bodies, connections and time"); src/http/json-body.ts `readJsonBody` reserves
 * from it. Each body reserves its declared length (the body limit when chunked) before its first
 * byte is read and gives it back once read, whatever the outcome. Only an authenticated request (or
 * one to an operation open to anyone) reserves anything: the surface reads no body before the
 * caller is admitted.
 *
 * One caller cannot starve the others: besides the whole budget, each reservation counts against
 * two shares (`MAX_BODY_BYTES_PER_CALLER`, by default {@link BODY_SHARE} of the budget), one of the
 * caller's credential and one of its client address. A body over either share is refused (429, the
 * caller's own doing); one that does not fit the whole budget is refused with 503 (the process is
 * busy with many callers' bodies). Both carry `Retry-After: 1` and close the connection before a
 * byte of the body is read. So 64 bodies stalled half-way by one key hold at most a quarter of the
 * budget, and another tenant's bodies still fit.
 */
export class BodyBudget {
  private used = 0;
  /** Bytes reserved now per share key (credential or address); a key is dropped when it reaches 0. */
  private readonly byKey = new Map<string, number>();

  /** Bytes one credential, or one client address, may hold at once. */
  readonly share: number;

  /**
   * @param bytes the bytes all bodies being read may hold together; 0 = no bound.
   * @param perCaller the bytes one credential or address may hold (`MAX_BODY_BYTES_PER_CALLER`); 0 =
   *   {@link BODY_SHARE} of `bytes`, at least `bodyLimitBytes` (one body at the limit always fits).
   * @param bodyLimitBytes the largest body (`BODY_LIMIT_BYTES`).
   */
  constructor(
    readonly bytes: number,
    perCaller = 0,
    bodyLimitBytes = 0,
  ) {
    this.share = perCaller > 0 ? perCaller : Math.min(bytes, Math.max(bodyLimitBytes, Math.floor(bytes * BODY_SHARE)));
  }

  /**
   * Reserves `n` bytes for a body of the callers named by `keys` (a credential key and an address
   * key). Nothing is reserved unless all fit.
   * @returns "ok"; "full" when the whole budget would be exceeded; otherwise "share" when one of
   *   `keys` would hold more than {@link share}.
   */
  take(n: number, keys: readonly string[] = []): "ok" | "share" | "full" {
    if (this.bytes > 0) {
      if (this.used + n > this.bytes) return "full";
      for (const key of keys) if ((this.byKey.get(key) ?? 0) + n > this.share) return "share";
    }
    this.used += n;
    for (const key of keys) this.byKey.set(key, (this.byKey.get(key) ?? 0) + n);
    return "ok";
  }

  /** Gives back `n` bytes reserved by {@link take} with the same `keys`. */
  give(n: number, keys: readonly string[] = []): void {
    this.used = Math.max(0, this.used - n);
    for (const key of keys) {
      const left = (this.byKey.get(key) ?? 0) - n;
      if (left > 0) this.byKey.set(key, left);
      else this.byKey.delete(key);
    }
  }

  /** Bytes reserved now. */
  get inFlight(): number {
    return this.used;
  }
}

/** The share of {@link BodyBudget} one credential, and one client address, may hold: a quarter. */
export const BODY_SHARE = 0.25;

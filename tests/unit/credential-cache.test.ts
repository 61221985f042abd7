/**
 * The credential cache's own rules (src/modules/identity/credential-cache.ts; docs/decisions/
 * credentials-and-tokens.md "The credential cache"), driven through its port with the states and
 * notices a LISTEN session delivers (tests/integration/credential-cache*.test.ts run them on the
 * real session): unused until the feed listens, emptied when it goes down or comes back, entries
 * re-verified once older than the bound, a revocation dropping exactly what it names, and a lookup
 * in flight across a notice not kept.
 */
import { describe, expect, it } from "vitest";
import { CredentialCache, parseRevocation, REVOCATION_CHANNEL, revocationPayload, type RevocationFeed } from "../../src/modules/identity/credential-cache.js";

type Subscriber = Parameters<RevocationFeed["subscribe"]>[1];

/** A feed as src/db/listen.ts drives its subscribers: `state(up)` and `notice(payload)` on the one channel. */
function feed(): RevocationFeed & { state(up: boolean): void; notice(payload: string): void } {
  let subscriber: Subscriber | undefined;
  return {
    subscribe(channel, s) {
      expect(channel).toBe(REVOCATION_CHANNEL);
      subscriber = s;
    },
    state: (up) => subscriber?.onState(up),
    notice: (payload) => subscriber?.onMessage(payload),
  };
}

const entry = (credentialId: string, customerId: string, userId?: string, verifiedAt = 1_000) => ({ value: credentialId, credentialId, customerId, ...(userId && { userId }), verifiedAt });

describe("the credential cache", () => {
  it("keeps nothing until its feed listens, and empties itself when the feed goes down or comes back", () => {
    const cache = new CredentialCache<string>(3000);
    const f = feed();
    cache.follow(f);
    cache.store("k", entry("c1", "cu1"), cache.generation);
    expect(cache.get("k", 1_000)).toBeUndefined();
    f.state(true);
    cache.store("k", entry("c1", "cu1"), cache.generation);
    expect(cache.get("k", 1_000)?.value).toBe("c1");
    f.state(false);
    expect(cache.size).toBe(0);
    expect(cache.active).toBe(false);
    cache.store("k", entry("c1", "cu1"), cache.generation);
    expect(cache.size).toBe(0);
    f.state(true);
    expect(cache.get("k", 1_000)).toBeUndefined();
  });

  it("re-verifies an entry once it is as old as the bound", () => {
    const cache = new CredentialCache<string>(3000);
    const f = feed();
    cache.follow(f);
    f.state(true);
    cache.store("k", entry("c1", "cu1", undefined, 10_000), cache.generation);
    expect(cache.get("k", 12_999)?.value).toBe("c1");
    expect(cache.get("k", 13_000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("drops what a revocation names and nothing else", () => {
    const cache = new CredentialCache<string>(3000);
    const f = feed();
    cache.follow(f);
    f.state(true);
    const fill = () => {
      for (const [key, e] of [["a", entry("c1", "cu1")], ["b", entry("c2", "cu1", "u1")], ["c", entry("c3", "cu2", "u2")]] as const) cache.store(key, e, cache.generation);
    };
    fill();
    f.notice(revocationPayload({ credential: "c1" }));
    expect([cache.get("a", 1_000), cache.get("b", 1_000)?.value, cache.get("c", 1_000)?.value]).toEqual([undefined, "c2", "c3"]);
    fill();
    f.notice(revocationPayload({ user: "u2" }));
    expect([cache.get("a", 1_000)?.value, cache.get("b", 1_000)?.value, cache.get("c", 1_000)]).toEqual(["c1", "c2", undefined]);
    fill();
    f.notice(revocationPayload({ customer: "cu1" }));
    expect([cache.get("a", 1_000), cache.get("b", 1_000), cache.get("c", 1_000)?.value]).toEqual([undefined, undefined, "c3"]);
    // a notice it cannot read empties the cache rather than being ignored
    f.notice("not json");
    expect(cache.size).toBe(0);
  });

  it("does not keep a lookup that was in flight when a notice arrived", () => {
    const cache = new CredentialCache<string>(3000);
    const f = feed();
    cache.follow(f);
    f.state(true);
    const before = cache.generation;
    f.notice(revocationPayload({ credential: "unrelated" }));
    cache.store("k", entry("c1", "cu1"), before);
    expect(cache.get("k", 1_000)).toBeUndefined();
    cache.store("k", entry("c1", "cu1"), cache.generation);
    expect(cache.get("k", 1_000)?.value).toBe("c1");
  });

  it("reads its payloads back", () => {
    expect(parseRevocation(revocationPayload({ customer: "cust-1" }))).toEqual({ customer: "cust-1" });
    expect(parseRevocation('{"other": 1}')).toBeNull();
    expect(parseRevocation("[")).toBeNull();
  });
});

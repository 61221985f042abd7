/**
 * The rules of wallet states (src/domain/wallet-states.ts; docs/decisions/customers-users-and-wallets.md
 * "Wallet states"), as tables: which movement each state refuses and with which code, and where
 * each state call leads from each state.
 */
import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { assertMovable, nextState, WALLET_STATUSES, type MovementDirection, type StateCall, type WalletState, type WalletStatus } from "../../src/domain/wallet-states.js";

const ID = "2c9d7e1f-3a4b-4c5d-8e6f-7a8b9c0d1e2f";

/** The code `fn` throws, or "ok". */
function outcome(fn: () => unknown): string {
  try {
    fn();
    return "ok";
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
}

describe("assertMovable: what each state lets through", () => {
  const table: [WalletStatus, MovementDirection, string][] = [
    ["ACTIVE", "out", "ok"],
    ["ACTIVE", "in", "ok"],
    ["LOCKED", "out", "WALLET_LOCKED"],
    ["LOCKED", "in", "ok"],
    ["SUSPENDED", "out", "WALLET_SUSPENDED"],
    ["SUSPENDED", "in", "WALLET_SUSPENDED"],
    ["INACTIVE", "out", "WALLET_INACTIVE"],
    ["INACTIVE", "in", "WALLET_INACTIVE"],
  ];
  it.each(table)("%s, money going %s → %s", (status, direction, expected) => {
    expect(outcome(() => assertMovable({ walletId: ID, status, statusReason: null }, direction))).toBe(expected);
  });

  it("names the wallet, the reason and the body field", () => {
    try {
      assertMovable({ walletId: ID, status: "LOCKED", statusReason: "Card lost" }, "out", "from_wallet_id");
      expect.unreachable("a locked wallet lets nothing out");
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).message).toContain(ID);
      expect((error as DomainError).message).toContain("Card lost");
      expect((error as DomainError).field).toBe("from_wallet_id");
    }
  });
});

describe("nextState: every call from every state", () => {
  const plain = (status: WalletStatus, statusReason: string | null = null): WalletState => ({ status, statusReason, suspendedStatus: null, suspendedReason: null });
  const from: Record<WalletStatus, WalletState> = {
    ACTIVE: plain("ACTIVE"),
    LOCKED: plain("LOCKED", "owner hold"),
    SUSPENDED: { status: "SUSPENDED", statusReason: "review", suspendedStatus: "LOCKED", suspendedReason: "owner hold" },
    INACTIVE: plain("INACTIVE"),
  };
  /** What each call does from each state: the resulting status, "no-op", or the refusal's code. */
  const table: Record<StateCall, Record<WalletStatus, string>> = {
    lock: { ACTIVE: "LOCKED", LOCKED: "no-op", SUSPENDED: "WALLET_SUSPENDED", INACTIVE: "WALLET_INACTIVE" },
    unlock: { ACTIVE: "no-op", LOCKED: "ACTIVE", SUSPENDED: "WALLET_SUSPENDED", INACTIVE: "WALLET_INACTIVE" },
    suspend: { ACTIVE: "SUSPENDED", LOCKED: "SUSPENDED", SUSPENDED: "no-op", INACTIVE: "WALLET_INACTIVE" },
    reinstate: { ACTIVE: "BAD_REQUEST", LOCKED: "BAD_REQUEST", SUSPENDED: "LOCKED", INACTIVE: "WALLET_INACTIVE" },
    deactivate: { ACTIVE: "INACTIVE", LOCKED: "INACTIVE", SUSPENDED: "WALLET_SUSPENDED", INACTIVE: "WALLET_INACTIVE" },
  };
  const cases = (Object.keys(table) as StateCall[]).flatMap((call) => WALLET_STATUSES.map((status) => [call, status, table[call][status]] as const));
  it.each(cases)("%s from %s → %s", (call, status, expected) => {
    let result: WalletState | null = null;
    const code = outcome(() => {
      result = nextState(ID, from[status], call, "why");
    });
    if (code !== "ok") expect(code).toBe(expected);
    else expect(result === null ? "no-op" : (result as WalletState).status).toBe(expected);
  });

  it("keeps the state before a suspension, and reinstate gives it back with its reason", () => {
    const suspended = nextState(ID, plain("LOCKED", "owner hold"), "suspend", "review");
    expect(suspended).toEqual({ status: "SUSPENDED", statusReason: "review", suspendedStatus: "LOCKED", suspendedReason: "owner hold" });
    expect(nextState(ID, suspended as WalletState, "reinstate")).toEqual(plain("LOCKED", "owner hold"));
    const fromActive = nextState(ID, plain("ACTIVE"), "suspend", "review") as WalletState;
    expect(nextState(ID, fromActive, "reinstate")).toEqual(plain("ACTIVE"));
  });

  it("a lock carries its reason; unlock and deactivate clear it", () => {
    expect(nextState(ID, plain("ACTIVE"), "lock", "Card lost")).toEqual(plain("LOCKED", "Card lost"));
    expect(nextState(ID, plain("LOCKED", "Card lost"), "unlock")).toEqual(plain("ACTIVE"));
    expect(nextState(ID, plain("LOCKED", "Card lost"), "deactivate")).toEqual(plain("INACTIVE"));
  });
});

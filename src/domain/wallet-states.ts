/**
 * Wallet states (docs/decisions/customers-users-and-wallets.md "Wallet states"), as pure rules:
 * which movements a state refuses, and what each state call does. The wallets module applies them
 * where a movement finds its wallet and again under the wallet row's share lock inside the
 * movement's transaction (src/modules/wallets/states.ts `guardMovements`).
 */
import { DomainError } from "./errors.js";

/** The states of a wallet, in the API's spelling. */
export const WALLET_STATUSES = ["ACTIVE", "LOCKED", "SUSPENDED", "INACTIVE"] as const;
/** A wallet's state. */
export type WalletStatus = (typeof WALLET_STATUSES)[number];

/**
 * Which way a movement goes for the wallet: `out` (a withdrawal, a transfer out, a quote or an
 * order from it) or `in` (a transfer in, a sandbox deposit). Chain and bank deposits are not
 * movements by request: every state credits them.
 */
export type MovementDirection = "in" | "out";

/** What a state check needs of a wallet. */
export interface WalletStateView {
  walletId: string;
  status: WalletStatus;
  /** The reason given to Lock or Suspend Wallet, or null (or absent). */
  statusReason?: string | null;
}

/**
 * Refuses a movement by request that the wallet's state does not allow: `LOCKED` lets money in but
 * not out, `SUSPENDED` and `INACTIVE` let nothing move.
 * @throws DomainError WALLET_LOCKED, WALLET_SUSPENDED, WALLET_INACTIVE (400), naming the wallet,
 *   and `field` when the wallet came from a body field.
 */
export function assertMovable(wallet: WalletStateView, direction: MovementDirection, field?: string): void {
  const why = wallet.statusReason ? ` (${wallet.statusReason})` : "";
  switch (wallet.status) {
    case "ACTIVE":
      return;
    case "LOCKED":
      if (direction === "in") return;
      throw new DomainError("WALLET_LOCKED", `Wallet ${wallet.walletId} is locked${why}: money may arrive but not leave.`, field);
    case "SUSPENDED":
      throw new DomainError("WALLET_SUSPENDED", `Wallet ${wallet.walletId} is suspended${why}: nothing moves until the operator reinstates it.`, field);
    case "INACTIVE":
      throw new DomainError("WALLET_INACTIVE", `Wallet ${wallet.walletId} is deactivated: nothing moves in or out.`, field);
  }
}

/** A wallet's stored state: its status and reason, and while `SUSPENDED` the state to reinstate. */
export interface WalletState {
  status: WalletStatus;
  statusReason: string | null;
  /** While `SUSPENDED`: the status before the suspension (`ACTIVE` or `LOCKED`); else null. */
  suspendedStatus: WalletStatus | null;
  /** While `SUSPENDED`: the reason of the state before the suspension; else null. */
  suspendedReason: string | null;
}

/** The state calls: lock and unlock, deactivate (the owner's); suspend and reinstate (the operator's). */
export type StateCall = "lock" | "unlock" | "suspend" | "reinstate" | "deactivate";

/**
 * The state `call` leads to from `current`, or null when the wallet already is in that state (a
 * no-op without an event). Deactivation's condition on balances is the caller's to check.
 * @param reason `lock` and `suspend`: 1–255 characters (the schema bounds it).
 * @throws DomainError WALLET_INACTIVE (any call on an `INACTIVE` wallet), WALLET_SUSPENDED (lock,
 *   unlock or deactivate of a `SUSPENDED` wallet: only the operator lifts a suspension),
 *   BAD_REQUEST (reinstate of a wallet that is not suspended), all 400.
 */
export function nextState(walletId: string, current: WalletState, call: StateCall, reason?: string): WalletState | null {
  if (current.status === "INACTIVE") {
    throw new DomainError("WALLET_INACTIVE", `Wallet ${walletId} is deactivated; its state cannot change.`);
  }
  const suspended = current.status === "SUSPENDED";
  if (suspended && (call === "lock" || call === "unlock" || call === "deactivate")) {
    throw new DomainError("WALLET_SUSPENDED", `Wallet ${walletId} is suspended; only the operator can reinstate it.`);
  }
  const plain = (status: WalletStatus, statusReason: string | null = null): WalletState => ({ status, statusReason, suspendedStatus: null, suspendedReason: null });
  switch (call) {
    case "lock":
      return current.status === "LOCKED" ? null : plain("LOCKED", reason ?? null);
    case "unlock":
      return current.status === "ACTIVE" ? null : plain("ACTIVE");
    case "deactivate":
      return plain("INACTIVE");
    case "suspend":
      if (suspended) return null;
      return { status: "SUSPENDED", statusReason: reason ?? null, suspendedStatus: current.status, suspendedReason: current.statusReason };
    case "reinstate":
      if (!suspended) throw new DomainError("BAD_REQUEST", `Wallet ${walletId} is not suspended.`);
      return plain(current.suspendedStatus ?? "ACTIVE", current.suspendedReason);
  }
}

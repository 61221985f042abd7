/**
 * Handlers of the credit core's sandbox clock (docs/decisions/provider-and-sandbox.md "Test helpers"; spec/credit/sandbox-clock.tsp): Get,
 * Set and Advance Sandbox Clock, answered only while the provider is the sandbox (404 otherwise). The
 * caller's tenant is the owner API key's customer.
 */
import type { operations } from "../../../generated/types/credit.js";
import type { SandboxClockService } from "../../modules/credit/clock/service.js";
import type { CustodyProvider } from "../../providers/provider.js";
import { DomainError } from "../../domain/errors.js";
import type { HandlerMap } from "../types.js";
import { tenantOf } from "./handlers.js";

/** The clock answers only while the provider is the sandbox (docs/decisions/provider-and-sandbox.md "Test helpers"). @throws DomainError NOT_FOUND (404). */
function sandboxOnly(provider: Pick<CustodyProvider, "name">): void {
  if (provider.name !== "sandbox") throw new DomainError("NOT_FOUND", "The sandbox clock exists only while the provider is the sandbox.");
}

/** Handlers of getSandboxClock, setSandboxClock and advanceSandboxClock. */
export function sandboxClockHandlers(clock: SandboxClockService, provider: Pick<CustodyProvider, "name">): HandlerMap<operations> {
  return {
    getSandboxClock: async (call) => {
      sandboxOnly(provider);
      return { status: 200, data: await clock.get(call.em, tenantOf(call)) };
    },
    setSandboxClock: async (call) => {
      sandboxOnly(provider);
      return { status: 200, data: await clock.set(call.em, tenantOf(call), new Date(call.body.now)) };
    },
    advanceSandboxClock: async (call) => {
      sandboxOnly(provider);
      return { status: 200, data: await clock.advance(call.em, tenantOf(call), call.body) };
    },
  };
}

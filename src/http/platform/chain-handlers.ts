/**
 * Platform handler of the operators' view of the live EVM networks (docs/decisions/live-chains.md
 * "The operators' view"): `GET /api/v1/chains`, operator session only (src/http/platform/access.ts).
 * The one operation that waits for the nodes: 504 `GATEWAY_TIMEOUT` and 502 `BAD_GATEWAY` come from
 * src/providers/evm/rpc.ts through the error map.
 */
import type { components, operations } from "../../../generated/types/platform.js";
import type { LiveChainView } from "../../modules/chains/overview.js";
import type { LiveChains } from "../../modules/chains/service.js";
import type { HandlerMap } from "../types.js";

/** A live network as the API shows it (`LiveChain`). */
function liveChainItem(v: LiveChainView): components["schemas"]["LiveChain"] {
  return {
    network: v.network,
    chain_id: v.chainId,
    head: v.head,
    scanned: v.scanned,
    confirmations: v.confirmations,
    gas_wallet: { address: v.gasWallet.address, balance: v.gasWallet.balance },
    pending_sends: v.pendingSends,
    error: v.error,
  };
}

/** Handler of listChains: every live network in configuration order, each node asked as it answers. */
export function chainHandlers(chains: LiveChains): HandlerMap<operations> {
  const overview = chains.overview();
  return {
    listChains: async () => ({ status: 200, data: (await overview.list()).map(liveChainItem) }),
  };
}

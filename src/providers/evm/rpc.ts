/**
 * JSON-RPC to the node of a live EVM network (docs/decisions/live-chains.md): one ethers
 * `JsonRpcProvider` per network, built on the first call, with a per-call timeout of
 * `CHAIN_RPC_TIMEOUT_S` (ethers `FetchRequest.timeout`) and a static network (the chain id is asked
 * once, with that first call, and never polled again). ethers is imported on first use
 * (docs/architecture.md "Lazy loading"): a process with no live network never loads it.
 *
 * Failures reach callers as DomainErrors an operation can answer with: no answer within the
 * timeout is `GATEWAY_TIMEOUT` (504), anything else (an error answer, a refused connection, a
 * malformed reply) `BAD_GATEWAY` (502).
 */
import type { JsonRpcProvider } from "ethers";
import { DomainError } from "../../domain/errors.js";

/** The ethers module, as `import("ethers")` gives it. */
export type Ethers = typeof import("ethers");

let ethersModule: Promise<Ethers> | undefined;

/** The ethers module, imported once on first use. */
export function loadEthers(): Promise<Ethers> {
  return (ethersModule ??= import("ethers"));
}

/**
 * The DomainError of a failed call `method` to `network`'s node: `GATEWAY_TIMEOUT` when ethers
 * gave up waiting (its `TIMEOUT` code), `BAD_GATEWAY` otherwise; a DomainError passes unchanged.
 */
export function rpcError(network: string, method: string, error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const text = error instanceof Error ? (error as { shortMessage?: string }).shortMessage ?? error.message : String(error);
  if (code === "TIMEOUT") return new DomainError("GATEWAY_TIMEOUT", `The ${network} node did not answer ${method} in time.`);
  return new DomainError("BAD_GATEWAY", `The ${network} node failed ${method}: ${text.slice(0, 300)}`);
}

/** The JSON-RPC client of one live network's node. */
export class EvmRpc {
  private connecting: Promise<{ provider: JsonRpcProvider; chainId: bigint }> | undefined;

  constructor(
    /** `networks/ethereum` or `networks/polygon`, for the errors' text. */
    readonly network: string,
    /** The node's http(s) JSON-RPC endpoint (the follower's plain client uses it too: src/modules/chains/rpc.ts). */
    readonly url: string,
    /** Seconds one call (one HTTP request) may take. */
    readonly timeoutS: number,
  ) {}

  /** The chain id the node answers (`eth_chainId`, asked once). @throws DomainError GATEWAY_TIMEOUT, BAD_GATEWAY. */
  async chainId(): Promise<bigint> {
    return (await this.connect()).chainId;
  }

  /** The provider, built once the chain id is known (ethers' `staticNetwork`). @throws DomainError GATEWAY_TIMEOUT, BAD_GATEWAY. */
  async provider(): Promise<JsonRpcProvider> {
    return (await this.connect()).provider;
  }

  /**
   * One JSON-RPC call, its result as the node sent it (hex quantities, null for an unknown block).
   * Calls made in the same tick travel in one batch (ethers' batching), each bounded by the timeout.
   * @throws DomainError GATEWAY_TIMEOUT (no answer in time), BAD_GATEWAY (an error answer).
   */
  async call<T>(method: string, params: readonly unknown[]): Promise<T> {
    const provider = await this.provider();
    try {
      return (await provider.send(method, [...params])) as T;
    } catch (error) {
      throw rpcError(this.network, method, error);
    }
  }

  /** Closes the provider (its timers); a later call builds a new one. */
  destroy(): void {
    const connecting = this.connecting;
    this.connecting = undefined;
    void connecting?.then(({ provider }) => provider.destroy(), () => {});
  }

  private connect(): Promise<{ provider: JsonRpcProvider; chainId: bigint }> {
    this.connecting ??= this.open().catch((error: unknown) => {
      this.connecting = undefined; // a node down at the first call is asked again next time
      throw error;
    });
    return this.connecting;
  }

  private async open(): Promise<{ provider: JsonRpcProvider; chainId: bigint }> {
    const { FetchRequest, JsonRpcProvider, Network } = await loadEthers();
    const request = new FetchRequest(this.url);
    request.timeout = this.timeoutS * 1000;
    let chainId: bigint;
    try {
      const probe = request.clone();
      probe.body = { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] };
      probe.setHeader("content-type", "application/json");
      const response = await probe.send();
      response.assertOk();
      const answer = response.bodyJson as { result?: unknown; error?: { message?: unknown } };
      if (typeof answer.result !== "string") throw new Error(`eth_chainId answered ${JSON.stringify(answer.error ?? answer).slice(0, 200)}`);
      chainId = BigInt(answer.result);
    } catch (error) {
      throw rpcError(this.network, "eth_chainId", error);
    }
    const network = Network.from(chainId);
    // calls made in the same tick still travel in one batch; no 10 ms wait for more (ethers' default batchStallTime)
    const provider = new JsonRpcProvider(request, network, { staticNetwork: network, batchMaxCount: 50, batchStallTime: 0 });
    return { provider, chainId };
  }
}

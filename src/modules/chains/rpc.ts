/**
 * The block follower's JSON-RPC client (docs/decisions/live-chains.md "Deposits"): plain `fetch`
 * and `JSON.parse`, no ethers. The follower reads large answers (full blocks, logs, receipts) and
 * needs nothing of them but hex strings it compares in lower case; ethers' provider decoding,
 * address checksumming and batching delays cost it more than the node did
 * (docs/performance.md "Chains: the scan row"). Signing and sending stay with ethers
 * (src/providers/evm/rpc.ts `EvmRpc`, ./sender.ts).
 *
 * Calls given together travel in one JSON-RPC batch (one HTTP request of at most
 * {@link RPC_BATCH_MAX} calls; more go as several requests at once), each HTTP request bounded by
 * `CHAIN_RPC_TIMEOUT_S` (`AbortSignal.timeout`, the answer's body included). Failures are the
 * DomainErrors of `EvmRpc`: no answer in time `GATEWAY_TIMEOUT` (504, "did not answer … in
 * time"), anything else `BAD_GATEWAY` (502, "failed <method>: …"): an HTTP status other than 200,
 * a refused connection, a reply that is not JSON or lacks a call's answer, or a call's error answer.
 */
import { DomainError } from "../../domain/errors.js";

/** Calls per HTTP request at most (ethers' `batchMaxCount` of the provider the follower used before). */
export const RPC_BATCH_MAX = 50;

/** One JSON-RPC call: its method and params. */
export type RpcCall = readonly [method: string, params: readonly unknown[]];

/** One answer of a JSON-RPC batch, as the node sends it. */
interface RpcAnswer {
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown } | null;
}

/** The plain JSON-RPC client of one live network's node, for the follower. */
export class ChainRpc {
  private nextId = 1;

  constructor(
    /** `networks/ethereum` or `networks/polygon`, for the errors' text. */
    readonly network: string,
    /** The node's http(s) JSON-RPC endpoint. */
    private readonly url: string,
    /** Seconds one HTTP request (one batch of calls) may take. */
    private readonly timeoutS: number,
  ) {}

  /**
   * One call's result as the node sent it (hex quantities, null for an unknown block).
   * @throws DomainError GATEWAY_TIMEOUT (no answer in time), BAD_GATEWAY (see the module's comment).
   */
  async call<T>(method: string, params: readonly unknown[]): Promise<T> {
    const [result] = await this.batch([[method, params]]);
    return result as T;
  }

  /**
   * `calls`' results, in their order: one HTTP request per {@link RPC_BATCH_MAX} calls, sent at
   * once. Any call's error answer fails the whole batch (with that call's method in the message).
   * @throws DomainError GATEWAY_TIMEOUT, BAD_GATEWAY (see the module's comment).
   */
  async batch(calls: readonly RpcCall[]): Promise<unknown[]> {
    if (calls.length <= RPC_BATCH_MAX) return this.request(calls);
    const chunks: RpcCall[][] = [];
    for (let i = 0; i < calls.length; i += RPC_BATCH_MAX) chunks.push(calls.slice(i, i + RPC_BATCH_MAX));
    return (await Promise.all(chunks.map((chunk) => this.request(chunk)))).flat();
  }

  /** One HTTP request carrying `calls` (a single call as a plain JSON-RPC object, more as an array). */
  private async request(calls: readonly RpcCall[]): Promise<unknown[]> {
    if (calls.length === 0) return [];
    const first = this.nextId;
    this.nextId += calls.length;
    if (this.nextId > Number.MAX_SAFE_INTEGER / 2) this.nextId = 1;
    const body = calls.map(([method, params], i) => ({ jsonrpc: "2.0", id: first + i, method, params }));
    const label = calls[0]?.[0] ?? "";
    let text: string;
    try {
      const response = await fetch(this.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body.length === 1 ? body[0] : body),
        signal: AbortSignal.timeout(this.timeoutS * 1000),
      });
      text = await response.text();
      if (response.status !== 200) throw new Error(`HTTP ${response.status} ${text.slice(0, 200)}`);
    } catch (error) {
      throw this.failure(label, error);
    }
    return this.results(calls, first, text);
  }

  /** The results of `calls` (ids from `first`) in `text`, the node's reply. @throws DomainError BAD_GATEWAY. */
  private results(calls: readonly RpcCall[], first: number, text: string): unknown[] {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw this.failure(calls[0]?.[0] ?? "", new Error(`a reply that is not JSON: ${text.slice(0, 200)}`));
    }
    const answers = (Array.isArray(parsed) ? parsed : [parsed]) as RpcAnswer[];
    const byId = new Map<unknown, RpcAnswer>();
    for (const answer of answers) if (answer !== null && typeof answer === "object") byId.set(answer.id, answer);
    return calls.map(([method], i) => {
      const answer = byId.get(first + i);
      if (!answer) throw this.failure(method, new Error("no answer to this call in the reply"));
      if (answer.error !== undefined && answer.error !== null) {
        const message = typeof answer.error.message === "string" ? answer.error.message : JSON.stringify(answer.error);
        throw this.failure(method, new Error(`${message} (code ${String(answer.error.code)})`));
      }
      if (!("result" in answer)) throw this.failure(method, new Error("an answer with neither result nor error"));
      return answer.result;
    });
  }

  /** The DomainError of a failed `method`: GATEWAY_TIMEOUT when the timeout fired, BAD_GATEWAY otherwise. */
  private failure(method: string, error: unknown): DomainError {
    if (error instanceof DomainError) return error;
    if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
      return new DomainError("GATEWAY_TIMEOUT", `The ${this.network} node did not answer ${method} in time.`);
    }
    const cause = error instanceof Error ? (error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message) : String(error);
    return new DomainError("BAD_GATEWAY", `The ${this.network} node failed ${method}: ${cause.slice(0, 300)}`);
  }
}

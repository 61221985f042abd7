/**
 * A local EVM chain for tests (docs/testing.md "The real parts"): Anvil from npm, started by the
 * test itself (scripts/chain/anvil.ts), the test ERC-20 (scripts/chain/test-token.ts), and thin
 * helpers over Anvil's JSON-RPC through ethers' `JsonRpcProvider.send`.
 *
 * What Anvil 1.7.1 does, as the helpers rely on it:
 * - `anvil_reorg(depth, txs)` replaces the newest `depth` blocks with `depth` new ones: the head keeps
 *   its height, every replaced height gets a new hash, and the new blocks hold only `txs`. A
 *   transaction of a replaced block that is not re-sent in `txs` is gone: no receipt, no transaction,
 *   not back in the pool, its state changes undone. Re-sending its raw bytes ({@link AnvilRpc.rawTransaction})
 *   mines the same hash again in the new branch.
 * - `evm_snapshot`/`evm_revert` rewind the head to the snapshot's block; an id works once, and a revert
 *   consumes every later snapshot too. Reverting to such a consumed later id answers an error AND
 *   leaves the head number at that snapshot's block with no block there (`latest` is null): the
 *   chain is broken for the rest of the run; never do it.
 * - `anvil_dropTransaction` removes a pending transaction from the pool (mining must be off for one
 *   to stay pending: {@link AnvilRpc.setAutomine}).
 */
import { parseUnits, toQuantity, type HDNodeWallet, type JsonRpcProvider } from "ethers";
import { anvilProvider, anvilWallet, startAnvil, type Anvil, type AnvilOptions } from "../../scripts/chain/anvil.js";

export {
  ANVIL_CHAIN_ID,
  ANVIL_MNEMONIC,
  anvilBinary,
  anvilProvider,
  anvilWallet,
  startAnvil,
  type Anvil,
  type AnvilOptions,
} from "../../scripts/chain/anvil.js";
export {
  compileTestToken,
  deployTestToken,
  type CompiledToken,
  type DeployedToken,
  type TestTokenOptions,
} from "../../scripts/chain/test-token.js";

/** A transaction of a reorg's new branch: `tx` is mined in the `offset`-th new block (0 = the first replaced height). */
export interface ReorgTransaction {
  /** Signed raw bytes (`0x…`, e.g. {@link AnvilRpc.rawTransaction} of a mined one) or a request `{from, to, value, data, gas…}` (hex quantities) Anvil signs for one of its accounts. */
  tx: string | Record<string, string>;
  offset: number;
}

/** Anvil's test methods on one provider. */
export interface AnvilRpc {
  /** Mines `n` blocks at once (`anvil_mine`), with whatever is pending in the first. */
  mine(n?: number): Promise<void>;
  /** Takes a snapshot of the chain and state (`evm_snapshot`); its id. */
  snapshot(): Promise<string>;
  /** Goes back to snapshot `id` (`evm_revert`). @throws Error when Anvil has no such snapshot (ids work once). */
  revert(id: string): Promise<void>;
  /** Replaces the newest `depth` blocks (`anvil_reorg`; see this module's comment). @throws when depth exceeds the head. */
  reorg(depth: number, txs?: ReorgTransaction[]): Promise<void>;
  /** Sets the base fee of the next block, in gwei (`anvil_setNextBlockBaseFeePerGas`). */
  setNextBaseFee(gwei: number | string): Promise<void>;
  /** Removes a pending transaction from the pool (`anvil_dropTransaction`); whether it was there. */
  dropTransaction(hash: string): Promise<boolean>;
  /** Turns mining a block per transaction on or off (`evm_setAutomine`); a `blockTime` still mines. */
  setAutomine(on: boolean): Promise<void>;
  /** The hash of block `n` of the current chain, or undefined above the head. */
  blockHash(n: number): Promise<string | undefined>;
  /** The signed bytes of a known transaction (`eth_getRawTransactionByHash`), or undefined. */
  rawTransaction(hash: string): Promise<string | undefined>;
}

/** {@link AnvilRpc} over `provider` (each method one JSON-RPC call through `provider.send`). */
export function anvilRpc(provider: JsonRpcProvider): AnvilRpc {
  return {
    mine: async (n = 1) => {
      await provider.send("anvil_mine", [toQuantity(n)]);
    },
    snapshot: async () => String(await provider.send("evm_snapshot", [])),
    revert: async (id) => {
      if ((await provider.send("evm_revert", [id])) !== true) throw new Error(`evm_revert: no snapshot ${id}`);
    },
    reorg: async (depth, txs = []) => {
      await provider.send("anvil_reorg", [depth, txs.map(({ tx, offset }) => [tx, offset])]);
    },
    setNextBaseFee: async (gwei) => {
      await provider.send("anvil_setNextBlockBaseFeePerGas", [toQuantity(parseUnits(String(gwei), "gwei"))]);
    },
    dropTransaction: async (hash) => (await provider.send("anvil_dropTransaction", [hash])) !== null,
    setAutomine: async (on) => {
      await provider.send("evm_setAutomine", [on]);
    },
    blockHash: async (n) => {
      const block = (await provider.send("eth_getBlockByNumber", [toQuantity(n), false])) as { hash: string } | null;
      return block?.hash ?? undefined;
    },
    rawTransaction: async (hash) => ((await provider.send("eth_getRawTransactionByHash", [hash])) as string | null) ?? undefined,
  };
}

/** A running Anvil with a provider on it and {@link AnvilRpc}. */
export interface TestChain extends Anvil, AnvilRpc {
  provider: JsonRpcProvider;
  /** The funded account `index` (default 0), connected to {@link provider}. */
  wallet(index?: number): HDNodeWallet;
}

/** Starts Anvil ({@link startAnvil}) with a provider on it; `stop()` closes the provider and stops Anvil. */
export async function startTestChain(options: AnvilOptions = {}): Promise<TestChain> {
  const anvil = await startAnvil(options);
  const provider = anvilProvider(anvil.url, anvil.chainId);
  return {
    ...anvil,
    ...anvilRpc(provider),
    provider,
    wallet: (index = 0) => anvilWallet(provider, index, anvil.mnemonic),
    stop: async () => {
      provider.destroy();
      await anvil.stop();
    },
  };
}

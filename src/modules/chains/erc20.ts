/**
 * The two ERC-20 calls the sends make (docs/decisions/live-chains.md "Sends", "Sweeps"): the
 * `transfer(to, amount)` a token send and a token sweep sign, and the `balanceOf(owner)` of the
 * funds check. ethers' `Interface`, built once on first use (ethers loads lazily: docs/operations.md
 * "Start and memory"). Amounts are in the token's smallest unit.
 */
import type { Interface } from "ethers";
import { loadEthers } from "../../providers/evm/rpc.js";

let erc20: Promise<Interface> | undefined;

/** The ERC-20 interface (transfer, balanceOf), built once. */
function abi(): Promise<Interface> {
  erc20 ??= loadEthers().then(({ Interface }) => new Interface([
    "function transfer(address to, uint256 amount) returns (bool)",
    "function balanceOf(address owner) view returns (uint256)",
  ]));
  return erc20;
}

/** The call data of `transfer(to, units)`. */
export async function transferData(to: string, units: bigint): Promise<string> {
  return (await abi()).encodeFunctionData("transfer", [to, units]);
}

/** The call data of `balanceOf(owner)`. */
export async function balanceOfData(owner: string): Promise<string> {
  return (await abi()).encodeFunctionData("balanceOf", [owner]);
}

/** The balance an `eth_call` of {@link balanceOfData} answered (`answer`, hex). */
export async function balanceOfResult(answer: string): Promise<bigint> {
  return BigInt((await abi()).decodeFunctionResult("balanceOf", answer)[0] as bigint);
}

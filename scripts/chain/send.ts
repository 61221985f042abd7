/**
 * Sends a deposit on a local chain from Anvil's first funded account (docs/testing.md "The real
 * parts"; `npm run chain:local` prints the variables it reads):
 *
 *   npx tsx scripts/chain/send.ts --to 0x… --amount 1.5 [--token usdt] [--rpc URL] [--tokens usdt=0x…:6]
 *
 * `--amount` is in whole units: ETH, or the token's units (`1.5` USDT = 1 500 000 base units at 6
 * decimals). `--rpc` defaults to `CHAIN_ETHEREUM_RPC_URL`, then `http://127.0.0.1:8545`; `--tokens`
 * (`currency=0xcontract:decimals,…`, as a live network's configuration takes it) defaults to
 * `CHAIN_ETHEREUM_TOKENS`. `--mnemonic` (default Anvil's) and `--account N` (default 0) choose the
 * sender. Prints the transaction hash and its block once mined; exits 1 with the reason otherwise.
 */
import { parseArgs } from "node:util";
import { Contract, HDNodeWallet, JsonRpcProvider, Mnemonic, getAddress, parseEther, parseUnits } from "ethers";
import { ANVIL_MNEMONIC } from "./anvil.js";

/** The ERC-20 function this script calls (ethers encodes it). */
const ERC20 = ["function transfer(address to, uint256 amount) returns (bool)"];

/** `usdt=0x…:6,usdc=0x…:6` → currency → {address, decimals}. */
function parseTokens(spec: string): Map<string, { address: string; decimals: number }> {
  const tokens = new Map<string, { address: string; decimals: number }>();
  for (const entry of spec.split(",").map((s) => s.trim()).filter(Boolean)) {
    const match = /^([a-z0-9_]+)=(0x[0-9a-fA-F]{40}):(\d{1,2})$/.exec(entry);
    if (!match) throw new Error(`not a token entry (currency=0xcontract:decimals): ${entry}`);
    tokens.set(match[1]!, { address: getAddress(match[2]!), decimals: Number(match[3]) });
  }
  return tokens;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      to: { type: "string" },
      amount: { type: "string" },
      token: { type: "string" },
      rpc: { type: "string", default: process.env.CHAIN_ETHEREUM_RPC_URL ?? "http://127.0.0.1:8545" },
      tokens: { type: "string", default: process.env.CHAIN_ETHEREUM_TOKENS ?? "" },
      mnemonic: { type: "string", default: ANVIL_MNEMONIC },
      account: { type: "string", default: "0" },
    },
  });
  if (!values.to || !values.amount) throw new Error("usage: send.ts --to 0x… --amount 1.5 [--token usdt] [--rpc URL] [--tokens usdt=0x…:6]");
  const to = getAddress(values.to);
  const provider = new JsonRpcProvider(values.rpc, undefined, { pollingInterval: 250 });
  try {
    const wallet = HDNodeWallet.fromMnemonic(Mnemonic.fromPhrase(values.mnemonic), `m/44'/60'/0'/0/${Number(values.account)}`).connect(provider);
    let sent;
    if (values.token) {
      const token = parseTokens(values.tokens).get(values.token.toLowerCase());
      if (!token) throw new Error(`token ${values.token} is not in --tokens / CHAIN_ETHEREUM_TOKENS ("${values.tokens}")`);
      const units = parseUnits(values.amount, token.decimals);
      sent = await new Contract(token.address, ERC20, wallet).getFunction("transfer")(to, units);
      console.log(`sending ${values.amount} ${values.token} (${units} base units of ${token.address}) from ${wallet.address} to ${to}: ${sent.hash}`);
    } else {
      sent = await wallet.sendTransaction({ to, value: parseEther(values.amount) });
      console.log(`sending ${values.amount} ETH from ${wallet.address} to ${to}: ${sent.hash}`);
    }
    const receipt = await sent.wait();
    if (!receipt || receipt.status !== 1) throw new Error(`transaction ${sent.hash} reverted`);
    console.log(`mined in block ${receipt.blockNumber} (${receipt.blockHash})`);
  } finally {
    provider.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});

/**
 * `npm run chain:local [-- --port N]`: a local Ethereum for trying a live `networks/ethereum` by
 * hand (docs/testing.md "The real parts"). Starts Anvil on 127.0.0.1 (port 8545 unless told,
 * chain id 31337, a block every second), deploys a 6-decimal `USDT` test token
 * (scripts/chain/test-token.sol), mints 1 000 000 USDT to Anvil's first account, prints the
 * environment the service takes for a live network and how to send a deposit
 * (scripts/chain/send.ts), then stays up until Ctrl-C. The chain lives in memory: every start
 * begins anew (the token gets the same address each time, the first deployment of that account).
 * `ANVIL_LOG=1` shows Anvil's own output.
 */
import { parseArgs } from "node:util";
import { parseUnits } from "ethers";
import { ANVIL_CHAIN_ID, anvilProvider, anvilWallet, startAnvil } from "./chain/anvil.js";
import { deployTestToken } from "./chain/test-token.js";

const DECIMALS = 6;
const MINTED_USDT = "1000000";

const { values } = parseArgs({ options: { port: { type: "string", default: "8545" } } });
const anvil = await startAnvil({ chainId: ANVIL_CHAIN_ID, blockTime: 1, port: Number(values.port) });
const provider = anvilProvider(anvil.url, anvil.chainId);
let stopping = false;
const stop = async (code: number) => {
  if (stopping) return;
  stopping = true;
  provider.destroy();
  await anvil.stop();
  process.exit(code);
};
process.on("SIGINT", () => void stop(0));
process.on("SIGTERM", () => void stop(0));

try {
  const owner = anvilWallet(provider, 0, anvil.mnemonic);
  const { contract, address } = await deployTestToken(owner, { name: "Tether USD (test)", symbol: "USDT", decimals: DECIMALS });
  await (await contract.getFunction("mint")(owner.address, parseUnits(MINTED_USDT, DECIMALS))).wait();

  console.log(`Anvil on ${anvil.url}: chain id ${anvil.chainId}, a block every second, 10 funded accounts of the mnemonic "${anvil.mnemonic}".`);
  console.log(`USDT test token at ${address} (${DECIMALS} decimals); ${MINTED_USDT} USDT minted to ${owner.address} (account 0).`);
  console.log("");
  console.log("Environment of a live networks/ethereum on this chain:");
  console.log(`CHAIN_ETHEREUM_RPC_URL=${anvil.url}`);
  console.log("CHAIN_ETHEREUM_CONFIRMATIONS=2");
  console.log(`CHAIN_ETHEREUM_TOKENS=usdt=${address}:${DECIMALS}`);
  console.log("");
  console.log(
    `Send a deposit from account 0: npx tsx scripts/chain/send.ts --rpc ${anvil.url} --tokens usdt=${address}:${DECIMALS} --to 0x… --amount 1.5 [--token usdt]`,
  );
  console.log("Ctrl-C stops the chain.");
} catch (error) {
  console.error(error);
  await stop(1);
}

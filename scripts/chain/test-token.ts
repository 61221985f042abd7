/**
 * The tests' ERC-20 (scripts/chain/test-token.sol; docs/testing.md "The real parts"): compiled with
 * solc-js (the `solc` npm package, no native compiler) once per process, and deployed with ethers.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { Contract, ContractFactory, type InterfaceAbi, type Signer } from "ethers";

/** The Solidity source of the test token. */
export const TEST_TOKEN_SOURCE = resolve(import.meta.dirname, "test-token.sol");

/** What the compiler gives for the test token. */
export interface CompiledToken {
  abi: InterfaceAbi;
  /** The creation bytecode, `0x…`. */
  bytecode: string;
  /** solc's version string, e.g. `0.8.37+commit.….Emscripten.clang`. */
  compiler: string;
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: InterfaceAbi; evm: { bytecode: { object: string } } }>>;
}
interface Solc {
  compile(input: string): string;
  version(): string;
}

let compiled: CompiledToken | undefined;

/**
 * Compiles test-token.sol (the first call loads solc-js and compiles: 2–3 s; later calls of
 * the same process answer from memory). Targets the `cancun` EVM, which Anvil's default hardfork runs.
 * @throws Error with solc's messages when the source does not compile.
 */
export function compileTestToken(): CompiledToken {
  if (compiled) return compiled;
  // loaded on first use: requiring solc instantiates its 9 MB WebAssembly compiler
  const solc = createRequire(import.meta.url)("solc") as Solc;
  const input = {
    language: "Solidity",
    sources: { "test-token.sol": { content: readFileSync(TEST_TOKEN_SOURCE, "utf8") } },
    settings: {
      evmVersion: "cancun",
      // no optimizer: it doubles the compile time, and gas does not matter here
      optimizer: { enabled: false },
      outputSelection: { "test-token.sol": { TestToken: ["abi", "evm.bytecode.object"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) throw new Error(`test-token.sol does not compile:\n${errors.map((e) => e.formattedMessage).join("\n")}`);
  const token = output.contracts?.["test-token.sol"]?.TestToken;
  if (!token) throw new Error("solc returned no TestToken contract");
  compiled = { abi: token.abi, bytecode: `0x${token.evm.bytecode.object}`, compiler: solc.version() };
  return compiled;
}

/** Constructor arguments of the test token. */
export interface TestTokenOptions {
  name: string;
  symbol: string;
  /** Decimals of the token (0–255), e.g. 6 for a USDT-like token. */
  decimals: number;
}

/** A deployed test token. */
export interface DeployedToken {
  /** The token connected to the deploying signer: `mint(to, amount)`, `transfer`, `balanceOf`… (amounts in base units). */
  contract: Contract;
  /** Its checksummed address. */
  address: string;
}

/**
 * Deploys a test token from `signer` and waits until the deployment is mined (on an Anvil with a
 * block time, that is the next block).
 */
export async function deployTestToken(signer: Signer, options: TestTokenOptions): Promise<DeployedToken> {
  const { abi, bytecode } = compileTestToken();
  const factory = new ContractFactory(abi, bytecode, signer);
  const deployed = await factory.deploy(options.name, options.symbol, options.decimals);
  await deployed.waitForDeployment();
  const address = await deployed.getAddress();
  return { contract: new Contract(address, abi, signer), address };
}

/**
 * The custody keys of the live EVM networks (docs/decisions/live-chains.md "Keys"): one BIP-39
 * mnemonic, read from `CUSTODY_MNEMONIC_FILE` or, when that is unset, from
 * `DATA_DIR/custody-mnemonic.txt`, which the first start writes (24 words from the CSPRNG, mode
 * 0600, never overwritten). From it come the HD seed of the live networks' deposit addresses (at the
 * sandbox's paths, src/providers/chains.ts) and the service's own wallets under `m/44'/60'/7'/0/n`:
 * n = 0 the gas wallet, n = 1 the hot wallet.
 *
 * No word, seed or private key is ever logged, written to the database or put in an error message:
 * errors name the file and what is wrong with it, never its content; the {@link CustodyKeys} object
 * prints (JSON, `util.inspect`) as its public addresses only. Without a live network nothing here
 * runs and no file is read or written. ethers is loaded on the first wallet derived (the lazy chain
 * libraries, docs/operations.md "Start and memory").
 */
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { inspect } from "node:util";
import { generateMnemonic, mnemonicToSeedSync, validateMnemonic } from "@scure/bip39";
import { wordlist as english } from "@scure/bip39/wordlists/english.js";
import type { HDNodeWallet } from "ethers";
import type { Logger } from "pino";

/** Name of the generated mnemonic's file under `DATA_DIR`. */
export const CUSTODY_MNEMONIC_FILE_NAME = "custody-mnemonic.txt";

/** Index of the gas wallet (pays the network fees) under {@link serviceWalletPath}. */
export const GAS_WALLET_INDEX = 0;
/** Index of the hot wallet (pays the withdrawals) under {@link serviceWalletPath}. */
export const HOT_WALLET_INDEX = 1;

/** The BIP-44 account of each live network's deposit addresses (src/providers/chains.ts's paths). */
const DEPOSIT_ACCOUNTS: Readonly<Record<string, number>> = { "networks/ethereum": 0, "networks/polygon": 1 };

/** BIP-32 path of the service's own wallet number `n` (0 the gas wallet, 1 the hot wallet): `m/44'/60'/7'/0/n`. */
export function serviceWalletPath(n: number): string {
  if (!Number.isInteger(n) || n < 0 || n >= 0x8000_0000) throw new RangeError(`service wallet index must be an integer in [0, 2^31), got ${n}`);
  return `m/44'/60'/7'/0/${n}`;
}

/** Raised at start when the mnemonic cannot be used; the message names the file and the fix, never its content. */
export class CustodyKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CustodyKeyError";
  }
}

/**
 * The live networks' keys: which networks are live, the custody seed of their deposit addresses,
 * and the service's own wallets. Prints as its public addresses only.
 */
export class CustodyKeys {
  readonly #seed: Uint8Array;
  readonly #networks: ReadonlySet<string>;
  readonly #wallets = new Map<number, HDNodeWallet>();

  /**
   * @param seed the mnemonic's 64-byte BIP-39 seed (empty passphrase)
   * @param networks the live networks (`networks/ethereum`, `networks/polygon`)
   */
  constructor(seed: Uint8Array, networks: readonly string[]) {
    this.#seed = Uint8Array.from(seed);
    this.#networks = new Set(networks);
  }

  /** The live networks, in configuration order. */
  get networks(): string[] {
    return [...this.#networks];
  }

  /** Whether `network` is live: its value arrives on chain only and the service sends on it itself. */
  isLive(network: string): boolean {
    return this.#networks.has(network);
  }

  /**
   * The HD seed of `network`'s deposit addresses: a copy of the custody seed (64 bytes) on a live
   * network; `undefined` on any other, whose addresses stay the sandbox's (`SANDBOX_SEED`).
   */
  seedFor(network: string): Uint8Array | undefined {
    return this.isLive(network) ? Uint8Array.from(this.#seed) : undefined;
  }

  /** The service's own wallet number `n` (`m/44'/60'/7'/0/n`), without a provider; derived once. */
  serviceWallet(n: number): HDNodeWallet {
    let wallet = this.#wallets.get(n);
    if (!wallet) {
      wallet = ethers().HDNodeWallet.fromSeed(this.#seed).derivePath(serviceWalletPath(n));
      this.#wallets.set(n, wallet);
    }
    return wallet;
  }

  /**
   * The key of a live network's deposit address at derivation `path` (the sandbox's paths,
   * `m/44'/60'/0'/0/i` on ethereum, `m/44'/60'/1'/0/i` on polygon), without a provider: what a
   * sweep signs with (docs/decisions/live-chains.md "Sweeps").
   * @throws Error when `network` is not live, `path` is not one of its deposit paths, or the key's
   *   address is not `address` (compared in lower case): a sweep never signs with another key.
   */
  depositWallet(network: string, path: string, address: string): HDNodeWallet {
    const account = DEPOSIT_ACCOUNTS[network];
    if (!this.isLive(network) || account === undefined) throw new Error(`${network} is not a live network`);
    if (!new RegExp(`^m/44'/60'/${account}'/0/\\d{1,10}$`).test(path)) throw new Error(`${path} is not a deposit address path of ${network}`);
    const wallet = ethers().HDNodeWallet.fromSeed(this.#seed).derivePath(path);
    if (wallet.address.toLowerCase() !== address.toLowerCase()) throw new Error(`the key at ${path} on ${network} is not the key of ${address}`);
    return wallet;
  }

  /** The gas wallet, `m/44'/60'/7'/0/0`: it pays the network fees. */
  get gasWallet(): HDNodeWallet {
    return this.serviceWallet(GAS_WALLET_INDEX);
  }

  /** The hot wallet, `m/44'/60'/7'/0/1`: it will pay the withdrawals. */
  get hotWallet(): HDNodeWallet {
    return this.serviceWallet(HOT_WALLET_INDEX);
  }

  /** What a log or a `JSON.stringify` shows: the live networks and the public addresses, nothing secret. */
  toJSON(): { networks: string[]; gasWallet: string; hotWallet: string } {
    return { networks: this.networks, gasWallet: this.gasWallet.address, hotWallet: this.hotWallet.address };
  }

  [inspect.custom](): string {
    return `CustodyKeys ${JSON.stringify(this.toJSON())}`;
  }
}

/** Where the mnemonic is: `CUSTODY_MNEMONIC_FILE`, or the generated file under `DATA_DIR`. */
export interface CustodyKeySource {
  /** `CUSTODY_MNEMONIC_FILE`; unset: `DATA_DIR/custody-mnemonic.txt`, written on the first start. */
  custodyMnemonicFile: string | undefined;
  /** `DATA_DIR`. */
  dataDir: string;
}

/**
 * The custody keys of the live `networks`, or `undefined` when there is none (nothing is read or
 * written then). With `CUSTODY_MNEMONIC_FILE` set, its mnemonic (a warning when group or others
 * may read it); else `DATA_DIR/custody-mnemonic.txt`, created with 24 new words when missing (its
 * path logged once, at its creation) and refused when group or others have any access to it.
 * Logs the gas and hot wallets' addresses (info). The lines of a start use no word of the BIP-39
 * list, so that a test can tell no word of the mnemonic reached them (tests/unit/evm-keys.test.ts).
 * @throws CustodyKeyError naming the file when it is missing (`CUSTODY_MNEMONIC_FILE`), unreadable,
 *   too open (the generated file), or not a valid BIP-39 English mnemonic.
 */
export function openCustodyKeys(networks: readonly string[], source: CustodyKeySource, logger: Pick<Logger, "info" | "warn">): CustodyKeys | undefined {
  if (networks.length === 0) return undefined;
  let words: string;
  if (source.custodyMnemonicFile !== undefined) {
    const file = resolve(source.custodyMnemonicFile);
    const { text, mode } = readMnemonicFile(file, "CUSTODY_MNEMONIC_FILE");
    if ((mode & 0o077) !== 0) logger.warn({ mnemonicFile: file, mode: octal(mode) }, "CUSTODY_MNEMONIC_FILE is readable beyond its owner: chmod 600 it");
    words = mnemonicOf(text, file);
  } else {
    const file = resolve(source.dataDir, CUSTODY_MNEMONIC_FILE_NAME);
    if (createIfAbsent(file, generateMnemonic(english, 256))) {
      logger.info({ mnemonicFile: file }, "custody mnemonic generated (CUSTODY_MNEMONIC_FILE unset), mode 0600: back it up with DATA_DIR");
    }
    const { text, mode } = readMnemonicFile(file, "the generated custody mnemonic");
    if ((mode & 0o077) !== 0) throw new CustodyKeyError(`${file} has mode ${octal(mode)}; it holds the custody mnemonic and must be readable by its owner only: chmod 600 ${file}`);
    words = mnemonicOf(text, file);
  }
  const keys = new CustodyKeys(mnemonicToSeedSync(words), networks);
  logger.info({ networks: keys.networks, gasWallet: keys.gasWallet.address, hotWallet: keys.hotWallet.address }, "custody keys loaded");
  return keys;
}

/** The file's text and mode. @throws CustodyKeyError naming `file` (and `what` it is) when it is missing or unreadable. */
function readMnemonicFile(file: string, what: string): { text: string; mode: number } {
  try {
    const mode = statSync(file).mode;
    return { text: readFileSync(file, "utf8"), mode };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    throw new CustodyKeyError(`${what} ${file} cannot be read (${code}): it must hold the BIP-39 mnemonic of the live networks' keys`);
  }
}

/**
 * The mnemonic of a file's text, normalised as BIP-39 and ethers do (NFKD, lower case, single spaces).
 * @throws CustodyKeyError naming `file` (with the number of words, never one of them) when it is not a valid English mnemonic.
 */
function mnemonicOf(text: string, file: string): string {
  const words = text.normalize("NFKD").trim().toLowerCase().split(/\s+/).filter((w) => w !== "");
  const phrase = words.join(" ");
  if (!validateMnemonic(phrase, english)) {
    throw new CustodyKeyError(`${file} does not hold a valid BIP-39 English mnemonic (${words.length} words read; 12, 15, 18, 21 or 24 words of the English list with their checksum are needed)`);
  }
  return phrase;
}

/**
 * Creates `file` with `words` and a line end, mode 0600, unless it exists: written and synced
 * under a temporary name in the same folder, then linked into place (the link fails when `file`
 * exists, so a file is never replaced and two starts racing on one `DATA_DIR` keep the same words).
 * @returns whether this call created it.
 */
function createIfAbsent(file: string, words: string): boolean {
  if (existsSync(file)) return false;
  try {
    mkdirSync(dirname(file), { recursive: true });
    const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
    const fd = openSync(temporary, "wx", 0o600);
    try {
      writeSync(fd, `${words}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temporary, file);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw error;
    } finally {
      unlinkSync(temporary);
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    throw new CustodyKeyError(`the custody mnemonic cannot be written to ${file} (${code}): set CUSTODY_MNEMONIC_FILE, or make DATA_DIR writable`);
  }
}

/** `0644`-style text of a file mode's permission bits. */
function octal(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, "0");
}

const load = createRequire(import.meta.url);
let loaded: typeof import("ethers") | undefined;
/** ethers, loaded on first use (synchronously, its CommonJS build). */
function ethers(): typeof import("ethers") {
  return (loaded ??= load("ethers") as typeof import("ethers"));
}

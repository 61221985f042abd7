/**
 * The custody keys of the live EVM networks (docs/decisions/live-chains.md "Keys"): a given
 * mnemonic gives the known addresses (the service's wallets under m/44'/60'/7'/0/n, deposit
 * addresses at the sandbox's paths); the generated file is 0600, reused and never overwritten; a
 * bad file stops the start naming the file and never its words; no word, seed or key reaches the log.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { wordlist as english } from "@scure/bip39/wordlists/english.js";
import { HDNodeWallet, verifyMessage } from "ethers";
import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logging.js";
import { deriveDepositAddress, hdSeedFrom } from "../../src/providers/chains.js";
import { CUSTODY_MNEMONIC_FILE_NAME, CustodyKeyError, CustodyKeys, openCustodyKeys, serviceWalletPath } from "../../src/providers/evm/keys.js";

/** The Hardhat/Anvil test mnemonic: its m/44'/60'/0'/0/0 address is a published vector. */
const WORDS = "test test test test test test test test test test test junk";
const ETHEREUM = "networks/ethereum";
const POLYGON = "networks/polygon";

const dirs: string[] = [];
/** A new empty folder, removed after the file's tests. */
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), "evm-keys-"));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A logger at `debug` writing into `lines` (pino's JSON lines, through the service's own logger). */
function capture(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  return { logger: createLogger("debug", { write: (line: string) => void lines.push(line) }), lines };
}

/** A file holding `text`, mode `mode`. */
function mnemonicFile(text: string, mode = 0o600): string {
  const file = join(folder(), "mnemonic.txt");
  writeFileSync(file, text, { mode });
  chmodSync(file, mode);
  return file;
}

/** The error `run` throws. */
function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("nothing was thrown");
}

describe("a given mnemonic", () => {
  const { logger } = capture();
  const keys = openCustodyKeys([ETHEREUM], { custodyMnemonicFile: mnemonicFile(`${WORDS}\n`), dataDir: folder() }, logger) as CustodyKeys;

  it("gives the gas wallet at m/44'/60'/7'/0/0 and the hot wallet at m/44'/60'/7'/0/1, without a provider", () => {
    expect(serviceWalletPath(0)).toBe("m/44'/60'/7'/0/0");
    expect(keys.gasWallet.address).toBe("0xAF4311d557fBC876059e39306ec1f3343753df29");
    expect(keys.hotWallet.address).toBe("0xd2378898c87F72dE22eb67673fD23889796C694E");
    for (const n of [0, 1, 2]) {
      const path = serviceWalletPath(n);
      expect(keys.serviceWallet(n).address, path).toBe(HDNodeWallet.fromPhrase(WORDS, undefined, path).address);
      expect(keys.serviceWallet(n).path).toBe(path);
    }
    expect(keys.gasWallet.provider).toBeNull();
    expect(keys.serviceWallet(0)).toBe(keys.gasWallet); // derived once
    expect(() => serviceWalletPath(-1)).toThrow(RangeError);
  });

  it("signs as its address (a signer-to-be)", async () => {
    const signature = await keys.hotWallet.signMessage("custody");
    expect(verifyMessage("custody", signature)).toBe(keys.hotWallet.address);
  });

  it("gives the live network's deposit addresses at the sandbox's paths (the published m/44'/60'/0'/0/0 of this mnemonic)", () => {
    const seed = keys.seedFor(ETHEREUM);
    expect(seed).toBeInstanceOf(Uint8Array);
    expect(deriveDepositAddress(ETHEREUM, seed as Uint8Array, 0)).toEqual({ address: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", path: "m/44'/60'/0'/0/0" });
    expect(deriveDepositAddress(ETHEREUM, seed as Uint8Array, 7).address).toBe(HDNodeWallet.fromPhrase(WORDS, undefined, "m/44'/60'/0'/0/7").address);
    // the same seed as the sandbox would take from these words
    expect(seed).toEqual(hdSeedFrom(WORDS));
  });

  it("gives a deposit address's key for its sweeps only at that network's deposit paths and only when it is that address's key", async () => {
    const { address, path } = deriveDepositAddress(ETHEREUM, keys.seedFor(ETHEREUM) as Uint8Array, 3);
    const key = keys.depositWallet(ETHEREUM, path, address.toLowerCase());
    expect(key.address).toBe(address);
    expect(key.provider).toBeNull();
    expect(verifyMessage("sweep", await key.signMessage("sweep"))).toBe(address);
    expect(() => keys.depositWallet(ETHEREUM, path, keys.hotWallet.address)).toThrow(/is not the key of/);
    expect(() => keys.depositWallet(ETHEREUM, "m/44'/60'/7'/0/1", keys.hotWallet.address)).toThrow(/is not a deposit address path/); // never the service's own wallets
    expect(() => keys.depositWallet(ETHEREUM, "m/44'/60'/1'/0/3", address)).toThrow(/is not a deposit address path/); // polygon's account
    expect(() => keys.depositWallet(POLYGON, "m/44'/60'/1'/0/3", address)).toThrow(/not a live network/);
  });

  it("is live on its networks only: another network has no custody seed (its addresses stay SANDBOX_SEED's)", () => {
    expect(keys.isLive(ETHEREUM)).toBe(true);
    expect(keys.isLive(POLYGON)).toBe(false);
    expect(keys.isLive("networks/bitcoin")).toBe(false);
    expect(keys.seedFor(POLYGON)).toBeUndefined();
    expect(keys.networks).toEqual([ETHEREUM]);
  });

  it("hands out copies of the seed: changing one changes no address", () => {
    const seed = keys.seedFor(ETHEREUM) as Uint8Array;
    seed.fill(0);
    expect(deriveDepositAddress(ETHEREUM, keys.seedFor(ETHEREUM) as Uint8Array, 0).address).toBe("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
  });

  it("prints as its public addresses only (JSON and util.inspect)", () => {
    const secrets = [keys.gasWallet.privateKey.slice(2), keys.hotWallet.privateKey.slice(2), Buffer.from(hdSeedFrom(WORDS)).toString("hex"), "junk"];
    for (const text of [JSON.stringify(keys), inspect(keys, { depth: 5, showHidden: true }), JSON.stringify({ keys })]) {
      expect(text).toContain(keys.gasWallet.address);
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
  });

  it("reads the words as BIP-39 and ethers do: upper case and any whitespace", () => {
    const loud = openCustodyKeys([ETHEREUM], { custodyMnemonicFile: mnemonicFile(`  ${WORDS.toUpperCase().split(" ").join(" \t\n ")}  `), dataDir: folder() }, logger) as CustodyKeys;
    expect(loud.gasWallet.address).toBe(keys.gasWallet.address);
  });
});

describe("without CUSTODY_MNEMONIC_FILE", () => {
  it("writes 24 new words into DATA_DIR/custody-mnemonic.txt, mode 0600, logs its path once and none of its words, seed or keys", () => {
    const dataDir = join(folder(), "data"); // created by the start
    const { logger, lines } = capture();
    const keys = openCustodyKeys([ETHEREUM, POLYGON], { custodyMnemonicFile: undefined, dataDir }, logger) as CustodyKeys;
    const file = join(dataDir, CUSTODY_MNEMONIC_FILE_NAME);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const words = readFileSync(file, "utf8").trim().split(" ");
    expect(words).toHaveLength(24);
    for (const word of words) expect(english).toContain(word);
    expect(keys.gasWallet.address).toBe(HDNodeWallet.fromPhrase(words.join(" "), undefined, serviceWalletPath(0)).address);

    const log = lines.join("");
    expect(log.split(file).length - 1, log).toBe(1); // the path, once
    // Every value and key of every line but pino's own (level, time, pid, hostname), as tokens:
    // none is a word of the mnemonic, nor of the BIP-39 list at all (so no word can hide among them).
    const tokens = lines.flatMap((line) => {
      const { level: _l, time: _t, pid: _p, hostname: _h, ...rest } = JSON.parse(line) as Record<string, unknown>;
      return JSON.stringify(rest).split(file).join(" ").match(/[A-Za-z0-9_]+/g) ?? [];
    });
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens.filter((t) => words.includes(t))).toEqual([]);
    expect(tokens.filter((t) => english.includes(t))).toEqual([]);
    expect(log).not.toContain(words.slice(0, 2).join(" "));
    for (const secret of [Buffer.from(hdSeedFrom(words.join(" "))).toString("hex"), keys.gasWallet.privateKey.slice(2), keys.hotWallet.privateKey.slice(2)]) {
      expect(log).not.toContain(secret);
    }
    // the addresses an operator funds are logged
    expect(log).toContain(keys.gasWallet.address);
    expect(log).toContain(keys.hotWallet.address);
  });

  it("reuses the file on the next start and never overwrites it", () => {
    const dataDir = folder();
    const first = openCustodyKeys([ETHEREUM], { custodyMnemonicFile: undefined, dataDir }, capture().logger) as CustodyKeys;
    const file = join(dataDir, CUSTODY_MNEMONIC_FILE_NAME);
    const written = readFileSync(file, "utf8");
    const { logger, lines } = capture();
    const again = openCustodyKeys([ETHEREUM], { custodyMnemonicFile: undefined, dataDir }, logger) as CustodyKeys;
    expect(readFileSync(file, "utf8")).toBe(written);
    expect(again.gasWallet.address).toBe(first.gasWallet.address);
    expect(lines.join("")).not.toContain(file); // logged at its creation only
  });

  it("refuses a generated file group or others may read, naming it", () => {
    const dataDir = folder();
    openCustodyKeys([ETHEREUM], { custodyMnemonicFile: undefined, dataDir }, capture().logger);
    const file = join(dataDir, CUSTODY_MNEMONIC_FILE_NAME);
    chmodSync(file, 0o644);
    const error = thrown(() => openCustodyKeys([ETHEREUM], { custodyMnemonicFile: undefined, dataDir }, capture().logger));
    expect(error).toBeInstanceOf(CustodyKeyError);
    expect(error.message).toContain(file);
    expect(error.message).toContain("chmod 600");
  });

  it("reads and writes nothing without a live network", () => {
    const dataDir = join(folder(), "data");
    const { logger, lines } = capture();
    expect(openCustodyKeys([], { custodyMnemonicFile: undefined, dataDir }, logger)).toBeUndefined();
    expect(openCustodyKeys([], { custodyMnemonicFile: join(dataDir, "missing.txt"), dataDir }, logger)).toBeUndefined();
    expect(() => statSync(dataDir)).toThrow(/ENOENT/);
    expect(lines).toEqual([]);
  });
});

describe("an unusable CUSTODY_MNEMONIC_FILE stops the start, naming the file and never its content", () => {
  const start = (file: string) => thrown(() => openCustodyKeys([POLYGON], { custodyMnemonicFile: file, dataDir: folder() }, capture().logger));

  it.each([
    ["a wrong checksum", "test test test test test test test test test test test test"],
    ["a word outside the English list", "test test test test test test test test test test test junkk"],
    ["11 words", "test test test test test test test test test test junk"],
    ["an empty file", ""],
    ["a private key instead", "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"],
  ])("%s", (_case, text) => {
    const file = mnemonicFile(text);
    const error = start(file);
    expect(error).toBeInstanceOf(CustodyKeyError);
    expect(error.message).toContain(file);
    expect(error.message).toMatch(/not hold a valid BIP-39 English mnemonic/);
    const rest = error.message.split(file).join("");
    for (const word of text.split(" ").filter((w) => w !== "")) expect(rest).not.toContain(word);
  });

  it("a missing file", () => {
    const file = join(folder(), "absent.txt");
    const error = start(file);
    expect(error).toBeInstanceOf(CustodyKeyError);
    expect(error.message).toContain(file);
    expect(error.message).toContain("ENOENT");
    expect(() => statSync(file)).toThrow(/ENOENT/); // not created: only the DATA_DIR file is generated
  });

  it("a folder instead of a file", () => {
    const dir = folder();
    const error = start(dir);
    expect(error).toBeInstanceOf(CustodyKeyError);
    expect(error.message).toContain(dir);
  });

  it("a file group or others may read is used, with a warning naming it (mounted secrets often are 0644)", () => {
    const file = mnemonicFile(WORDS, 0o644);
    const { logger, lines } = capture();
    const keys = openCustodyKeys([ETHEREUM], { custodyMnemonicFile: file, dataDir: folder() }, logger) as CustodyKeys;
    expect(keys.gasWallet.address).toBe("0xAF4311d557fBC876059e39306ec1f3343753df29");
    const warning = lines.map((line) => JSON.parse(line) as { level: number; mnemonicFile?: string; mode?: string }).find((l) => l.level === 40);
    expect(warning).toMatchObject({ mnemonicFile: file, mode: "0644" });
  });
});

/**
 * Sandbox chain addresses (docs/decisions/provider-and-sandbox.md "Deposit addresses"): deposit addresses derived deterministically from
 * SANDBOX_SEED with the chains' own libraries, checked against published vectors of the BIP39 test
 * mnemonic; withdrawal destinations validated per network; transaction hashes in each network's format.
 */
import { sha512 } from "@noble/hashes/sha2.js";
import { base58, bech32, bech32m, hex } from "@scure/base";
import { getIcapAddress } from "ethers";
import { describe, expect, it } from "vitest";
import { DomainError, quote } from "../../src/domain/errors.js";
import { SandboxProvider } from "../../src/providers/sandbox.js";
import {
  deriveDepositAddress,
  hdSeedFrom,
  isNetworkId,
  isValidAddress,
  MAX_ADDRESS_LENGTH,
  NETWORKS,
  transactionHash,
  type NetworkId,
} from "../../src/providers/chains.js";

const TEST_MNEMONIC =
  "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about";
const seed = hdSeedFrom(TEST_MNEMONIC);

/** Published vectors of TEST_MNEMONIC (empty passphrase), index 0 of each network's path. */
const VECTORS: Record<Exclude<NetworkId, "networks/polygon">, { path: string; address: string }> = {
  "networks/bitcoin": { path: "m/84'/1'/0'/0/0", address: "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl" },
  "networks/ethereum": { path: "m/44'/60'/0'/0/0", address: "0x9858EfFD232B4033E47d90003D41EC34EcaEda94" },
  "networks/tron": { path: "m/44'/195'/0'/0/0", address: "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH" },
  "networks/solana": { path: "m/44'/501'/0'/0'", address: "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk" },
};

/** Networks sharing an address format (EVM): an address of one is valid on the other. */
const SAME_FORMAT = (a: NetworkId, b: NetworkId) =>
  a === b || (["networks/ethereum", "networks/polygon"].includes(a) && ["networks/ethereum", "networks/polygon"].includes(b));

describe("networks", () => {
  it("lists the five networks of docs/decisions/provider-and-sandbox.md#deposit-addresses and recognises exactly them", () => {
    expect(NETWORKS).toEqual([
      "networks/bitcoin",
      "networks/ethereum",
      "networks/polygon",
      "networks/tron",
      "networks/solana",
    ]);
    for (const n of NETWORKS) expect(isNetworkId(n)).toBe(true);
    for (const n of ["bitcoin", "networks/Bitcoin", "networks/litecoin", "", "networks/"]) {
      expect(isNetworkId(n)).toBe(false);
    }
  });
});

describe("hdSeedFrom", () => {
  it("gives the BIP39 seed of a valid mnemonic (published vector, empty passphrase)", () => {
    expect(hex.encode(seed)).toBe(
      "5eb00bbddcf069084889a8ab9155568165f5c453ccb85e70811aaed6f6da5fc1" +
        "9a5ac40b389cd370d086206dec8aa6c43daea6690f20ad3d8d48b2d2ce9e38e4",
    );
  });

  it("normalises whitespace around and between the words of a mnemonic", () => {
    const spaced = `  ${TEST_MNEMONIC.split(" ").join("  ")}\n`;
    expect(hdSeedFrom(spaced)).toEqual(seed);
  });

  it("gives SHA-512 of the UTF-8 bytes of any other string, deterministically", () => {
    const s = "sandbox-seed-ñ-for-tests";
    const a = hdSeedFrom(s);
    expect(a).toHaveLength(64);
    expect(a).toEqual(sha512(new TextEncoder().encode(s)));
    expect(hdSeedFrom(s)).toEqual(a);
    expect(hdSeedFrom(`${s}2`)).not.toEqual(a);
  });

  it("treats a mnemonic with a bad checksum as an ordinary string", () => {
    const badChecksum = Array(12).fill("abandon").join(" ");
    expect(hdSeedFrom(badChecksum)).toEqual(sha512(new TextEncoder().encode(badChecksum)));
  });
});

describe("deriveDepositAddress", () => {
  for (const [network, vector] of Object.entries(VECTORS) as [NetworkId, { path: string; address: string }][]) {
    it(`matches the published vector of ${network} (${vector.path})`, () => {
      expect(deriveDepositAddress(network, seed, 0)).toEqual(vector);
    });
  }

  it("derives polygon on its own account, so polygon and ethereum addresses differ", () => {
    const polygon = deriveDepositAddress("networks/polygon", seed, 0);
    expect(polygon.path).toBe("m/44'/60'/1'/0/0");
    expect(polygon.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    for (const index of [0, 1, 2, 7]) {
      expect(deriveDepositAddress("networks/polygon", seed, index).address).not.toBe(
        deriveDepositAddress("networks/ethereum", seed, index).address,
      );
    }
  });

  it("puts the index in the path", () => {
    expect(deriveDepositAddress("networks/bitcoin", seed, 5).path).toBe("m/84'/1'/0'/0/5");
    expect(deriveDepositAddress("networks/ethereum", seed, 5).path).toBe("m/44'/60'/0'/0/5");
    expect(deriveDepositAddress("networks/polygon", seed, 5).path).toBe("m/44'/60'/1'/0/5");
    expect(deriveDepositAddress("networks/tron", seed, 5).path).toBe("m/44'/195'/0'/0/5");
    expect(deriveDepositAddress("networks/solana", seed, 5).path).toBe("m/44'/501'/5'/0'");
  });

  it("is deterministic: same seed and index → same address; another index → another address", () => {
    for (const network of NETWORKS) {
      const again = hdSeedFrom(TEST_MNEMONIC); // a fresh array with the same bytes
      const a = deriveDepositAddress(network, seed, 3);
      expect(deriveDepositAddress(network, again, 3)).toEqual(a);
      const addresses = new Set([0, 1, 2, 3, 4].map((i) => deriveDepositAddress(network, seed, i).address));
      expect(addresses.size).toBe(5);
    }
  });

  it("works with a non-mnemonic seed string, deterministically, and differently from another seed", () => {
    const other = hdSeedFrom("not a mnemonic: just the sandbox seed");
    for (const network of NETWORKS) {
      const a = deriveDepositAddress(network, other, 0);
      expect(deriveDepositAddress(network, hdSeedFrom("not a mnemonic: just the sandbox seed"), 0)).toEqual(a);
      expect(a.address).not.toBe(deriveDepositAddress(network, seed, 0).address);
      expect(isValidAddress(network, a.address)).toBe(true);
    }
  });

  it("uses each network's format (testnet where there is one)", () => {
    expect(deriveDepositAddress("networks/bitcoin", seed, 9).address).toMatch(/^tb1q[02-9ac-hj-np-z]{38}$/);
    expect(deriveDepositAddress("networks/ethereum", seed, 9).address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(deriveDepositAddress("networks/tron", seed, 9).address).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    expect(base58.decode(deriveDepositAddress("networks/solana", seed, 9).address)).toHaveLength(32);
  });

  it("rejects indexes that are not integers in [0, 2^31)", () => {
    for (const index of [-1, 1.5, 2 ** 31, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => deriveDepositAddress("networks/ethereum", seed, index)).toThrow(RangeError);
      expect(() => deriveDepositAddress("networks/solana", seed, index)).toThrow(RangeError);
    }
    expect(deriveDepositAddress("networks/bitcoin", seed, 2 ** 31 - 1).path).toBe(`m/84'/1'/0'/0/${2 ** 31 - 1}`);
  });
});

describe("isValidAddress", () => {
  const seeds = [seed, hdSeedFrom("another sandbox seed")];

  it("accepts every derived address on its own network and rejects it where formats differ", () => {
    for (const s of seeds) {
      for (const index of [0, 1, 2, 3, 10, 100]) {
        for (const network of NETWORKS) {
          const { address } = deriveDepositAddress(network, s, index);
          for (const target of NETWORKS) {
            expect([target, address, isValidAddress(target, address)]).toEqual([
              target,
              address,
              SAME_FORMAT(network, target),
            ]);
          }
        }
      }
    }
  });

  describe("bitcoin (testnet)", () => {
    const valid = (a: string) => isValidAddress("networks/bitcoin", a);
    // BIP86 vector of TEST_MNEMONIC (m/86'/0'/0'/0/0): its output key is a valid x-only point.
    const BIP86_OUTPUT_KEY = hex.decode("a60869f0dbcf1dc659c9cecbaf8050135ea9e8cdc487053f1dc6880949dc684c");
    const segwit = (prefix: string, version: number, program: Uint8Array, coder = version === 0 ? bech32 : bech32m) =>
      coder.encode(prefix, [version, ...coder.toWords(program)]);

    it("accepts testnet P2PKH, P2SH, P2WPKH, P2WSH and P2TR", () => {
      expect(valid("mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJV")).toBe(true); // P2PKH, m/44'/1'/0'/0/0
      expect(valid("2Mww8dCYPUpKHofjgcXcBCEGmniw9CoaiD2")).toBe(true); // P2SH-P2WPKH, m/49'/1'/0'/0/0
      expect(valid("tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl")).toBe(true); // P2WPKH
      expect(valid("tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7")).toBe(true); // P2WSH (BIP173)
      expect(valid("TB1QRP33G0Q5C5TXSP9ARYSRX4K6ZDKFS4NCE4XJ0GDCCCEFVPYSXF3Q0SL5K7")).toBe(true); // all upper case
      expect(valid(segwit("tb", 1, BIP86_OUTPUT_KEY))).toBe(true); // P2TR
    });

    it("rejects mainnet addresses (the sandbox is a testnet)", () => {
      expect(valid("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu")).toBe(false); // BIP84 vector
      expect(valid("bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr")).toBe(false); // BIP86 vector
      expect(valid("1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA")).toBe(false); // BIP44 P2PKH vector
      expect(valid("37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf")).toBe(false); // BIP49 P2SH vector
    });

    it("rejects bad checksums, truncation, mixed case, wrong encodings and unknown witness versions", () => {
      const good = "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl";
      expect(valid(`${good.slice(0, -1)}m`)).toBe(false); // checksum
      expect(valid(good.slice(0, -1))).toBe(false); // truncated
      expect(valid(`Tb1q${good.slice(4)}`)).toBe(false); // mixed case
      expect(valid("mkpZhYtJu2r87Js3pDiWJDmPte2NRZ8bJW")).toBe(false); // base58 checksum
      expect(valid(segwit("tb", 1, BIP86_OUTPUT_KEY, bech32))).toBe(false); // v1 with bech32, not bech32m
      expect(valid(segwit("tb", 0, new Uint8Array(20).fill(7), bech32m))).toBe(false); // v0 with bech32m
      expect(valid(segwit("tb", 1, new Uint8Array(32)))).toBe(false); // x = 0 is not on secp256k1
      expect(valid(segwit("tb", 1, BIP86_OUTPUT_KEY.subarray(0, 31)))).toBe(false); // 31-byte program
      expect(valid(segwit("tb", 2, BIP86_OUTPUT_KEY))).toBe(false); // future segwit version
      expect(valid(segwit("tb", 0, new Uint8Array(25)))).toBe(false); // v0 program neither 20 nor 32 bytes
      expect(valid("")).toBe(false);
      expect(valid(` ${good}`)).toBe(false);
    });
  });

  describe("ethereum and polygon", () => {
    const checksummed = VECTORS["networks/ethereum"].address;

    it("accepts EIP-55, all-lowercase and all-uppercase hex", () => {
      for (const network of ["networks/ethereum", "networks/polygon"] as const) {
        expect(isValidAddress(network, checksummed)).toBe(true);
        expect(isValidAddress(network, checksummed.toLowerCase())).toBe(true);
        expect(isValidAddress(network, `0x${checksummed.slice(2).toUpperCase()}`)).toBe(true);
      }
    });

    it("rejects a bad EIP-55 checksum, truncation, a missing 0x, ICAP and non-hex", () => {
      for (const network of ["networks/ethereum", "networks/polygon"] as const) {
        expect(isValidAddress(network, "0x9858efFD232B4033E47d90003D41EC34EcaEda94")).toBe(false); // E → e
        expect(isValidAddress(network, checksummed.slice(0, -1))).toBe(false);
        expect(isValidAddress(network, `${checksummed}00`)).toBe(false);
        expect(isValidAddress(network, checksummed.slice(2))).toBe(false);
        expect(isValidAddress(network, getIcapAddress(checksummed))).toBe(false);
        expect(isValidAddress(network, `0x${"g".repeat(40)}`)).toBe(false);
        expect(isValidAddress(network, "")).toBe(false);
      }
    });
  });

  describe("tron", () => {
    const valid = (a: string) => isValidAddress("networks/tron", a);
    const good = VECTORS["networks/tron"].address;

    it("rejects the hex form, bad checksums, truncation and other base58check prefixes", () => {
      expect(valid(good)).toBe(true);
      // The same address in hex (0x41 ‖ 20 bytes), which TronWeb.isAddress alone would accept.
      const hexForm = hex.encode(base58.decode(good).subarray(0, 21));
      expect(hexForm).toBe("41c8599111f29c1e1e061265b4af93ea1f274ad78a");
      expect(valid(hexForm)).toBe(false);
      expect(valid(`0x${hexForm.slice(2)}`)).toBe(false);
      expect(valid(`${good.slice(0, -1)}J`)).toBe(false); // checksum
      expect(valid(good.slice(0, -1))).toBe(false); // truncated
      expect(valid("1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA")).toBe(false); // base58check, version 0x00
      expect(valid(VECTORS["networks/ethereum"].address)).toBe(false);
      expect(valid("")).toBe(false);
    });
  });

  describe("solana", () => {
    const valid = (a: string) => isValidAddress("networks/solana", a);

    it("accepts base58 of 32 bytes and rejects other lengths and non-base58", () => {
      expect(valid(VECTORS["networks/solana"].address)).toBe(true);
      expect(valid("11111111111111111111111111111111")).toBe(true); // the system program (32 zero bytes)
      expect(valid(base58.encode(new Uint8Array(31).fill(200)))).toBe(false);
      expect(valid(base58.encode(new Uint8Array(33).fill(200)))).toBe(false);
      expect(valid(base58.encode(new Uint8Array(64).fill(200)))).toBe(false);
      expect(valid(`${VECTORS["networks/solana"].address.slice(0, -1)}0`)).toBe(false); // '0' is not base58
      expect(valid(VECTORS["networks/tron"].address)).toBe(false); // 25 bytes
      expect(valid("")).toBe(false);
    });
  });

  describe("length guard (docs/decisions/requests-and-validation.md#every-string-has-a-maximum-length: a 160 000-character address held the event loop for 23 s)", () => {
    /** Inputs that reach the quadratic decoders of bitcoinjs-lib (bech32, base58) and the others' parsers. */
    const huge = (n: number) => [`tb1q${"q".repeat(n)}`, `tb1p${"p".repeat(n)}`, `2${"1".repeat(n)}`, `m${"z".repeat(n)}`, `T${"1".repeat(n)}`, `0x${"a".repeat(n)}`, "1".repeat(n)];

    it("refuses a 160 000-character address on every network in well under 50 ms, without decoding it", () => {
      for (const network of NETWORKS) {
        for (const address of huge(160_000)) {
          const started = performance.now();
          expect(isValidAddress(network, address)).toBe(false);
          const elapsed = performance.now() - started;
          // generous bound: the guard is a length check; decoding this input took seconds (bitcoin: 23 s)
          expect(elapsed, `${network} ${address.slice(0, 8)}…`).toBeLessThan(50);
        }
      }
    });

    it(`decodes up to ${MAX_ADDRESS_LENGTH} characters (every valid address is far shorter) and refuses anything longer`, () => {
      const p2wsh = bech32.encode("tb", [0, ...bech32.toWords(new Uint8Array(32).fill(7))]);
      expect(p2wsh.length).toBe(62);
      expect(isValidAddress("networks/bitcoin", p2wsh)).toBe(true);
      for (const network of NETWORKS) {
        for (const address of huge(MAX_ADDRESS_LENGTH)) expect(isValidAddress(network, address.slice(0, MAX_ADDRESS_LENGTH + 1))).toBe(false);
        const own = deriveDepositAddress(network, seed, 0).address;
        expect(own.length).toBeLessThanOrEqual(MAX_ADDRESS_LENGTH);
        expect(isValidAddress(network, own + " ".repeat(MAX_ADDRESS_LENGTH))).toBe(false);
      }
    });

    it("the sandbox provider refuses a 160 000-character destination fast, and its error repeats only a short quoted prefix", async () => {
      const provider = new SandboxProvider("sandbox-default-seed");
      const address = `tb1q${"q".repeat(160_000)}`;
      const started = performance.now();
      expect(provider.isValidAddress("networks/bitcoin", address)).toBe(false);
      const error = await provider
        .executeWithdrawal(null as never, { vaultWalletId: "v", network: "networks/bitcoin", currency: "btc", amount: "1", address })
        .then(() => null, (e: unknown) => e);
      expect(performance.now() - started).toBeLessThan(50);
      if (!(error instanceof DomainError)) throw new Error(`expected a DomainError, got ${String(error)}`);
      expect(error.code).toBe("CRYPTO_WITHDRAWAL_FAILED");
      expect(error.message).toContain(quote(address));
      expect(error.message.length).toBeLessThan(120);
    });
  });
});

describe("transactionHash", () => {
  const entropy = sha512(new TextEncoder().encode("entropy")).subarray(0, 32);
  const otherEntropy = sha512(new TextEncoder().encode("other entropy")).subarray(0, 32);
  const FORMATS: Record<NetworkId, RegExp> = {
    "networks/bitcoin": /^[0-9a-f]{64}$/,
    "networks/ethereum": /^0x[0-9a-f]{64}$/,
    "networks/polygon": /^0x[0-9a-f]{64}$/,
    "networks/tron": /^[0-9a-f]{64}$/,
    "networks/solana": /^[1-9A-HJ-NP-Za-km-z]{86,88}$/,
  };

  it("has each network's format, deterministically", () => {
    for (const network of NETWORKS) {
      const h = transactionHash(network, entropy);
      expect(h).toMatch(FORMATS[network]);
      expect(transactionHash(network, Uint8Array.from(entropy))).toBe(h);
      expect(transactionHash(network, otherEntropy)).not.toBe(h);
    }
  });

  it("is the entropy itself in hex, and a 64-byte signature starting with the entropy on solana", () => {
    expect(transactionHash("networks/bitcoin", entropy)).toBe(hex.encode(entropy));
    expect(transactionHash("networks/ethereum", entropy)).toBe(`0x${hex.encode(entropy)}`);
    const signature = base58.decode(transactionHash("networks/solana", entropy));
    expect(signature).toHaveLength(64);
    expect(signature.subarray(0, 32)).toEqual(entropy);
  });

  it("requires exactly 32 bytes of entropy", () => {
    expect(() => transactionHash("networks/bitcoin", new Uint8Array(31))).toThrow(RangeError);
    expect(() => transactionHash("networks/solana", new Uint8Array(64))).toThrow(RangeError);
  });
});

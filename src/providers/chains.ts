/**
 * Chain addresses of the sandbox provider (docs/decisions/provider-and-sandbox.md "Deposit addresses"): deposit addresses are real, valid
 * addresses derived deterministically from `SANDBOX_SEED` by HD derivation with well-kept chain
 * libraries, in testnet formats where the network has them; the same libraries validate
 * withdrawal destinations (`INVALID_CRYPTO_ADDRESS`) and shape the sandbox's transaction hashes.
 *
 * Pure and offline: no function here makes a network call. The chain libraries (ethers,
 * bitcoinjs-lib, tronweb, @scure/bip32, micro-key-producer, @solana/addresses) are loaded lazily,
 * each once, the first time an address of a network that needs it is derived or validated: together
 * they cost about half a second and some 40 MB at start, which a process that never touches an
 * address (a worker, a credit-only tenant) does not need (docs/operations.md "Start and memory").
 */
import { createRequire } from "node:module";
import { sha512 } from "@noble/hashes/sha2.js";
import { base58, hex } from "@scure/base";
import { mnemonicToSeedSync, validateMnemonic } from "@scure/bip39";
import { wordlist as english } from "@scure/bip39/wordlists/english.js";

/**
 * Chain network identifiers (reference: Wallet › networks[].name; docs/decisions/provider-and-sandbox.md
 * "Deposit addresses" lists these five). The bank rails, also vault networks, are in
 * src/providers/virtual-accounts.ts: none of them is a {@link NetworkId}.
 */
export const NETWORKS = [
  "networks/bitcoin",
  "networks/ethereum",
  "networks/polygon",
  "networks/tron",
  "networks/solana",
] as const;

/** One of {@link NETWORKS}. */
export type NetworkId = (typeof NETWORKS)[number];

/** Whether `value` is one of {@link NETWORKS} (exact, case-sensitive match). */
export function isNetworkId(value: string): value is NetworkId {
  return (NETWORKS as readonly string[]).includes(value);
}

/**
 * The 64-byte HD seed of a `SANDBOX_SEED` (docs/decisions/provider-and-sandbox.md "Deposit addresses").
 *
 * - A valid BIP39 English mnemonic (checksum included) gives its BIP39 seed with the empty
 *   passphrase. Surrounding whitespace and runs of whitespace between words are normalised to
 *   single spaces first, so a value read with a trailing newline is still the same mnemonic.
 * - Any other string gives SHA-512 of its UTF-8 bytes (as given, not normalised).
 *
 * Same string → same seed, always.
 */
export function hdSeedFrom(sandboxSeed: string): Uint8Array {
  const words = sandboxSeed.trim().split(/\s+/).join(" ");
  if (validateMnemonic(words, english)) return mnemonicToSeedSync(words);
  return sha512(new TextEncoder().encode(sandboxSeed));
}

/** BIP32 / SLIP-0010 derivation path of deposit address number `index` on each network. */
const DERIVATION_PATHS: Record<NetworkId, (index: number) => string> = {
  // BIP84, coin type 1 (testnet): native segwit P2WPKH.
  "networks/bitcoin": (i) => `m/84'/1'/0'/0/${i}`,
  // BIP44, coin type 60, account 0.
  "networks/ethereum": (i) => `m/44'/60'/0'/0/${i}`,
  // EVM like ethereum, but account 1, so that a wallet's polygon and ethereum addresses differ.
  "networks/polygon": (i) => `m/44'/60'/1'/0/${i}`,
  // BIP44, coin type 195.
  "networks/tron": (i) => `m/44'/195'/0'/0/${i}`,
  // SLIP-0010 ed25519 (hardened only), the Phantom/Solflare/`solana-keygen` layout.
  "networks/solana": (i) => `m/44'/501'/${i}'/0'`,
};

/** Largest index + 1: BIP32 child numbers ≥ 2^31 are hardened, so `index` must stay below. */
const INDEX_LIMIT = 0x8000_0000;

/**
 * The deposit address number `index` (0, 1, 2, …) of `network` under `seed` (docs/decisions/provider-and-sandbox.md "Deposit addresses").
 * Deterministic: the same `(network, seed, index)` always gives the same address.
 *
 * @param seed the HD seed, normally {@link hdSeedFrom}`(SANDBOX_SEED)` (16–64 bytes; BIP32 limit)
 * @param index a non-negative integer below 2^31
 * @returns `address` in the network's own encoding (bitcoin: testnet bech32 `tb1q…`;
 *   ethereum/polygon: EIP-55 `0x…`; tron: base58check `T…`; solana: base58 of the 32-byte
 *   ed25519 public key) and the derivation `path` it came from (e.g. `m/84'/1'/0'/0/3`)
 * @throws RangeError when `index` is not an integer in [0, 2^31)
 */
export function deriveDepositAddress(
  network: NetworkId,
  seed: Uint8Array,
  index: number,
): { address: string; path: string } {
  if (!Number.isInteger(index) || index < 0 || index >= INDEX_LIMIT) {
    throw new RangeError(`deposit address index must be an integer in [0, 2^31), got ${index}`);
  }
  const path = DERIVATION_PATHS[network](index);
  if (network === "networks/solana") {
    return { address: base58.encode(lib.slip10().HDKey.fromMasterSeed(seed).derive(path).publicKeyRaw), path };
  }
  const publicKey = lib.bip32().HDKey.fromMasterSeed(seed).derive(path).publicKey; // 33-byte compressed secp256k1
  if (!publicKey) throw new Error(`no public key at ${path}`); // unreachable: derived from a private key
  switch (network) {
    case "networks/bitcoin": {
      const { payments, networks } = lib.bitcoin();
      const { address } = payments.p2wpkh({ pubkey: publicKey, network: networks.testnet });
      if (!address) throw new Error(`bitcoinjs-lib gave no address at ${path}`); // unreachable
      return { address, path };
    }
    case "networks/ethereum":
    case "networks/polygon":
      return { address: lib.ethers().computeAddress(lib.ethers().hexlify(publicKey)), path };
    case "networks/tron":
      // Tron = 0x41 ‖ the EVM address bytes (keccak of the uncompressed key), base58check-encoded.
      // ethers decompresses the key; tronweb's own `computeAddress` expects a 65-byte key.
      return { address: lib.tron().fromHex(`41${lib.ethers().computeAddress(lib.ethers().hexlify(publicKey)).slice(2)}`), path };
  }
}

/**
 * Longest destination address {@link isValidAddress} decodes: no address of a supported network is
 * longer (bitcoin bech32 P2WSH/P2TR 62, solana ≤ 44, ethereum/polygon 42, tron 34), and the
 * contract's `address` has the same bound. Longer input is refused before any library sees it:
 * bitcoinjs-lib's base58 and bech32 decoding is quadratic in the length (a 160 000-character
 * string held the event loop for 23 s), so callers that bypass the HTTP layer are bounded too.
 */
export const MAX_ADDRESS_LENGTH = 128;

/**
 * Whether `address` is a valid withdrawal destination on `network` (checksums included), as the
 * network's own library decodes it. Whitespace is not trimmed: `" 0xab…"` is invalid. Anything
 * longer than {@link MAX_ADDRESS_LENGTH} is invalid without being decoded.
 *
 * - bitcoin (testnet only; mainnet `1…`/`3…`/`bc1…` are rejected): base58check P2PKH `m…`/`n…`,
 *   P2SH `2…`, bech32 P2WPKH/P2WSH `tb1q…`, bech32m P2TR `tb1p…` (its key must be a valid
 *   x-only secp256k1 point). Future segwit versions (`tb1z…` etc.) are rejected.
 * - ethereum/polygon: `0x` + 40 hex; all-lowercase or all-uppercase, or mixed case matching EIP-55.
 *   ICAP (`XE…`) and unprefixed hex, which ethers would accept, are rejected.
 * - tron: base58check `T…` (prefix byte 0x41); the hex form (`41…`) is rejected.
 * - solana: base58 of exactly 32 bytes (any 32-byte key, on-curve or not).
 */
export function isValidAddress(network: NetworkId, address: string): boolean {
  if (typeof address !== "string" || address.length === 0 || address.length > MAX_ADDRESS_LENGTH) return false;
  switch (network) {
    case "networks/bitcoin":
      return isValidBitcoinTestnetAddress(address);
    case "networks/ethereum":
    case "networks/polygon":
      return /^0x[0-9a-fA-F]{40}$/.test(address) && lib.ethers().isAddress(address);
    case "networks/tron":
      return address.startsWith("T") && lib.tron().isAddress(address);
    case "networks/solana":
      return lib.solana().isAddress(address);
  }
}

function isValidBitcoinTestnetAddress(address: string): boolean {
  if (/^tb1p/i.test(address)) return isValidTaprootTestnetAddress(address);
  if (/^tb1/i.test(address) && !/^tb1q/i.test(address)) return false; // future segwit versions
  const { address: btcAddress, networks } = lib.bitcoin();
  try {
    btcAddress.toOutputScript(address, networks.testnet);
    return true;
  } catch {
    return false;
  }
}

/**
 * bitcoinjs-lib's `toOutputScript` needs a global `initEccLib(...)` (an ECC library this project
 * does not carry) to check a taproot output key. Same checks without it: bitcoinjs-lib decodes the
 * bech32m address (checksum, witness version 1, 32-byte program, `tb` prefix) and ethers
 * (noble secp256k1) checks the program is an x-only point (BIP340 `lift_x`, even y).
 */
function isValidTaprootTestnetAddress(address: string): boolean {
  const { address: btcAddress, networks } = lib.bitcoin();
  try {
    const { version, prefix, data } = btcAddress.fromBech32(address);
    if (version !== 1 || prefix !== networks.testnet.bech32 || data.length !== 32) return false;
    lib.ethers().SigningKey.computePublicKey(Uint8Array.of(0x02, ...data));
    return true;
  } catch {
    return false;
  }
}

/**
 * A transaction hash in `network`'s own format, from 32 bytes of entropy (the sandbox's deposits
 * and withdrawals; docs/decisions/provider-and-sandbox.md "Test helpers"). Same entropy → same hash.
 *
 * - bitcoin: 64 lowercase hex (the txid, no prefix);
 * - ethereum/polygon: `0x` + 64 lowercase hex;
 * - tron: 64 lowercase hex (no prefix);
 * - solana: base58 of a 64-byte signature, `entropy ‖ SHA-512(entropy)[0..32)` (87–88 characters).
 *
 * @throws RangeError when `entropy` is not exactly 32 bytes
 */
export function transactionHash(network: NetworkId, entropy: Uint8Array): string {
  if (entropy.length !== 32) throw new RangeError(`transaction hash entropy must be 32 bytes, got ${entropy.length}`);
  switch (network) {
    case "networks/bitcoin":
    case "networks/tron":
      return hex.encode(entropy);
    case "networks/ethereum":
    case "networks/polygon":
      return `0x${hex.encode(entropy)}`;
    case "networks/solana": {
      const signature = new Uint8Array(64);
      signature.set(entropy, 0);
      signature.set(sha512(entropy).subarray(0, 32), 32);
      return base58.encode(signature);
    }
  }
}

const load = createRequire(import.meta.url);

/** Memoises a synchronous `require` of one library. */
function once<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= load(specifier) as T);
}

/**
 * The chain libraries, each loaded on first use with a synchronous `require` so the functions above
 * stay synchronous: the dual packages (ethers, bitcoinjs-lib, tronweb) through their CommonJS builds,
 * the ESM-only ones (@scure/bip32, micro-key-producer, @solana/addresses) through Node's
 * `require(esm)`. tronweb's offline utilities are `tronweb/utils` (`fromHex`, `isAddress` =
 * `TronWeb.isAddress`): its full module graph costs ~100 ms and several MB, which only Tron needs.
 */
const lib = {
  ethers: once<typeof import("ethers")>("ethers"),
  bitcoin: once<typeof import("bitcoinjs-lib")>("bitcoinjs-lib"),
  bip32: once<typeof import("@scure/bip32")>("@scure/bip32"),
  slip10: once<typeof import("micro-key-producer/slip10.js")>("micro-key-producer/slip10.js"),
  solana: once<typeof import("@solana/addresses")>("@solana/addresses"),
  tron: once<typeof import("tronweb/utils")>("tronweb/utils"),
};

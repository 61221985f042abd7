/**
 * The sandbox's bank rails (docs/decisions/fiat.md "Rails and virtual accounts";
 * src/providers/virtual-accounts.ts): virtual accounts derived from a rail's derivation index —
 * valid IBANs on `networks/sepa`, ABA routing/account pairs on `networks/ach`, one per index —
 * the rails' transfer references, and what the sandbox provider does with the rails.
 */
import { validate as isValidAbaRouting } from "abavalidator";
import { electronicFormatIBAN, isSEPACountry, isValidIBAN } from "ibantools";
import { describe, expect, it } from "vitest";
import { checkBankAccount } from "../../src/domain/bank-accounts.js";
import { NETWORKS } from "../../src/providers/chains.js";
import { SandboxProvider } from "../../src/providers/sandbox.js";
import { SANDBOX_CURRENCIES } from "../../src/providers/sandbox-catalogue.js";
import {
  isRailId,
  RAILS,
  railReference,
  SANDBOX_ACH_ROUTING_NUMBER,
  SANDBOX_SEPA_BANK_CODE,
  virtualAccount,
} from "../../src/providers/virtual-accounts.js";

/** ISO 7064 mod 97-10 of an IBAN, computed here without ibantools: 1 for a valid one. */
function ibanMod97(iban: string): bigint {
  const rearranged = `${iban.slice(4)}${iban.slice(0, 4)}`;
  const digits = [...rearranged].map((ch) => (/[A-Z]/.test(ch) ? String(ch.charCodeAt(0) - 55) : ch)).join("");
  return BigInt(digits) % 97n;
}

/** The ABA checksum (weights 3, 7, 1), computed here without abavalidator. */
function abaChecksumOk(routing: string): boolean {
  const weights = [3, 7, 1, 3, 7, 1, 3, 7, 1];
  return [...routing].reduce((sum, d, i) => sum + Number(d) * (weights[i] as number), 0) % 10 === 0;
}

const SAMPLE_INDEXES = [0, 1, 2, 9, 10, 97, 12345, 999_999_999, 1_000_000_000, 2 ** 31 - 1];

describe("the rails", () => {
  it("are networks/ach and networks/sepa, recognised exactly, and none is a chain network", () => {
    expect(RAILS).toEqual(["networks/ach", "networks/sepa"]);
    for (const r of RAILS) expect(isRailId(r)).toBe(true);
    for (const n of [...NETWORKS, "networks/SEPA", "sepa", "networks/ach ", ""]) expect(isRailId(n), n).toBe(false);
    expect(RAILS.some((r) => (NETWORKS as readonly string[]).includes(r))).toBe(false);
  });

  it("hold usd (ach) and eur (sepa) in the sandbox catalogue, with every custody flag on and no confirmations", () => {
    const usd = SANDBOX_CURRENCIES.find((c) => c.code === "usd");
    const eur = SANDBOX_CURRENCIES.find((c) => c.code === "eur");
    const held = { isFiat: true, precision: 2, canDeposit: true, canWithdraw: true, isCustodyEnabled: true, isConfirmationsNeeded: false };
    expect(usd).toMatchObject({ ...held, networks: ["networks/ach"] });
    expect(eur).toMatchObject({ ...held, networks: ["networks/sepa"] });
  });
});

describe("virtualAccount on networks/sepa", () => {
  it("is a valid German IBAN of the sandbox bank code, its account number the zero-padded index", () => {
    expect(virtualAccount("networks/sepa", 0)).toEqual({ address: "DE23999999990000000000", path: "virtual-account/0" });
    for (const index of SAMPLE_INDEXES) {
      const { address } = virtualAccount("networks/sepa", index);
      expect(address, String(index)).toMatch(/^DE\d{20}$/);
      expect(isValidIBAN(address), address).toBe(true);
      expect(ibanMod97(address), address).toBe(1n);
      expect(electronicFormatIBAN(address)).toBe(address);
      expect(isSEPACountry(address.slice(0, 2))).toBe(true);
      expect(address.slice(4, 12)).toBe(SANDBOX_SEPA_BANK_CODE);
      expect(Number(address.slice(12))).toBe(index);
    }
  });

  it("passes the bank-account rules, so a user can register a wallet's virtual IBAN as a bank account", () => {
    const { address } = virtualAccount("networks/sepa", 4242);
    expect(checkBankAccount({ currency: "eur", holder_name: "Ada Lovelace", iban: address })).toMatchObject({ numbers: { currency: "eur", iban: address } });
  });
});

describe("virtualAccount on networks/ach", () => {
  it("is the sandbox routing number (valid ABA checksum) and a 12-digit account number holding the index", () => {
    expect(virtualAccount("networks/ach", 0)).toEqual({ address: "110000000/800000000000", path: "virtual-account/0" });
    expect(isValidAbaRouting(SANDBOX_ACH_ROUTING_NUMBER)).toBe(true);
    expect(abaChecksumOk(SANDBOX_ACH_ROUTING_NUMBER)).toBe(true);
    for (const index of SAMPLE_INDEXES) {
      const { address } = virtualAccount("networks/ach", index);
      const [routing, account] = address.split("/") as [string, string];
      expect(routing).toBe(SANDBOX_ACH_ROUTING_NUMBER);
      expect(account, address).toMatch(/^\d{10,17}$/);
      expect(Number(account.slice(2))).toBe(index);
    }
  });

  it("passes the bank-account rules for a usd account", () => {
    const [routing, account] = virtualAccount("networks/ach", 77).address.split("/") as [string, string];
    expect(checkBankAccount({ currency: "usd", holder_name: "Ada Lovelace", routing_number: routing, account_number: account })).toMatchObject({
      numbers: { currency: "usd", routingNumber: routing, accountNumber: account },
    });
  });
});

describe("virtualAccount, every rail", () => {
  it("is deterministic and gives distinct accounts to distinct indexes", () => {
    for (const rail of RAILS) {
      const indexes = [...Array.from({ length: 2000 }, (_, i) => i), ...SAMPLE_INDEXES];
      const accounts = new Set(indexes.map((i) => virtualAccount(rail, i).address));
      expect(accounts.size, rail).toBe(new Set(indexes).size);
      expect(virtualAccount(rail, 31337)).toEqual(virtualAccount(rail, 31337));
    }
  });

  it.each([-1, 1.5, 2 ** 31, Number.NaN])("refuses index %s with a RangeError", (index) => {
    for (const rail of RAILS) expect(() => virtualAccount(rail, index)).toThrow(RangeError);
  });
});

describe("railReference", () => {
  const entropy = Uint8Array.from({ length: 32 }, (_, i) => i * 7 + 3);

  it("is a 35-character SEPA end-to-end id on networks/sepa and a 15-digit ACH trace number on networks/ach", () => {
    expect(railReference("networks/sepa", entropy)).toBe(`E2E${Buffer.from(entropy.subarray(0, 16)).toString("hex").toUpperCase()}`);
    expect(railReference("networks/sepa", entropy)).toHaveLength(35);
    const trace = railReference("networks/ach", entropy);
    expect(trace).toMatch(/^11000000\d{7}$/);
    expect(trace.slice(8)).toBe((BigInt(`0x${Buffer.from(entropy).toString("hex")}`) % 10_000_000n).toString().padStart(7, "0"));
  });

  it("is the same for the same entropy, and refuses entropy that is not 32 bytes", () => {
    for (const rail of RAILS) {
      expect(railReference(rail, entropy)).toBe(railReference(rail, Uint8Array.from(entropy)));
      expect(() => railReference(rail, new Uint8Array(31))).toThrow(RangeError);
    }
  });
});

describe("SandboxProvider on the rails", () => {
  const provider = new SandboxProvider("seed");

  it("supports the five chains and the two rails", () => {
    expect([...provider.supportedNetworks()].sort()).toEqual([...NETWORKS, ...RAILS].sort());
  });

  it("takes no rail account as a crypto destination", () => {
    for (const rail of RAILS) {
      for (const rail2 of RAILS) expect(provider.isValidAddress(rail, virtualAccount(rail2, 5).address), `${rail} ${rail2}`).toBe(false);
      expect(provider.isValidAddress(rail, "DE89370400440532013000")).toBe(false);
      expect(provider.isValidAddress(rail, "0x52908400098527886E0F7030069857D2E4169EE7")).toBe(false);
    }
  });

  it("makes each rail's reference as the deposit's hash, a new one each time", () => {
    const sepa = [provider.newTransactionHash("networks/sepa"), provider.newTransactionHash("networks/sepa")];
    for (const h of sepa) expect(h).toMatch(/^E2E[0-9A-F]{32}$/);
    expect(sepa[0]).not.toBe(sepa[1]);
    expect(provider.newTransactionHash("networks/ach")).toMatch(/^11000000\d{7}$/);
  });
});

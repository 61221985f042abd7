/**
 * The gas wallet's balance per live network as the gas watcher last asked it (./overview.ts;
 * docs/decisions/live-chains.md "The operators' view"): what `/metrics` shows without asking the
 * node. Amounts are exact decimal text of the native coin (8 decimals, rounded down); instants UTC.
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** The gas wallet's native coin balance on one live network, the last time the node answered. */
export const ChainGasBalance = defineEntity({
  name: "ChainGasBalance",
  tableName: "chain_gas_balance",
  properties: {
    network: p.string().length(32).primary(),
    /** The gas wallet's address (lower case). */
    address: p.string().length(42),
    /** Its native coin (`eth`, `pol`) at the node's head, 8 decimals, rounded down. */
    balance: p.decimal("string").precision(38).scale(8),
    /** The head block the balance was asked at. */
    height: p.bigint("number"),
    /** When the node answered. */
    askedAt: p.datetime(),
  },
});
export type ChainGasBalance = InferEntity<typeof ChainGasBalance>;

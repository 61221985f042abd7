/** The operator's currency switches (docs/decisions/provider-and-sandbox.md "Currency switches"). */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/**
 * The switches of one currency of the provider's catalogue, by code: a flag that is null is not
 * switched (the provider's value holds); false switches it off. Written by Update Currency.
 */
export const CurrencySwitch = defineEntity({
  name: "CurrencySwitch",
  tableName: "currency_switch",
  properties: {
    code: p.string().length(16).primary(),
    canDeposit: p.boolean().nullable(),
    canWithdraw: p.boolean().nullable(),
    isCustodyEnabled: p.boolean().nullable(),
    isTradingEnabled: p.boolean().nullable(),
    updatedAt: p.datetime(),
  },
});
export type CurrencySwitch = InferEntity<typeof CurrencySwitch>;

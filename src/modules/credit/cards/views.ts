/**
 * Cards as the API shows them (spec spec/credit/cards.tsp `Card`, `IssuedCard`;
 * docs/decisions/cards.md): never the card number or the security code, except in the answer of
 * Issue Card (`issuedCardView`). Instants ISO 8601 UTC; control amounts in cents.
 */
import type { components } from "../../../../generated/types/credit.js";
import { normalizedControls } from "../../../domain/cards.js";
import type { CreditCard } from "./entities.js";

type Schemas = components["schemas"];
/** Schema `Card`. */
export type CardView = Schemas["Card"];
/** Schema `IssuedCard`: the card with `pan` and `cvv`. */
export type IssuedCardView = Schemas["IssuedCard"];

/** The columns a view needs (an ORM row or the row just written). */
export type CardRow = Pick<CreditCard, "cardId" | "walletId" | "state" | "cardholderName" | "last4" | "expMonth" | "expYear" | "spendControls" | "memo" | "createdAt" | "updatedAt">;

/** A card as Get Card, List Wallet Cards and Update Card answer it (spec `Card`). */
export function cardView(row: CardRow): CardView {
  return {
    cardId: row.cardId,
    walletId: row.walletId,
    state: row.state,
    cardholderName: row.cardholderName,
    last4: row.last4,
    expMonth: row.expMonth,
    expYear: row.expYear,
    spendControls: row.spendControls ? normalizedControls(row.spendControls) : null,
    memo: row.memo ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The answer of Issue Card (spec `IssuedCard`): the card with its number and security code, this once. */
export function issuedCardView(row: CardRow, pan: string, cvv: string): IssuedCardView {
  return { ...cardView(row), pan, cvv };
}

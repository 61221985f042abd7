/**
 * The API shapes of transfers (spec/platform/transfers.tsp; docs/decisions/limits-and-allowlist.md
 * "Transfers"): the Create body and the `Transfer` record every operation answers.
 */
import type { components } from "../../../generated/types/platform.js";
import { format8 } from "../../domain/money.js";
import type { Transfer } from "./entities.js";

type Schemas = components["schemas"];

/**
 * Body of Create Transfer (schema `CreateTransferRequest`), with `amount` as the client wrote it: a
 * number, or the decimal text of a JSON number a double cannot hold (src/http/json-numbers.ts).
 */
export type CreateTransferInput = Omit<Schemas["CreateTransferRequest"], "amount"> & { amount: number | string };

/** A transfer as the API shows it (schema `Transfer`). */
export type TransferView = Schemas["Transfer"];

/**
 * Renders a stored transfer: `amount` as an 8-decimal string, `created_at` ISO 8601 UTC,
 * `is_duplicate` true only for the answer to a repeated Idempotency-Key.
 */
export function transferView(t: Transfer, duplicate: boolean): TransferView {
  return {
    transfer_id: t.id,
    from_wallet_id: t.fromWalletId,
    to_wallet_id: t.toWalletId,
    from_user_id: t.fromUserId,
    to_user_id: t.toUserId,
    currency: t.currency,
    amount: format8(t.amount),
    memo: t.memo ?? null,
    status: t.status,
    idempotency_key: t.idempotencyKey,
    is_duplicate: duplicate,
    created_at: t.createdAt.toISOString(),
  };
}

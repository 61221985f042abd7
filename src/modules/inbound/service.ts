/**
 * The customer's inbound webhook (docs/decisions/withdrawals.md "PINs pushed by the provider";
 * docs/security.md "Inbound webhooks"): providers that push withdrawal PINs instead of emailing
 * them POST each one, signed per the Standard Webhooks specification with the customer's
 * `whsec_` secret, to `/api/v1/inbound/{customer_id}/pins`. This module keeps the secrets (sealed
 * at rest, rotated with an overlap), verifies the signature with the `standardwebhooks` library,
 * and hands a verified PIN to the one path every provider PIN takes,
 * src/modules/withdrawals/service.ts `applyProviderPin` (the email poller's too).
 *
 * A `webhook-id` is answered once per customer: its first answer is stored with it, in the
 * transaction that makes the change, and every repeat gets that answer (docs/decisions/withdrawals.md
 * "PINs pushed by the provider" says why this is not the Idempotency-Key mechanism).
 */
import type { EntityManager } from "@mikro-orm/postgresql";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import type { components } from "../../../generated/types/platform.js";
import type { Db, Tx } from "../../db/sql.js";
import { DomainError, quote } from "../../domain/errors.js";
import { newSigningSecret } from "../../domain/webhooks.js";
import type { SecretBox } from "../identity/secrets.js";
import type { IdentityService } from "../identity/service.js";
import type { WithdrawalService } from "../withdrawals/service.js";
import {
  claimMessage,
  deleteSecrets,
  lockSecret,
  purgeMessages,
  selectAnswer,
  selectSecrets,
  storeAnswer,
  writeSecrets,
  type StoredAnswer,
} from "./repository.js";

type Schemas = components["schemas"];
/** Schema `InboundWebhookCreated`: the answer of Create Inbound Webhook, the only one with the secret. */
export type InboundWebhookCreatedView = Schemas["InboundWebhookCreated"];
/** Schema `InboundWebhook`: the inbound webhook as read, its secret masked. */
export type InboundWebhookView = Schemas["InboundWebhook"];

/** Settings of the inbound webhook (src/config.ts). */
export interface InboundSettings {
  /** `INBOUND_SECRET_OVERLAP_S`: seconds the previous secret still verifies after a rotation (0 = none). */
  secretOverlapS: number;
}

/**
 * A verified body as the surface read it (src/http/json-body.ts `parseJsonBytes`): the parsed JSON
 * object, or why the bytes are not one (the message of the 400 `BAD_REQUEST`).
 */
export type InboundBody = { json: Record<string, unknown> } | { notJson: string };

/** How long a `webhook-id` and its answer are kept: 7 days (at least 24 hours are promised). */
export const MESSAGE_RETENTION_MS = 7 * 24 * 3600_000;

/** Longest values of the Standard Webhooks headers accepted (spec `StandardWebhookHeaders`); longer ones answer 401. */
const HEADER_MAX = { "webhook-id": 255, "webhook-timestamp": 20, "webhook-signature": 1024 } as const;

/** How often a claim is tried again when the conflicting message row vanished before it was read (a purge in between). */
const CLAIM_ATTEMPTS = 3;

/** Sealing context of a customer's inbound secrets: a sealed secret opens only in its customer's row. */
const secretContext = (customerId: string): string => `inbound-webhook-secret:${customerId}`;

/** The 401 of every request whose signature does not verify, whatever the reason: one answer, nothing learnt. */
function invalidSignature(): DomainError {
  return new DomainError("INVALID_WEBHOOK_SIGNATURE", "The webhook signature is missing or does not verify.");
}

/** The receive path of a customer's inbound webhook, as Create and Get answer it. */
function receivePath(customerId: string): string {
  return `/api/v1/inbound/${encodeURIComponent(customerId)}/pins`;
}

/** Inbound webhook configuration, signature verification and PIN receipt. */
export class InboundWebhookService {
  /**
   * @param db runs ./repository.ts's statements and the receipt's transaction.
   * @param withdrawals the one path of provider PINs (`applyProviderPin`).
   */
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly identity: IdentityService,
    private readonly withdrawals: Pick<WithdrawalService, "applyProviderPin">,
    private readonly settings: InboundSettings,
  ) {}

  /**
   * Create Inbound Webhook: a new `whsec_` secret (32 random bytes, base64) verifies from now on;
   * the one it replaces, if any, keeps verifying for `INBOUND_SECRET_OVERLAP_S`, and any older one
   * stops at once (only the newest and the one before verify).
   * @returns the receive path, the secret (shown only here), when it was made (UTC), and the end of
   *   the previous secret's overlap (null without one).
   * @throws DomainError CUSTOMER_NOT_FOUND (404).
   */
  async create(em: EntityManager, customerId: string): Promise<InboundWebhookCreatedView> {
    await this.identity.getActiveCustomer(em, customerId);
    const secret = newSigningSecret();
    const now = new Date();
    const overlapMs = this.settings.secretOverlapS * 1000;
    const previousExpiresAt = await this.db.transaction(async (tx) => {
      const current = await lockSecret(tx, customerId);
      const keep = current !== undefined && overlapMs > 0;
      const expiresAt = keep ? new Date(now.getTime() + overlapMs) : null;
      await writeSecrets(tx, {
        customerId,
        secretSealed: this.box.seal(secret, secretContext(customerId)),
        now,
        previousSealed: keep ? current : null,
        previousExpiresAt: expiresAt,
      });
      return expiresAt;
    });
    return { url: receivePath(customerId), secret, created_at: now.toISOString(), previous_secret_expires_at: previousExpiresAt?.toISOString() ?? null };
  }

  /**
   * Get Inbound Webhook: the receive path, `***masked***` for the secret, when the current secret
   * was made and until when the previous one verifies (null when it no longer does).
   * @throws DomainError CUSTOMER_NOT_FOUND, WEBHOOK_NOT_FOUND (404).
   */
  async get(em: EntityManager, customerId: string): Promise<InboundWebhookView> {
    await this.identity.getActiveCustomer(em, customerId);
    const stored = await selectSecrets(this.db, customerId);
    if (!stored) throw this.notFound(customerId);
    const previous = stored.previousSecretSealed && stored.previousSecretExpiresAt && stored.previousSecretExpiresAt.getTime() > Date.now() ? stored.previousSecretExpiresAt : null;
    return { url: receivePath(customerId), secret: "***masked***", created_at: stored.createdAt.toISOString(), previous_secret_expires_at: previous?.toISOString() ?? null };
  }

  /**
   * Delete Inbound Webhook: every secret stops verifying at once (a pushed PIN then answers 401).
   * @throws DomainError CUSTOMER_NOT_FOUND, WEBHOOK_NOT_FOUND (404).
   */
  async delete(em: EntityManager, customerId: string): Promise<void> {
    await this.identity.getActiveCustomer(em, customerId);
    if (!(await deleteSecrets(this.db, customerId))) throw this.notFound(customerId);
  }

  /**
   * Verifies a pushed request's Standard Webhooks headers over its raw body with the customer's
   * secrets (the current one, and the previous one while its overlap lasts), with the
   * `standardwebhooks` library: `webhook-timestamp` within 300 s of now, one `v1,` signature of
   * `webhook-signature` matching HMAC-SHA256 over `id.timestamp.body`.
   * @param headers the request's headers (lower-case names, as Node gives them).
   * @param raw the body's bytes as received.
   * @returns the message's `webhook-id` (1–255 characters).
   * @throws DomainError INVALID_WEBHOOK_SIGNATURE (401) — one answer for a header missing, repeated
   *   or too long, a wrong signature, a stale or future timestamp, an unknown or deleted customer,
   *   a customer without an inbound webhook, and a sealed secret that does not open.
   */
  async verify(customerId: string, headers: Record<string, string | string[] | undefined>, raw: Buffer): Promise<string> {
    const signed: Record<keyof typeof HEADER_MAX, string> = { "webhook-id": "", "webhook-timestamp": "", "webhook-signature": "" };
    for (const name of Object.keys(HEADER_MAX) as (keyof typeof HEADER_MAX)[]) {
      const value = headers[name];
      if (typeof value !== "string" || value.length === 0 || value.length > HEADER_MAX[name]) throw invalidSignature();
      signed[name] = value;
    }
    const stored = customerId.length <= 48 ? await selectSecrets(this.db, customerId) : undefined;
    if (!stored) throw invalidSignature();
    const sealed = [stored.secretSealed];
    if (stored.previousSecretSealed && stored.previousSecretExpiresAt && stored.previousSecretExpiresAt.getTime() > Date.now()) sealed.push(stored.previousSecretSealed);
    for (const one of sealed) {
      if (this.verifiesWith(one, customerId, signed, raw)) return signed["webhook-id"];
    }
    throw invalidSignature();
  }

  /**
   * Receives a verified PIN once per `webhook-id` of the customer, in one transaction: the id is
   * claimed first (a concurrent copy waits for this transaction, then reads its answer), the body
   * checked, the PIN applied through `applyProviderPin` (the email poller's path: the PIN becomes
   * the code, the old code void, the lifetime restarted, the attempts reset, the user emailed and
   * `withdrawal.pin` written), and the answer stored with the id. A repeat gets the stored answer,
   * whatever its body, and changes nothing. Ids older than {@link MESSAGE_RETENTION_MS} are
   * forgotten first.
   * @param webhookId the id {@link verify} returned.
   * @returns `{ message }` of the 200.
   * @throws DomainError BAD_REQUEST (400, the body is not a JSON object), PIN_NOTIFICATION_FAILED
   *   (400: `withdrawal_id` missing or not a string; `pin` not a string of 4–8 digits; no such
   *   withdrawal of this customer; the withdrawal is not `PENDING`) — the first answer's, for a repeat.
   */
  async receive(customerId: string, webhookId: string, body: InboundBody): Promise<{ message: string }> {
    const now = new Date();
    await purgeMessages(this.db, customerId, new Date(now.getTime() - MESSAGE_RETENTION_MS));
    const answer = await this.db.transaction((tx) => this.answerOnce(tx, customerId, webhookId, body, now));
    if (answer.status === 400) throw new DomainError(answer.code, answer.message, answer.field ?? undefined);
    return { message: answer.message };
  }

  /** In `tx`: the stored answer of a repeat, or the claim, the change and its stored answer ({@link receive}). */
  private async answerOnce(tx: Tx, customerId: string, webhookId: string, body: InboundBody, now: Date): Promise<StoredAnswer> {
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      if (await claimMessage(tx, customerId, webhookId, now)) {
        const answer = await this.apply(tx, customerId, body);
        await storeAnswer(tx, customerId, webhookId, answer);
        return answer;
      }
      const first = await selectAnswer(tx, customerId, webhookId);
      if (first) return first;
    }
    throw new Error("an inbound webhook-id row kept vanishing between its claim and its read");
  }

  /** The answer of a new message, after its change (in `tx`). */
  private async apply(tx: Tx, customerId: string, body: InboundBody): Promise<StoredAnswer> {
    if ("notJson" in body) return { status: 400, code: "BAD_REQUEST", field: null, message: body.notJson };
    const { withdrawal_id: withdrawalId, pin } = body.json;
    const failed = (field: string, message: string): StoredAnswer => ({ status: 400, code: "PIN_NOTIFICATION_FAILED", field, message });
    if (typeof withdrawalId !== "string" || withdrawalId.length === 0) return failed("withdrawal_id", "The notification has no withdrawal_id: a string naming the withdrawal is required.");
    if (typeof pin !== "string" || !/^[0-9]{4,8}$/.test(pin)) return failed("pin", "The pin must be a JSON string of 4 to 8 digits.");
    const outcome = await this.withdrawals.applyProviderPin(customerId, withdrawalId, pin, tx);
    switch (outcome) {
      case "applied":
        return { status: 200, message: `The PIN is now the confirmation code of withdrawal ${withdrawalId.toLowerCase()}; the previous code no longer works.` };
      case "invalid-pin":
        return failed("pin", "The pin must be a JSON string of 4 to 8 digits.");
      case "not-found":
        return failed("withdrawal_id", `Withdrawal ${quote(withdrawalId)} is not a withdrawal of this customer.`);
      case "not-pending":
        return failed("withdrawal_id", `Withdrawal ${withdrawalId.toLowerCase()} is no longer PENDING: its code cannot change.`);
    }
  }

  /** Whether `signed` verifies over `raw` with the sealed secret `sealed` (false when it does not open). */
  private verifiesWith(sealed: string, customerId: string, signed: Record<keyof typeof HEADER_MAX, string>, raw: Buffer): boolean {
    let secret: string;
    try {
      secret = this.box.open(sealed, secretContext(customerId));
    } catch {
      return false; // sealed under another SECRETS_KEY: verifies nothing
    }
    try {
      new Webhook(secret).verify(raw, signed, { jsonParse: false });
      return true;
    } catch (error) {
      if (error instanceof WebhookVerificationError) return false;
      throw error;
    }
  }

  private notFound(customerId: string): DomainError {
    return new DomainError("WEBHOOK_NOT_FOUND", `Customer ${quote(customerId)} has no inbound webhook.`);
  }
}

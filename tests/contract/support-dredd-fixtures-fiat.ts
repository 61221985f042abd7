/**
 * The records the Dredd cases of fiat withdrawals need (tests/contract/dredd-cases-fiat-withdrawals.cjs;
 * docs/decisions/fiat.md "Fiat withdrawals"), seeded over the platform API after the example
 * customer and user exist ({@link seedFiatFixtures}, called by support-dredd-fixtures.ts
 * `seedFixtures`): an eur wallet of the example user funded by a sandbox bank deposit, an eur bank
 * account, and fiat withdrawals in each state a case needs.
 */
import type { JsonObject } from "./support-dredd-document.js";
import type { client } from "./support-dredd-fixtures.js";

/** Fiat withdrawals of the example user, by the case that uses them (20 eur each unless noted). */
export interface FiatFixtures {
  fiat: {
    /** The example user's eur wallet (`networks/sepa`), holding {@link EUR_FUNDING} eur. */
    walletId: string;
    /** An eur bank account of the example user (not the Add Bank Account example, which its 201 adds). */
    bankAccountId: string;
    withdrawals: {
      /** PENDING, confirmed by Confirm Fiat Withdrawal with `confirmationCode`. */
      toConfirm: string;
      /** PENDING, cancelled by Cancel Fiat Withdrawal. */
      toCancel: string;
      /** PENDING, given a new code by Resend Fiat Withdrawal Code. */
      toResend: string;
      /** PENDING; `wrongCode` is not its code. */
      wrongCode: string;
      /** PENDING, 13.13 eur: the sandbox rail refuses it at every confirm with `refusedCode`. */
      refused: string;
      /** COMPLETED (its payout submitted, then settled). */
      completed: string;
      /** CANCELLED. */
      cancelled: string;
      /** PENDING after 5 wrong codes: every confirm answers 403 until Resend Code. */
      blocked: string;
    };
    confirmationCode: string;
    wrongCode: string;
    refusedCode: string;
    /** The `Idempotency-Key` and body that seeded `withdrawals.completed`. */
    seededInitiate: { idempotencyKey: string; body: JsonObject };
  };
}

/** The eur the example user's fiat wallet receives (units of eur). */
const EUR_FUNDING = 2000;
/** An eur bank account other than the document's examples and the movement seeding's. */
const BANK_ACCOUNT = { currency: "eur", holder_name: "Dredd fiat", iban: "FR1420041010050500013M02606" };
const CODE_IN_MAIL = /Confirmation code: (\d{6})\b/;
/** Wrong codes that block a withdrawal: `WITHDRAWAL_CODE_MAX_ATTEMPTS`, default 5. */
const MAX_CODE_ATTEMPTS = 5;
/** A code of the same shape that is not `code`. */
const otherCode = (code: string): string => String((Number(code) + 1) % 1_000_000).padStart(code.length, "0");

/** Seeds {@link FiatFixtures} through `call` for the example user `userId` (email `email`) of the customer with owner key `ownerKey`. */
export async function seedFiatFixtures(call: ReturnType<typeof client>, example: { ownerKey: string; userId: string; email: string }): Promise<FiatFixtures> {
  const asOwner = { "x-api-key": example.ownerKey };
  const sepa = { name: "networks/sepa", currency: "eur" };
  const walletId = String((await call("POST", `/users/${example.userId}/wallets`, 201, { headers: asOwner, body: { name: "Dredd euros", networks: [sepa] } })).data.wallet_id);
  await call("POST", "/sandbox/deposits", 201, { headers: asOwner, body: { wallet_id: walletId, network: sepa.name, currency: "eur", amount: EUR_FUNDING } });
  const bankAccountId = String((await call("POST", `/users/${example.userId}/bank-accounts`, 201, { headers: asOwner, body: BANK_ACCOUNT })).data.bank_account_id);

  const path = `/users/${example.userId}/accounts/fiat/withdrawals`;
  const request = (role: string, amount = 20) => ({
    idempotencyKey: `dredd-fiat-fixture-${role}`,
    body: { currency: "eur", amount, bank_account_id: bankAccountId, wallet_id: walletId, memo: `Dredd fiat fixture: ${role}` },
  });
  const initiate = async (role: string, amount?: number) => {
    const { idempotencyKey, body } = request(role, amount);
    return String((await call("POST", path, 201, { headers: { ...asOwner, "Idempotency-Key": idempotencyKey }, body })).data.id);
  };
  const codeOf = async (withdrawalId: string) => {
    const mails = (await call("GET", `/sandbox/mail?to=${encodeURIComponent(example.email)}`, 200, { headers: asOwner })).data as unknown as { text: string }[];
    const code = CODE_IN_MAIL.exec(mails.find((m) => m.text.includes(withdrawalId))?.text ?? "")?.[1];
    if (!code) throw new Error(`Seeding: no confirmation code of fiat withdrawal ${withdrawalId} in the sandbox outbox of ${example.email}`);
    return code;
  };
  const confirm = (withdrawalId: string, code: string, expected: number) => call("POST", `${path}/${withdrawalId}/confirm`, expected, { headers: asOwner, body: { code } });

  const completed = await initiate("completed");
  await confirm(completed, await codeOf(completed), 200);
  const cancelled = await initiate("cancelled");
  await call("DELETE", `${path}/${cancelled}`, 204, { headers: asOwner });
  const blocked = await initiate("blocked");
  const notBlockedCode = otherCode(await codeOf(blocked));
  for (let attempt = 0; attempt < MAX_CODE_ATTEMPTS; attempt++) await confirm(blocked, notBlockedCode, 400);
  const refused = await initiate("refused", 13.13);
  const toConfirm = await initiate("to-confirm");
  const wrongCode = await initiate("wrong-code");
  return {
    fiat: {
      walletId,
      bankAccountId,
      withdrawals: { toConfirm, toCancel: await initiate("to-cancel"), toResend: await initiate("to-resend"), wrongCode, refused, completed, cancelled, blocked },
      confirmationCode: await codeOf(toConfirm),
      wrongCode: otherCode(await codeOf(wrongCode)),
      refusedCode: await codeOf(refused),
      seededInitiate: request("completed"),
    },
  };
}

/**
 * The records the Dredd cases of transfers, limits, the withdrawal allowlist and bank accounts need
 * (tests/contract/dredd-cases-movements.cjs; docs/decisions/limits-and-allowlist.md), seeded over
 * the platform API after the example customer, user and wallet exist ({@link seedMovementFixtures},
 * called by support-dredd-fixtures.ts `seedFixtures`).
 */
import { userBody } from "../support/fixtures.js";
import type { JsonObject } from "./support-dredd-document.js";
import type { client } from "./support-dredd-fixtures.js";

/** Ids, keys and bodies the movement seeding creates; part of the platform fixtures. */
export interface MovementFixtures {
  /** A customer session of the example customer (Get and Set Limits take a session). */
  customerSession: string;
  /** A VERIFIED user of the example customer (neither the example user nor the active user of the fixtures) and its wallet holding btc and usdt: the recipient of transfers. */
  recipientUserId: string;
  recipientWalletId: string;
  /** A wallet holding btc whose owner was deactivated after it was opened: a transfer to it answers 404 USER_NOT_FOUND. */
  inactiveWalletId: string;
  /**
   * 0.01 btc from the example user's wallet to {@link recipientWalletId}, booked with its own
   * `Idempotency-Key` (never the document's example key): a repeat is a duplicate, another body a 409.
   */
  seededTransfer: { idempotencyKey: string; body: JsonObject; transferId: string };
  /** An allowlist entry of the example user that stays (Add Address with it answers 409), its id and its currency and address. */
  keptAddressId: string;
  keptAddress: { currency: string; address: string };
  /** An allowlist entry of the example user that Delete Address deletes. */
  doomedAddressId: string;
  /** A bank account of the example user that stays (Add Bank Account with its body answers 409), its id and body (tests/contract/dredd-cases-bank-accounts.cjs). */
  keptBankAccountId: string;
  keptBankAccount: JsonObject;
  /** A bank account of the example user that Delete Bank Account deletes. */
  doomedBankAccountId: string;
}

/** A valid bitcoin testnet address (a BIP 173 test vector), not the document's example. */
const KEPT_ADDRESS = { currency: "btc", address: "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7" };
const DOOMED_ADDRESS = { currency: "usdt", address: "0x2222222222222222222222222222222222222222" };
/** Bank accounts of the example user, other than the document's example (whose IBAN is DE89…3000). */
const KEPT_BANK_ACCOUNT = { currency: "eur", holder_name: "Dredd kept", iban: "NL91ABNA0417164300" };
const DOOMED_BANK_ACCOUNT = { currency: "usd", holder_name: "Dredd doomed", routing_number: "011000015", account_number: "987654321" };
/** The btc the example user's wallet receives for the transfers (units of btc). */
const BTC_FUNDING = 1;

/**
 * Seeds {@link MovementFixtures} through `call` for the example customer (`customerId`, owner key
 * `ownerKey`), its example user `userId` and that user's wallet `walletId` (which gets
 * {@link BTC_FUNDING} btc by a sandbox deposit).
 */
export async function seedMovementFixtures(
  call: ReturnType<typeof client>,
  example: { customerId: string; ownerKey: string; userId: string; walletId: string },
): Promise<MovementFixtures> {
  const asOwner = { "x-api-key": example.ownerKey };
  const customerSession = String(
    (await call("POST", "/sessions", 201, { body: { customer_id: example.customerId, customer_secret: example.ownerKey } })).data.token,
  );
  /** A new user, activated, with a wallet named `name` on `networks`; answers both ids. */
  const userWithWallet = async (name: string, networks: JsonObject[]) => {
    const user = (await call("POST", "/users", 201, { headers: asOwner, body: userBody() as JsonObject })).data;
    const userId = String(user.user_id);
    await call("POST", `/users/${userId}/activate`, 200, { headers: asOwner });
    const wallet = (await call("POST", `/users/${userId}/wallets`, 201, { headers: asOwner, body: { name, networks } })).data;
    return { userId, walletId: String(wallet.wallet_id) };
  };
  const btc = { name: "networks/bitcoin", currency: "btc" };
  const recipient = await userWithWallet("Dredd recipient", [btc, { name: "networks/ethereum", currency: "usdt" }]);
  const inactive = await userWithWallet("Dredd inactive owner", [btc]);
  await call("POST", `/users/${inactive.userId}/deactivate`, 200, { headers: asOwner });

  await call("POST", "/sandbox/deposits", 201, { headers: asOwner, body: { wallet_id: example.walletId, network: "networks/bitcoin", currency: "btc", amount: BTC_FUNDING } });
  const transferRequest = {
    idempotencyKey: "dredd-fixture-transfer",
    body: { from_wallet_id: example.walletId, to_wallet_id: recipient.walletId, currency: "btc", amount: 0.01, memo: "Dredd fixture" },
  };
  const transfer = (await call("POST", "/transfers", 201, { headers: { ...asOwner, "Idempotency-Key": transferRequest.idempotencyKey }, body: transferRequest.body })).data;

  const addresses = `/users/${example.userId}/addresses`;
  const kept = (await call("POST", addresses, 201, { headers: asOwner, body: { ...KEPT_ADDRESS, label: "Dredd kept" } })).data;
  const doomed = (await call("POST", addresses, 201, { headers: asOwner, body: { ...DOOMED_ADDRESS, label: "Dredd doomed" } })).data;
  const bankAccounts = `/users/${example.userId}/bank-accounts`;
  const keptBank = (await call("POST", bankAccounts, 201, { headers: asOwner, body: KEPT_BANK_ACCOUNT })).data;
  const doomedBank = (await call("POST", bankAccounts, 201, { headers: asOwner, body: DOOMED_BANK_ACCOUNT })).data;
  return {
    customerSession,
    recipientUserId: recipient.userId,
    recipientWalletId: recipient.walletId,
    inactiveWalletId: inactive.walletId,
    seededTransfer: { ...transferRequest, transferId: String(transfer.transfer_id) },
    keptAddressId: String(kept.address_id),
    keptAddress: KEPT_ADDRESS,
    doomedAddressId: String(doomed.address_id),
    keptBankAccountId: String(keptBank.bank_account_id),
    keptBankAccount: KEPT_BANK_ACCOUNT,
    doomedBankAccountId: String(doomedBank.bank_account_id),
  };
}

/**
 * Platform pact, consumer cases of transfers between wallets of one customer
 * (docs/decisions/limits-and-allowlist.md "Transfers"): create with the owner key and an
 * `Idempotency-Key`, read with a user token of the sender, a wallet's transfers with
 * `meta.pagination`, and the 400 and 404 answers (docs/contract.md).
 */
import { MatchersV3 } from "@pact-foundation/pact";
import { expect } from "vitest";
import { createTransfer, getTransfer, listWalletTransfers } from "../../../../generated/client/platform/sdk.gen.js";
import type { CreateTransferRequest } from "../../../../generated/client/platform/types.gen.js";
import { PlatformApiError, data, listed, platformClient } from "./client.js";
import {
  EXAMPLE_OWNER_KEY,
  EXAMPLE_TO_WALLET,
  EXAMPLE_TRANSFER,
  EXAMPLE_USER_TOKEN,
  EXAMPLE_WALLET,
  RECIPIENT_USER,
  STATE,
  UNKNOWN_TRANSFER,
  UUID_PATTERN,
  VERIFIED_USER,
  failure,
  fromState,
  meta,
  ok,
  ownerKey,
  stateWalletId,
  timestamp,
  userBearer,
  walletPath,
  type ConsumerCase,
} from "./setup.js";

const { like, eachLike, regex, uuid, integer, equal, boolean } = MatchersV3;

/** The `Idempotency-Key` of the create interaction (the provider state's transfer has another). */
const CREATE_KEY = "pact-transfer-0001";
const ownerClient = (url: string) => platformClient(url, { apiKey: EXAMPLE_OWNER_KEY });
/** The recipient's wallet id of the provider state, in a body. */
const stateToWalletId = () => fromState("${toWalletId}", `^${UUID_PATTERN}$`, EXAMPLE_TO_WALLET);

/**
 * A transfer of 0.1 btc (`amount` pinned: 8 decimals) from the sender's `Main` wallet to the
 * recipient's `Inbox`, booked at once. `equal` keeps pinned values exact inside an `eachLike`.
 */
const transfer = (over: { idempotency_key?: unknown; is_duplicate?: unknown } = {}) => ({
  transfer_id: uuid(EXAMPLE_TRANSFER),
  from_wallet_id: uuid(EXAMPLE_WALLET),
  to_wallet_id: uuid(EXAMPLE_TO_WALLET),
  from_user_id: equal(VERIFIED_USER),
  to_user_id: equal(RECIPIENT_USER),
  currency: equal("btc"),
  amount: equal("0.10000000"),
  memo: like("Dinner"),
  status: equal("COMPLETED"),
  idempotency_key: over.idempotency_key ?? like("pact-state-transfer"),
  is_duplicate: over.is_duplicate ?? equal(false),
  created_at: timestamp(),
});

/** The cases, in the order they run. */
export const transferCases: ConsumerCase[] = [
  {
    title: "moves 0.1 btc between two users' wallets of the customer, at once",
    run: async (pact) => {
      const body: CreateTransferRequest = { from_wallet_id: EXAMPLE_WALLET, to_wallet_id: EXAMPLE_TO_WALLET, currency: "btc", amount: 0.1, memo: "Dinner" };
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.mainWallet)
        .given(STATE.recipientWallet)
        .uponReceiving("a request to transfer btc between two wallets")
        .withRequest("POST", "/api/v1/transfers", (b) =>
          b
            .headers({ ...ownerKey, "Idempotency-Key": CREATE_KEY })
            .jsonBody({ ...body, from_wallet_id: stateWalletId(), to_wallet_id: stateToWalletId() }),
        )
        .willRespondWith(201, (b) => b.jsonBody(ok(transfer({ idempotency_key: CREATE_KEY, is_duplicate: false }))))
        .executeTest(async (mock) => {
          const created = await data(createTransfer({ client: ownerClient(mock.url), headers: { "Idempotency-Key": CREATE_KEY }, body }));
          expect(created).toMatchObject({ from_user_id: VERIFIED_USER, to_user_id: RECIPIENT_USER, amount: "0.10000000", status: "COMPLETED", is_duplicate: false });
          expect(created.idempotency_key).toBe(CREATE_KEY);
        });
    },
  },

  {
    title: "reads a transfer with a user token of the sender",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.transferred)
        .given(STATE.userToken)
        .uponReceiving("a request to read a transfer with a user token")
        .withRequest(
          "GET",
          fromState("/api/v1/transfers/${transferId}", `^/api/v1/transfers/${UUID_PATTERN}$`, `/api/v1/transfers/${EXAMPLE_TRANSFER}`),
          (b) => b.headers(userBearer),
        )
        .willRespondWith(200, (b) => b.jsonBody(ok(transfer())))
        .executeTest(async (mock) => {
          const read = await data(getTransfer({ client: platformClient(mock.url, { userToken: EXAMPLE_USER_TOKEN }), path: { transfer_id: EXAMPLE_TRANSFER } }));
          expect(read).toMatchObject({ transfer_id: EXAMPLE_TRANSFER, from_wallet_id: EXAMPLE_WALLET, is_duplicate: false });
        });
    },
  },

  {
    title: "lists a wallet's transfers, newest first, with meta.pagination",
    run: async (pact) => {
      const link = regex(/^\/wallets\/[0-9a-f-]{36}\/transfers\?filter\[limit\]=10&filter\[skip\]=0$/, `/wallets/${EXAMPLE_WALLET}/transfers?filter[limit]=10&filter[skip]=0`);
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.transferred)
        .uponReceiving("a request to list a wallet's transfers")
        .withRequest("GET", walletPath("transfers"), (b) => b.headers(ownerKey).query({ "filter[limit]": "10" }))
        .willRespondWith(200, (b) =>
          b.jsonBody({
            success: true,
            data: eachLike({ ...transfer(), amount: regex(/^\d+\.\d{8}$/, "0.10000000"), is_duplicate: boolean(false) }),
            meta: {
              ...meta(),
              pagination: {
                records: { skip: 0, limit: 10, has_previous: false, has_next: boolean(false), total: integer(1) },
                navigation: { first: link, last: link, previous: null, next: null },
              },
            },
          }),
        )
        .executeTest(async (mock) => {
          const page = await listed(listWalletTransfers({ client: ownerClient(mock.url), path: { wallet_id: EXAMPLE_WALLET }, query: { "filter[limit]": 10 } }));
          expect(page.data[0]).toMatchObject({ from_wallet_id: EXAMPLE_WALLET, status: "COMPLETED" });
          expect(page.pagination.records).toMatchObject({ skip: 0, limit: 10 });
        });
    },
  },

  {
    title: "gets 400 SAME_WALLET_TRANSFER for a transfer to its own source wallet",
    run: async (pact) => {
      const body: CreateTransferRequest = { from_wallet_id: EXAMPLE_WALLET, to_wallet_id: EXAMPLE_WALLET, currency: "btc", amount: 0.1 };
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.mainWallet)
        .uponReceiving("a request to transfer btc from a wallet to itself")
        .withRequest("POST", "/api/v1/transfers", (b) => b.headers(ownerKey).jsonBody({ ...body, from_wallet_id: stateWalletId(), to_wallet_id: stateWalletId() }))
        .willRespondWith(400, (b) => b.jsonBody(failure([{ code: "SAME_WALLET_TRANSFER", field: "to_wallet_id", message: like("A transfer needs two different wallets.") }])))
        .executeTest(async (mock) => {
          const error = await data(createTransfer({ client: ownerClient(mock.url), body })).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(PlatformApiError);
          expect(error).toMatchObject({ status: 400, code: "SAME_WALLET_TRANSFER" });
        });
    },
  },

  {
    title: "gets 404 RESOURCE_NOT_FOUND for an unknown transfer",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.unknownTransfer)
        .uponReceiving("a request to read an unknown transfer")
        .withRequest("GET", `/api/v1/transfers/${UNKNOWN_TRANSFER}`, (b) => b.headers(ownerKey))
        .willRespondWith(404, (b) => b.jsonBody(failure([{ code: "RESOURCE_NOT_FOUND", message: like(`Transfer '${UNKNOWN_TRANSFER}' not found.`) }])))
        .executeTest(async (mock) => {
          const error = await data(getTransfer({ client: ownerClient(mock.url), path: { transfer_id: UNKNOWN_TRANSFER } })).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(PlatformApiError);
          expect(error).toMatchObject({ status: 404, code: "RESOURCE_NOT_FOUND" });
        });
    },
  },
];

/**
 * Platform pact, consumer cases of wallets with the owner key or a user token: create, list, the
 * sandbox deposit helper, balances, transactions, the currency and trading pair lists, and the
 * 404 and 400 answers (docs/contract.md).
 */
import { MatchersV3 } from "@pact-foundation/pact";
import { expect } from "vitest";
import {
  createSandboxDeposit,
  createWallet,
  getWalletBalance,
  listCurrencies,
  listTradingPairs,
  listWallets,
  listWalletTransactions,
} from "../../../../generated/client/platform/sdk.gen.js";
import type { CreateWalletRequest } from "../../../../generated/client/platform/types.gen.js";
import { PlatformApiError, data, listed, platformClient, recordCredentials } from "./client.js";
import {
  CODE,
  EIGHT,
  EXAMPLE_OWNER_KEY,
  EXAMPLE_USER_TOKEN,
  EXAMPLE_WALLET,
  MAIN_WALLET,
  NETWORK,
  NEW_WALLET,
  STATE,
  UNKNOWN_WALLET,
  VERIFIED_USER,
  WALLET_NETWORKS,
  btcDeposit,
  failure,
  meta,
  ok,
  ownerKey,
  stateWalletId,
  userBearer,
  wallet,
  walletPath,
  type ConsumerCase,
} from "./setup.js";

const { like, eachLike, regex, uuid, integer, number, boolean } = MatchersV3;

/** The cases, in the order they run. */
export const walletCases: ConsumerCase[] = [
  {
    title: "creates a wallet with one deposit address per network",
    run: async (pact) => {
      // The generated client sends what it is given: the default `wallet_type` too.
      const body: CreateWalletRequest = { name: NEW_WALLET, description: "Rainy days", networks: WALLET_NETWORKS, wallet_type: "virtual" };
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.verifiedUser)
        .given(STATE.noNewWallet)
        .uponReceiving("a request to create a wallet")
        .withRequest("POST", `/api/v1/users/${VERIFIED_USER}/wallets`, (b) => b.headers(ownerKey).jsonBody(body))
        .willRespondWith(201, (b) => b.jsonBody(ok(wallet(NEW_WALLET, "Rainy days", WALLET_NETWORKS))))
        .executeTest(async (mock) => {
          const created = await data(createWallet({ client: platformClient(mock.url, { apiKey: EXAMPLE_OWNER_KEY }), path: { user_id: VERIFIED_USER }, body }));
          expect(created).toMatchObject({ user_id: VERIFIED_USER, name: NEW_WALLET, wallet_type: "virtual", is_active: true });
          expect(created.networks).toEqual(WALLET_NETWORKS);
          expect(created.addresses).toHaveLength(WALLET_NETWORKS.length);
        });
    },
  },

  {
    title: "lists a user's wallets with a user token, with meta.pagination",
    run: async (pact) => {
      const link = (skip: number) => regex(/^\/users\/[0-9a-f-]{36}\/wallets\?filter\[limit\]=10&filter\[skip\]=\d+$/, `/users/${VERIFIED_USER}/wallets?filter[limit]=10&filter[skip]=${skip}`);
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.mainWallet)
        .given(STATE.userToken)
        .uponReceiving("a request to list a user's wallets with a user token")
        .withRequest("GET", `/api/v1/users/${VERIFIED_USER}/wallets`, (b) => b.headers(userBearer).query({ "filter[limit]": "10" }))
        .willRespondWith(200, (b) =>
          b.jsonBody({
            success: true,
            data: eachLike(wallet(like(MAIN_WALLET), like("Seeded by a provider state"), eachLike({ name: NETWORK("networks/bitcoin"), currency: CODE("btc") }))),
            meta: {
              ...meta(),
              pagination: {
                records: { skip: 0, limit: 10, has_previous: false, has_next: false, total: integer(1) },
                navigation: { first: link(0), last: link(0), previous: null, next: null },
              },
            },
          }),
        )
        .executeTest(async (mock) => {
          // The operation takes the owner key or a user token: the client holds the token only and
          // sends it alone (the interaction requires the Bearer header; docs/decisions/credentials-and-tokens.md).
          const userClient = platformClient(mock.url, { userToken: EXAMPLE_USER_TOKEN });
          const sent = recordCredentials(userClient);
          const page = await listed(listWallets({ client: userClient, path: { user_id: VERIFIED_USER }, query: { "filter[limit]": 10 } }));
          expect(sent, "credential headers of the request").toEqual([["authorization"]]);
          expect(page.data[0]).toMatchObject({ user_id: VERIFIED_USER, name: MAIN_WALLET });
          expect(page.pagination.records).toMatchObject({ skip: 0, limit: 10, has_next: false });
        });
    },
  },

  {
    title: "simulates a sandbox deposit, recorded as a done deposit transaction",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.spareWallet)
        .uponReceiving("a request to simulate a sandbox deposit")
        .withRequest("POST", "/api/v1/sandbox/deposits", (b) =>
          b.headers(ownerKey).jsonBody({
            wallet_id: stateWalletId(),
            network: "networks/bitcoin",
            currency: "btc",
            amount: 0.25,
          }),
        )
        .willRespondWith(201, (b) => b.jsonBody(ok(btcDeposit(0.25, number(0.25)))))
        .executeTest(async (mock) => {
          const deposit = await data(
            createSandboxDeposit({
              client: platformClient(mock.url, { apiKey: EXAMPLE_OWNER_KEY }),
              body: { wallet_id: EXAMPLE_WALLET, network: "networks/bitcoin", currency: "btc", amount: 0.25 },
            }),
          );
          expect(deposit.transaction).toMatchObject({ action: "deposit", status: "done", currency: "btc", amount: 0.25 });
        });
    },
  },

  {
    title: "reads a wallet's balances as 8-decimal strings",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.mainWallet)
        .uponReceiving("a request to read a wallet's balance")
        .withRequest("GET", walletPath("balance"), (b) => b.headers(ownerKey))
        .willRespondWith(200, (b) =>
          b.jsonBody(
            ok({
              wallet_id: uuid(EXAMPLE_WALLET),
              user_id: VERIFIED_USER,
              balance: eachLike({ currency: CODE("btc"), balance: EIGHT("0.50000000"), available: EIGHT("0.50000000"), held: EIGHT("0.00000000") }),
            }),
          ),
        )
        .executeTest(async (mock) => {
          const balance = await data(getWalletBalance({ client: platformClient(mock.url, { apiKey: EXAMPLE_OWNER_KEY }), path: { wallet_id: EXAMPLE_WALLET } }));
          expect(balance.wallet_id).toBe(EXAMPLE_WALLET);
          expect(balance.balance[0]).toEqual({ currency: "btc", balance: "0.50000000", available: "0.50000000", held: "0.00000000" });
        });
    },
  },

  {
    title: "lists a wallet's deposits, most recent first, with meta.pagination",
    run: async (pact) => {
      // The links keep the filters (in the request's order, either here) and add the page.
      const link = regex(
        /^\/wallets\/[0-9a-f-]{36}\/transactions\?(filter\[(where\]\[type\]=deposit|sort\]=DESC)&){2}filter\[limit\]=20&filter\[skip\]=0$/,
        `/wallets/${EXAMPLE_WALLET}/transactions?filter[where][type]=deposit&filter[sort]=DESC&filter[limit]=20&filter[skip]=0`,
      );
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.mainWallet)
        .uponReceiving("a request to list a wallet's deposits")
        .withRequest("GET", walletPath("transactions"), (b) =>
          b.headers(ownerKey).query({ "filter[where][type]": "deposit", "filter[sort]": "DESC" }),
        )
        .willRespondWith(200, (b) =>
          b.jsonBody({
            success: true,
            data: eachLike(btcDeposit(number(0.5), number(0.5))),
            meta: {
              ...meta(),
              pagination: {
                records: { skip: 0, limit: 20, has_previous: false, has_next: false, total: 1 },
                navigation: { first: link, last: link, previous: null, next: null },
              },
            },
          }),
        )
        .executeTest(async (mock) => {
          const page = await listed(
            listWalletTransactions({
              client: platformClient(mock.url, { apiKey: EXAMPLE_OWNER_KEY }),
              path: { wallet_id: EXAMPLE_WALLET },
              query: { "filter[where][type]": "deposit", "filter[sort]": "DESC" },
            }),
          );
          expect(page.data[0]?.transaction).toMatchObject({ action: "deposit", status: "done", currency: "btc" });
          expect(page.pagination.records.total).toBe(1);
        });
    },
  },

  {
    title: "lists the supported currencies",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .uponReceiving("a request to list currencies")
        .withRequest("GET", "/api/v1/currencies", (b) => b.headers(ownerKey))
        .willRespondWith(200, (b) =>
          b.jsonBody(
            ok(
              eachLike({
                id: integer(1),
                symbol: regex(/^[A-Z0-9]+$/, "BTC"),
                name: like("Bitcoin"),
                code: CODE("btc"),
                currency: CODE("btc"),
                precision: integer(8),
                ascii_sign: like("₿"),
                can_deposit: boolean(true),
                can_withdraw: boolean(true),
                min_withdrawal: number(0.0001),
                is_fiat: boolean(false),
                is_confirmations_needed: boolean(true),
                is_custody_enabled: boolean(true),
                is_trading_enabled: boolean(true),
              }),
            ),
          ),
        )
        .executeTest(async (mock) => {
          const currencies = await data(listCurrencies({ client: platformClient(mock.url, { apiKey: EXAMPLE_OWNER_KEY }) }));
          expect(currencies[0]).toMatchObject({ code: "btc", currency: "btc", precision: 8, is_fiat: false });
        });
    },
  },

  {
    title: "lists the trading pairs",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .uponReceiving("a request to list trading pairs")
        .withRequest("GET", "/api/v1/currencies/pairs", (b) => b.headers(ownerKey))
        .willRespondWith(200, (b) =>
          b.jsonBody(
            ok(eachLike({ formatted: regex(/^[A-Z0-9]+\/[A-Z0-9]+$/, "BTC/USDT"), symbol: regex(/^[A-Z0-9]+$/, "BTCUSDT"), base: CODE("btc"), quote: CODE("usdt") })),
          ),
        )
        .executeTest(async (mock) => {
          const pairs = await data(listTradingPairs({ client: platformClient(mock.url, { apiKey: EXAMPLE_OWNER_KEY }) }));
          expect(pairs[0]).toEqual({ formatted: "BTC/USDT", symbol: "BTCUSDT", base: "btc", quote: "usdt" });
        });
    },
  },

  {
    title: "gets 404 WALLET_NOT_FOUND for an unknown wallet",
    run: async (pact) => {
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.unknownWallet)
        .uponReceiving("a request to read the balance of an unknown wallet")
        .withRequest("GET", `/api/v1/wallets/${UNKNOWN_WALLET}/balance`, (b) => b.headers(ownerKey))
        .willRespondWith(404, (b) => b.jsonBody(failure([{ code: "WALLET_NOT_FOUND", message: like(`Wallet '${UNKNOWN_WALLET}' not found.`) }])))
        .executeTest(async (mock) => {
          const error = await data(getWalletBalance({ client: platformClient(mock.url, { apiKey: EXAMPLE_OWNER_KEY }), path: { wallet_id: UNKNOWN_WALLET } })).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(PlatformApiError);
          expect(error).toMatchObject({ status: 404, code: "WALLET_NOT_FOUND" });
        });
    },
  },

  {
    title: "gets 400 WALLET_NAME_REQUIRED for an empty wallet name",
    run: async (pact) => {
      const body: CreateWalletRequest = { name: "", networks: WALLET_NETWORKS, wallet_type: "virtual" };
      await pact
        .addInteraction()
        .given(STATE.acmeWithKey)
        .given(STATE.verifiedUser)
        .uponReceiving("a request to create a wallet without a name")
        .withRequest("POST", `/api/v1/users/${VERIFIED_USER}/wallets`, (b) => b.headers(ownerKey).jsonBody(body))
        .willRespondWith(400, (b) =>
          b.jsonBody(failure([{ code: "WALLET_NAME_REQUIRED", field: "name", message: like("The wallet name is required.") }])),
        )
        .executeTest(async (mock) => {
          const error = await data(createWallet({ client: platformClient(mock.url, { apiKey: EXAMPLE_OWNER_KEY }), path: { user_id: VERIFIED_USER }, body })).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(PlatformApiError);
          expect(error).toMatchObject({ status: 400, code: "WALLET_NAME_REQUIRED", errors: [{ field: "name" }] });
        });
    },
  },
];

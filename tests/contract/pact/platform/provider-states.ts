/**
 * Provider states of the platform pact (tests/contract/pact/pact.test.ts, provider half). Each
 * state seeds data through the services the app itself runs (IdentityService, UserService,
 * WalletService, webhooks, pollers, withdrawals, limits, transfers, the allowlist, trading), not SQL, and is
 * safe to set up again for every interaction that names it. The credentials a state creates differ
 * on every run: they go to {@link LiveCredentials}, from which the verifier's request filter swaps
 * the pact's example ones. States whose ids are generated answer them (`{walletId}`,
 * `{toWalletId}`, `{transferId}`, `{addressId}`, `{deliveryId}`, `{pollerId}`, `{quoteId}`, `{orderId}`) for the
 * interactions' provider-state generators.
 */
import { DomainError } from "../../../../src/domain/errors.js";
import { TradeQuote } from "../../../../src/modules/trading/entities.js";
import type { TestApp } from "../../../support/app.js";
import { BTC_DESTINATION } from "../../../support/fixtures.js";
import { waitFor } from "../../../support/wait.js";
import {
  ACME,
  COLD_ADDRESS,
  HOOKED,
  HOOK_URL,
  IMAP_CLOSED,
  MAIN_WALLET,
  NEW_CUSTOMER,
  NEW_USER,
  NEW_WALLET,
  OLD_ADDRESS,
  PENDING_USER,
  RECIPIENT_USER,
  RECIPIENT_WALLET,
  SPARE_WALLET,
  STATE,
  TRADING_WALLET,
  UNHOOKED,
  UNKNOWN_QUOTE,
  UNKNOWN_TRANSFER,
  UNKNOWN_USER,
  UNKNOWN_WALLET,
  VERIFIED_USER,
  WALLET_NETWORKS,
} from "./setup.js";

/** The usdt the trading wallet holds at least (a buy of 0.01 btc costs 651.30065 usdt). */
const TRADING_USDT = 1000;
/** The sandbox's default BTCUSDT mid price. */
const DEFAULT_BTCUSDT_MID = 65000;

/** Credentials created by the provider states of the interaction being verified. */
export interface LiveCredentials {
  sessionToken?: string;
  ownerKey?: string;
  userToken?: string;
}

/** A provider state's set-up: the values it answers for provider-state generators, if any. */
export type StateHandler = () => Promise<Record<string, string> | void>;

const isCode = (error: unknown, code: string) => error instanceof DomainError && error.code === code;

/** Resolves to `fallback` when `promise` rejects with DomainError `code`; other errors propagate. */
const unless = <T, F>(promise: Promise<T>, code: string, fallback: F): Promise<T | F> =>
  promise.catch((error: unknown) => (isCode(error, code) ? fallback : Promise.reject(error)));

/** The provider states of the platform pact on one running test app. */
export class PlatformProviderStates {
  private seeded = 0;
  private deliveryId: string | undefined;

  constructor(
    private readonly t: TestApp,
    private readonly live: LiveCredentials,
  ) {}

  private em() {
    return this.t.orm.em.fork();
  }

  private async ensureCustomer(customerId: string): Promise<void> {
    const { identity } = this.t.services;
    const found = await unless(identity.getActiveCustomer(this.em(), customerId).then(() => true), "CUSTOMER_NOT_FOUND", false);
    if (!found) await identity.createCustomer(this.em(), { customer_id: customerId, email: `ops@${customerId}.example`, entity_name: `${customerId} Inc` });
  }

  /** Creates user `userId` (or a new one) of `customerId` unless it exists; answers its status. */
  private async ensureUser(customerId: string, userId?: string): Promise<string> {
    const { users } = this.t.services;
    if (userId) {
      const existing = await unless(users.get(this.em(), customerId, userId), "USER_NOT_FOUND", undefined);
      if (existing) return existing.status;
    }
    this.seeded += 1;
    const created = await users.create(this.em(), customerId, {
      ...(userId ? { user_id: userId } : {}),
      ...NEW_USER,
      first_name: "Seed",
      email: `seed-${this.seeded}@${customerId}.example`,
      phone_number: `202555${String(1000 + this.seeded)}`,
      individual: { ...NEW_USER.individual },
    });
    return created.status;
  }

  /** Makes `userId` of {@link ACME} exist and be active (VERIFIED). */
  private async ensureVerified(userId: string): Promise<void> {
    await this.ensureCustomer(ACME);
    await this.ensureUser(ACME, userId);
    await this.t.services.users.activate(this.em(), ACME, userId);
  }

  /** The wallets of `userId` of {@link ACME} (none: empty, not the API's 404). */
  private async walletsOfUser(userId = VERIFIED_USER): Promise<{ wallet_id: string; name: string }[]> {
    const listed = this.t.services.wallets.list(this.em(), ACME, userId, { limit: 100, skip: 0 }).then(({ items }) => items);
    return unless(listed, "WALLET_NOT_FOUND", []);
  }

  /**
   * Makes `userId` of {@link ACME} exist and be active, with wallet `name` on `networks` (created
   * unless it exists); answers its id.
   */
  private async ensureWallet(name: string, userId = VERIFIED_USER, networks = WALLET_NETWORKS): Promise<string> {
    await this.ensureVerified(userId);
    const found = (await this.walletsOfUser(userId)).find((w) => w.name === name);
    if (found) return found.wallet_id;
    const created = await this.t.services.wallets.create(this.em(), ACME, userId, {
      name,
      description: "Seeded by a provider state",
      networks,
      wallet_type: "virtual",
    });
    return created.wallet_id;
  }

  /** {@link MAIN_WALLET} with its deposit, and the recipient's {@link RECIPIENT_WALLET}: their ids. */
  private async transferWallets(): Promise<{ walletId: string; toWalletId: string }> {
    const walletId = await this.ensureWallet(MAIN_WALLET);
    await this.depositOnce(walletId);
    return { walletId, toWalletId: await this.ensureWallet(RECIPIENT_WALLET, RECIPIENT_USER, [{ name: "networks/bitcoin", currency: "btc" }]) };
  }

  /** The allowlist entry of {@link VERIFIED_USER} with `address`, if it exists (the user made sure of). */
  private async allowlistEntry(address: string): Promise<{ address_id: string } | undefined> {
    await this.ensureVerified(VERIFIED_USER);
    const { items } = await this.t.services.allowlist.list(this.em(), ACME, VERIFIED_USER, { limit: 100, skip: 0 });
    return items.find((a) => a.address === address);
  }

  /** Allowlist entry `entry` of {@link VERIFIED_USER} (added through the service unless it exists); answers its id. */
  private async ensureAllowlisted(entry: typeof COLD_ADDRESS): Promise<string> {
    const found = await this.allowlistEntry(entry.address);
    return found?.address_id ?? (await this.t.services.allowlist.add(this.em(), ACME, VERIFIED_USER, entry)).address_id;
  }

  /** Customer {@link HOOKED} with an owner credential (its email is the poller's mailbox). */
  private async ensureHookedCustomer(): Promise<void> {
    const { identity } = this.t.services;
    await this.ensureCustomer(HOOKED);
    if ((await identity.listCredentials(this.em(), HOOKED)).length === 0) await identity.generateCredentials(this.em(), HOOKED);
  }

  private async ensureWebhook(): Promise<void> {
    await this.ensureHookedCustomer();
    await this.t.services.webhooks.put(this.em(), HOOKED, { url: HOOK_URL, headers: [{ key: "X-Initech-Source", value: "custody" }] }, "create");
  }

  /**
   * A `withdrawal.pin` of {@link HOOKED} delivered to the receiver, made through the real flow: a
   * funded user's withdrawal writes it to the outbox and a delivery round sends it. Once per run.
   */
  private async ensureDelivery(): Promise<string> {
    const { users, wallets, withdrawals, webhooks } = this.t.services;
    await this.ensureWebhook();
    if (this.deliveryId) return this.deliveryId;
    const userId = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    await users.create(this.em(), HOOKED, { ...NEW_USER, user_id: userId, email: `pin@${HOOKED}.example`, phone_number: "2025550188", individual: { ...NEW_USER.individual } });
    await users.activate(this.em(), HOOKED, userId);
    const wallet = await wallets.create(this.em(), HOOKED, userId, { name: "PIN", networks: [{ name: "networks/bitcoin", currency: "btc" }], wallet_type: "virtual" });
    await wallets.sandboxDeposit(this.em(), HOOKED, { wallet_id: wallet.wallet_id, network: "networks/bitcoin", currency: "btc", amount: 0.5 });
    await withdrawals.initiate(this.em(), HOOKED, userId, { currency: "btc", amount: 0.01, address: BTC_DESTINATION });
    const delivered = async (): Promise<string | undefined> => {
      await webhooks.deliverDue();
      const { items } = await webhooks.listDeliveries(this.em(), HOOKED, { limit: 1, skip: 0 }, "succeeded");
      return items[0]?.delivery_id;
    };
    this.deliveryId = await waitFor("the withdrawal.pin delivery", delivered, 10_000).catch((error: unknown) => {
      throw new Error(`state '${STATE.delivered}' cannot be set up: the notification was not delivered`, { cause: error });
    });
    return this.deliveryId;
  }

  /** Throws, naming `state`, when `exists` resolves true. */
  private static async absent(state: string, exists: Promise<boolean>): Promise<void> {
    if (await exists) throw new Error(`state '${state}' cannot be set up: it exists`);
  }

  /** Sandbox-deposits 0.5 btc into wallet `walletId` unless its btc balance is already non-zero (a state may be set up for several interactions). */
  private async depositOnce(walletId: string): Promise<void> {
    const { wallets } = this.t.services;
    const btc = (await wallets.balance({ customerId: ACME }, walletId)).balance.find((b) => b.currency === "btc");
    if (btc?.balance === "0.00000000") {
      await wallets.sandboxDeposit(this.em(), ACME, { wallet_id: walletId, network: "networks/bitcoin", currency: "btc", amount: 0.5 });
    }
  }

  /**
   * {@link TRADING_WALLET} (btc and usdt) with at least {@link TRADING_USDT} usdt available, and
   * BTCUSDT of {@link ACME} at the sandbox's default mid (docs/decisions/trading.md "The sandbox"):
   * the quotes keep the page's figures whatever price an interaction set. Answers its id.
   */
  private async ensureTradingWallet(): Promise<string> {
    const { wallets, trading } = this.t.services;
    const walletId = await this.ensureWallet(TRADING_WALLET);
    const usdt = (await wallets.balance({ customerId: ACME }, walletId)).balance.find((b) => b.currency === "usdt");
    if (Number(usdt?.available ?? 0) < TRADING_USDT) {
      await wallets.sandboxDeposit(this.em(), ACME, { wallet_id: walletId, network: "networks/ethereum", currency: "usdt", amount: TRADING_USDT });
    }
    await trading.setSandboxPrice(this.em(), ACME, "BTCUSDT", DEFAULT_BTCUSDT_MID);
    return walletId;
  }

  /** A new quote of {@link VERIFIED_USER} to buy 0.01 btc on the trading wallet, live for `QUOTE_TTL_S`: its ids. */
  private async liveQuote(): Promise<{ walletId: string; quoteId: string }> {
    const walletId = await this.ensureTradingWallet();
    const quote = await this.t.services.trading.createQuote(this.em(), ACME, VERIFIED_USER, { wallet_id: walletId, symbol: "BTCUSDT", side: "buy", quantity: 0.01 });
    return { walletId, quoteId: quote.quote_id };
  }

  /** The poller of {@link HOOKED} (created on {@link IMAP_CLOSED} unless it exists), polled once in vain; answers its id. */
  private async ensurePolledPoller(): Promise<string> {
    const { pollers } = this.t.services;
    await this.ensureHookedCustomer();
    const existing = await unless(pollers.get(this.em(), HOOKED), "POLLER_NOT_FOUND", undefined);
    const pollerId = existing?.poller_id ?? (await pollers.create(this.em(), HOOKED, { imap: { ...IMAP_CLOSED, password: "mailbox-pass" }, description: "PIN mailbox" })).poller_id;
    await pollers.poll(pollerId); // its statistics, deterministic: one failed poll
    return pollerId;
  }

  /** Every state of {@link STATE} with its set-up. */
  handlers(): Record<string, StateHandler> {
    const { identity, users, wallets, webhooks, pollers, limits, transfers, allowlist, trading } = this.t.services;
    const em = () => this.em();
    return {
      [STATE.operatorSession]: async () => {
        this.live.sessionToken = (await identity.createSession(em(), { kind: "master" }, undefined)).token;
      },
      [STATE.noNewCustomer]: () =>
        PlatformProviderStates.absent(STATE.noNewCustomer, unless(identity.getActiveCustomer(em(), NEW_CUSTOMER).then(() => true), "CUSTOMER_NOT_FOUND", false)),
      [STATE.acme]: () => this.ensureCustomer(ACME),
      [STATE.acmeWithKey]: async () => {
        await this.ensureCustomer(ACME);
        this.live.ownerKey = (await identity.generateCredentials(em(), ACME)).customer_secret;
      },
      [STATE.verifiedUser]: async () => {
        await this.ensureUser(ACME, VERIFIED_USER);
        await users.activate(em(), ACME, VERIFIED_USER);
      },
      [STATE.pendingUser]: async () => {
        const status = await this.ensureUser(ACME, PENDING_USER);
        if (status !== "PENDING") throw new Error(`state '${STATE.pendingUser}' cannot be set up: the user is ${status}`);
      },
      [STATE.threeUsers]: async () => {
        while ((await users.list(em(), ACME, { limit: 1, skip: 0 }, {})).total < 3) await this.ensureUser(ACME);
      },
      [STATE.unknownUser]: () =>
        PlatformProviderStates.absent(STATE.unknownUser, unless(users.get(em(), ACME, UNKNOWN_USER).then(() => true), "USER_NOT_FOUND", false)),
      [STATE.userToken]: async () => {
        const { credential_id } = await identity.generateCredentials(em(), ACME);
        this.live.userToken = (await users.issueToken(em(), ACME, credential_id, VERIFIED_USER)).token;
      },
      [STATE.noNewWallet]: () =>
        PlatformProviderStates.absent(STATE.noNewWallet, this.walletsOfUser().then((list) => list.some((w) => w.name === NEW_WALLET))),
      [STATE.mainWallet]: async () => {
        const walletId = await this.ensureWallet(MAIN_WALLET);
        await this.depositOnce(walletId);
        return { walletId };
      },
      [STATE.spareWallet]: async () => ({ walletId: await this.ensureWallet(SPARE_WALLET) }),
      [STATE.hookedCustomer]: () => this.ensureHookedCustomer(),
      [STATE.webhook]: () => this.ensureWebhook(),
      [STATE.delivered]: async () => ({ deliveryId: await this.ensureDelivery() }),
      [STATE.unhooked]: async () => {
        await this.ensureCustomer(UNHOOKED);
        await unless(webhooks.delete(em(), UNHOOKED), "WEBHOOK_NOT_FOUND", undefined);
      },
      [STATE.noPoller]: async () => {
        await this.ensureHookedCustomer();
        await unless(pollers.delete(em(), HOOKED), "POLLER_NOT_FOUND", undefined);
      },
      [STATE.poller]: async () => ({ pollerId: await this.ensurePolledPoller() }),
      [STATE.unknownWallet]: () =>
        PlatformProviderStates.absent(STATE.unknownWallet, unless(wallets.balance({ customerId: ACME }, UNKNOWN_WALLET).then(() => true), "WALLET_NOT_FOUND", false)),
      [STATE.acmeSession]: async () => {
        await this.ensureCustomer(ACME);
        const secret = (await identity.generateCredentials(em(), ACME)).customer_secret;
        this.live.sessionToken = (await identity.createSession(em(), null, { customer_id: ACME, customer_secret: secret })).token;
      },
      [STATE.acmeDefaultLimits]: async () => {
        await this.ensureCustomer(ACME);
        await limits.set(em(), ACME, { allowlist_required: false });
      },
      [STATE.recipientWallet]: async () => ({ toWalletId: (await this.transferWallets()).toWalletId }),
      [STATE.transferred]: async () => {
        const ids = await this.transferWallets();
        const input = { from_wallet_id: ids.walletId, to_wallet_id: ids.toWalletId, currency: "btc", amount: "0.1", memo: "Dinner" };
        // One key: setting the state up again answers the same transfer.
        return { ...ids, transferId: (await transfers.create(em(), { customerId: ACME }, input, "pact-state-transfer")).transfer_id };
      },
      [STATE.unknownTransfer]: () =>
        PlatformProviderStates.absent(STATE.unknownTransfer, unless(transfers.get(em(), { customerId: ACME }, UNKNOWN_TRANSFER).then(() => true), "RESOURCE_NOT_FOUND", false)),
      [STATE.noColdAddress]: async () => {
        const found = await this.allowlistEntry(COLD_ADDRESS.address);
        if (found) await allowlist.delete(em(), ACME, VERIFIED_USER, found.address_id);
      },
      [STATE.coldAddress]: async () => ({ addressId: await this.ensureAllowlisted(COLD_ADDRESS) }),
      [STATE.oldAddress]: async () => ({ addressId: await this.ensureAllowlisted(OLD_ADDRESS) }),
      [STATE.tradingWallet]: async () => ({ walletId: await this.ensureTradingWallet() }),
      [STATE.liveQuote]: () => this.liveQuote(),
      // A new quote and order each time (no key: one is generated), so a set-up again never meets a used key.
      [STATE.executedOrder]: async () => {
        const ids = await this.liveQuote();
        return { ...ids, orderId: (await trading.createOrder(em(), ACME, VERIFIED_USER, ids.quoteId)).order_id };
      },
      [STATE.unknownQuote]: () =>
        PlatformProviderStates.absent(STATE.unknownQuote, em().count(TradeQuote, { quoteId: UNKNOWN_QUOTE }).then((n) => n > 0)),
    };
  }
}

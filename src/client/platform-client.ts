/**
 * A small typed client for the identity, wallet and PIN-delivery slices of the platform API
 * (sessions, customers, credentials, users and user tokens; wallets, balances, wallet transactions,
 * currencies, trading pairs and the sandbox deposit helper; the customer webhook with its delivery
 * log, and the email poller), built on the generated contract
 * types and the global `fetch`. Request bodies, query parameters and returned payloads are typed from
 * `generated/types/platform.ts`, so a contract change that breaks a caller fails to compile.
 *
 * What it does not do: it does not validate responses at run time (the payload is trusted to
 * match its type), it does not retry, and it does not refresh expiring tokens.
 *
 * @example
 * const operator = new PlatformClient({ baseUrl: "http://127.0.0.1:8080/api/v1", masterKey });
 * const session = await operator.createSession();
 * const ops = operator.withCredentials({ sessionToken: session.token });
 * await ops.createCustomer({ customer_id: "acme-corp", email: "ops@acme.example", entity_name: "Acme Corp" });
 *
 * @example
 * // Wallet operations take the owner key or a user token (the token wins when both are set).
 * const owner = new PlatformClient({ baseUrl, apiKey: "sk_…" });
 * const wallet = await owner.createWallet(userId, { name: "Main", networks: [{ name: "networks/bitcoin", currency: "btc" }] });
 * const { token } = await owner.createUserToken(userId);
 * const balance = await owner.withCredentials({ userToken: token }).getWalletBalance(wallet.wallet_id);
 */
import type { components, paths } from "../../generated/types/platform.js";

type Schemas = components["schemas"];

/** A session token (Create Session): operator scope with the master key, customer scope with customer credentials. */
export type Session = Schemas["Session"];
/** A customer (tenant) of the platform. */
export type Customer = Schemas["Customer"];
/** A credential as List Credentials shows it, secret masked. */
export type Credential = Schemas["Credential"];
/** A newly generated owner credential; `customer_secret` is in clear text only here. */
export type GeneratedCredential = Schemas["GeneratedCredential"];
/** An end user of a customer. */
export type User = Schemas["User"];
/** A user token for the wallet and withdrawal endpoints of one user. */
export type UserToken = Schemas["UserToken"];
/** A payload that only carries a human-readable outcome (Activate / Deactivate User). */
export type MessageData = Schemas["MessageData"];
/** A custodial wallet of a user, with one deposit address per network. */
export type Wallet = Schemas["Wallet"];
/** A deposit address of a wallet. */
export type WalletAddress = Schemas["WalletAddress"];
/** A network/currency pair a wallet holds (`networks/<network>` and a lowercase currency code). */
export type WalletNetwork = Schemas["WalletNetwork"];
/** Balances of a wallet, one entry per currency. */
export type WalletBalance = Schemas["WalletBalance"];
/** Balance of one currency: `balance`, `available` and `held` as 8-decimal strings (`"0.50000000"`). */
export type WalletBalanceItem = Schemas["WalletBalanceItem"];
/** A wallet transaction; its amounts are JSON numbers, unlike the balance strings. */
export type WalletTransaction = Schemas["WalletTransaction"];
/** A supported currency, fiat or crypto. */
export type Currency = Schemas["Currency"];
/** A trading pair. */
export type TradingPair = Schemas["TradingPair"];
/** Body of Create and Update Webhook. */
export type WebhookRequest = Schemas["WebhookRequest"];
/** The customer's webhook, header values masked. */
export type Webhook = Schemas["Webhook"];
/** Answer of Create Webhook, with the signing secret shown once. */
export type WebhookCreated = Schemas["WebhookCreated"];
/** Answer of Update Webhook. */
export type WebhookUpdated = Schemas["WebhookUpdated"];
/** Outcome of Verify Webhook. */
export type WebhookVerification = Schemas["WebhookVerification"];
/** Answer of Rotate Webhook Secret. */
export type WebhookSecretRotation = Schemas["WebhookSecretRotation"];
/** A notification of the delivery log with its attempts. */
export type WebhookDelivery = Schemas["WebhookDelivery"];
/** Body of Create Email Poller. */
export type CreateEmailPollerRequest = Schemas["CreateEmailPollerRequest"];
/** Body of Update Email Poller. */
export type UpdateEmailPollerRequest = Schemas["UpdateEmailPollerRequest"];
/** The email poller as Create answers it. */
export type EmailPoller = Schemas["EmailPoller"];
/** The email poller with its poll statistics (Get, Update). */
export type EmailPollerWithStats = Schemas["EmailPollerWithStats"];
/** Outcome of Verify Email Poller. */
export type EmailPollerVerification = Schemas["EmailPollerVerification"];
/** `meta.pagination` of a paginated list. */
export type Pagination = Schemas["Pagination"];
/** One entry of an error response's `errors[]`. */
export type ErrorItem = Schemas["ErrorItem"];
/** Every error code the platform API may answer. */
export type ErrorCode = Schemas["ErrorCode"];

/** Body of Create Session (customer credentials); omit it to open an operator session with the master key. */
export type CreateSessionRequest = Schemas["CreateSessionRequest"];
/** Body of Create Customer. */
export type CreateCustomerRequest = Schemas["CreateCustomerRequest"];
/** Body of Update Customer: any subset of the fields. */
export type UpdateCustomerRequest = Schemas["UpdateCustomerRequest"];
/** Body of Create User. */
export type CreateUserRequest = Schemas["CreateUserRequest"];
/** Body of Update User: any subset of the fields. */
export type UpdateUserRequest = Schemas["UpdateUserRequest"];
/** Query of List Customers (`filter[limit]`, `filter[skip]`). */
export type ListCustomersQuery = NonNullable<paths["/customers"]["get"]["parameters"]["query"]>;
/** Query of List Users (`page`, `limit` and filters). */
export type ListUsersQuery = NonNullable<paths["/users"]["get"]["parameters"]["query"]>;
/**
 * Body of Create Wallet. `wallet_type` is optional (default `virtual`): the generated type marks it
 * required only because the schema gives it a default.
 */
export type CreateWalletRequest = Omit<Schemas["CreateWalletRequest"], "wallet_type"> & Partial<Pick<Schemas["CreateWalletRequest"], "wallet_type">>;
/** Query of List Wallets (`filter[limit]`, `filter[skip]`). */
export type ListWalletsQuery = NonNullable<paths["/users/{user_id}/wallets"]["get"]["parameters"]["query"]>;
/**
 * Query of List Wallet Transactions: `filter[limit]` (at most 100, else 400 `BAD_REQUEST`),
 * `filter[skip]`, `filter[sort]` (`ASC`/`DESC`, default `DESC`) and the `filter[where][…]` filters
 * (`filter[where][type]`, a comma-separated list allowed; `…[currency]`, `…[status]`; `…[from]` and
 * `…[to]` in Unix ms; `…[amount][gte]` and `…[amount][lte]`).
 */
export type ListWalletTransactionsQuery = NonNullable<paths["/wallets/{wallet_id}/transactions"]["get"]["parameters"]["query"]>;
/** Body of Create Sandbox Deposit. */
export type CreateSandboxDepositRequest = Schemas["CreateSandboxDepositRequest"];

/** One page of a paginated list: the records and `meta.pagination`. */
export interface Page<T> {
  data: T[];
  pagination: Pagination;
}

/**
 * Credentials the client may send. Each method sends the one its operation takes and nothing
 * else; when that credential is not set, the request goes out without it and the server answers
 * 401 `UNAUTHORIZED` (thrown as {@link PlatformApiError}).
 */
export interface PlatformCredentials {
  /** Master API key, sent as `x-master-api-key` by Create Session (operator session) and List Customers. */
  masterKey?: string;
  /** Session token (operator or customer), sent as `Authorization: Bearer` by the customer and credential operations. */
  sessionToken?: string;
  /**
   * Owner API key (`sk_…`), sent as `x-api-key` by the user, currency and sandbox operations, and
   * by the wallet operations when no {@link userToken} is set.
   */
  apiKey?: string;
  /**
   * User token (Create User Token), sent as `Authorization: Bearer` by the wallet operations
   * (Create / List Wallets, Get Wallet Balance, List Wallet Transactions), which then act as that
   * user only: another user's id answers 403 `FORBIDDEN`, another user's wallet 404
   * `WALLET_NOT_FOUND`. Preferred over {@link apiKey} when both are set; the other operations
   * never send it.
   */
  userToken?: string;
}

/** Options of {@link PlatformClient}. */
export interface PlatformClientOptions extends PlatformCredentials {
  /** Base address including the API prefix, e.g. `http://127.0.0.1:8080/api/v1`. */
  baseUrl: string;
}

/**
 * A non-2xx answer of the platform API, or a 2xx answer that is not a success envelope.
 * `errors` holds the envelope's `errors[]` (empty when the body was not an error envelope);
 * validation failures carry one entry per invalid field, named in `field`.
 */
export class PlatformApiError extends Error {
  override readonly name = "PlatformApiError";

  constructor(
    /** HTTP status. */
    readonly status: number,
    /** `errors[]` of the error envelope. */
    readonly errors: ErrorItem[],
    /** `meta.trace_id` of the envelope, else the `x-trace-id` response header; quote it to support. */
    readonly traceId: string | undefined,
    message?: string,
  ) {
    super(message ?? PlatformApiError.describe(status, errors));
  }

  /** The first error's code, the one to branch on together with `status`. */
  get code(): ErrorCode | undefined {
    return this.errors[0]?.code;
  }

  private static describe(status: number, errors: ErrorItem[]): string {
    if (errors.length === 0) return `HTTP ${status}`;
    return `HTTP ${status}: ${errors.map((e) => `${e.code}${e.field ? ` (${e.field})` : ""}: ${e.message}`).join("; ")}`;
  }
}

type Method = "get" | "post" | "put" | "delete";
/** Methods that `paths[P]` defines. */
type MethodOf<P extends keyof paths> = { [K in Method]: [NonNullable<paths[P][K]>] extends [never] ? never : K }[Method];
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type JsonOf<R> = R extends { content: { "application/json": infer B } } ? B : never;
type SuccessOf<O> = O extends { responses: infer R } ? { [S in 200 | 201]: S extends keyof R ? JsonOf<R[S]> : never }[200 | 201] : never;
/** The `data` of the success (200 or 201) envelope of operation `M P`. */
type DataOf<P extends keyof paths, M extends Method> = SuccessOf<Operation<P, M>> extends { data: infer D } ? D : never;
/** The JSON request body of operation `M P`. */
type BodyOf<P extends keyof paths, M extends Method> = Operation<P, M> extends { requestBody?: infer RB } ? JsonOf<NonNullable<RB>> : never;
/** The path parameters of operation `M P` (never when it has none). */
type PathOf<P extends keyof paths, M extends Method> = NonNullable<Operation<P, M>["parameters"]["path"]>;
/** The query parameters of operation `M P` (never when it has none). */
type QueryOf<P extends keyof paths, M extends Method> = NonNullable<Operation<P, M>["parameters"]["query"]>;

/**
 * Which credential an operation takes (the `security` of the contract): `wallet` is the owner key
 * or a user token, the token when the client holds one.
 */
type Auth = "master" | "session" | "owner" | "wallet";

/** One request, typed from the contract's operation `M P`. */
interface RequestSpec<P extends keyof paths, M extends Method> {
  auth: Auth | undefined;
  path?: PathOf<P, M>;
  query?: QueryOf<P, M>;
  body?: BodyOf<P, M> | undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Typed client of the identity and wallet slices of the platform API. Instances are immutable. */
export class PlatformClient {
  private readonly baseUrl: string;
  private readonly credentials: PlatformCredentials;

  constructor(options: PlatformClientOptions) {
    const { baseUrl, ...credentials } = options;
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.credentials = credentials;
  }

  /** A client on the same base address with `credentials` replacing the matching ones of this client. */
  withCredentials(credentials: PlatformCredentials): PlatformClient {
    return new PlatformClient({ baseUrl: this.baseUrl, ...this.credentials, ...credentials });
  }

  // ── Sessions ──────────────────────────────────────────────────────────────────────────────

  /**
   * Opens a session. Without `body`: an operator session, sending the master key. With
   * `{customer_id, customer_secret}`: a customer session limited to that customer.
   * @throws PlatformApiError 401 `UNAUTHORIZED` (no or wrong credentials), 403 `FORBIDDEN` (an owner key).
   */
  async createSession(body?: CreateSessionRequest): Promise<Session> {
    return this.data("post", "/sessions", { auth: body ? undefined : "master", body });
  }

  // ── Customers (operator or customer session) ─────────────────────────────────────────────

  /**
   * Creates a customer (operator session).
   * @throws PlatformApiError 404 `CUSTOMER_NOT_FOUND` (unknown upstream), 409 `CUSTOMER_ALREADY_EXISTS`, 422.
   */
  async createCustomer(body: CreateCustomerRequest): Promise<Customer> {
    return this.data("post", "/customers", { auth: "session", body });
  }

  /** Reads a customer. @throws PlatformApiError 404 `CUSTOMER_NOT_FOUND`, 403 (another customer's session). */
  async getCustomer(customerId: string): Promise<Customer> {
    return this.data("get", "/customers/{customer_id}", { auth: "session", path: { customer_id: customerId } });
  }

  /** Lists customers, newest first (master key). @throws PlatformApiError 401, 422 (`filter[limit]` outside 1–100). */
  async listCustomers(query: ListCustomersQuery = {}): Promise<Page<Customer>> {
    return this.page("get", "/customers", { auth: "master", query });
  }

  /** Updates a customer partially; answers the full customer. @throws PlatformApiError 404, 422. */
  async updateCustomer(customerId: string, body: UpdateCustomerRequest): Promise<Customer> {
    return this.data("put", "/customers/{customer_id}", { auth: "session", path: { customer_id: customerId }, body });
  }

  /** Soft-deletes a customer and revokes its credentials. @throws PlatformApiError 404 `CUSTOMER_NOT_FOUND`. */
  async deleteCustomer(customerId: string): Promise<void> {
    await this.send("delete", "/customers/{customer_id}", { auth: "session", path: { customer_id: customerId } });
  }

  // ── Credentials (operator or customer session) ───────────────────────────────────────────

  /** Generates an owner credential; its secret is returned only here. @throws PlatformApiError 404 `CUSTOMER_NOT_FOUND`. */
  async generateCredentials(customerId: string): Promise<GeneratedCredential> {
    return this.data("post", "/customers/{customer_id}/credentials", { auth: "session", path: { customer_id: customerId } });
  }

  /** Lists a customer's credentials, secrets masked. @throws PlatformApiError 404 `CUSTOMER_NOT_FOUND`. */
  async listCredentials(customerId: string): Promise<Credential[]> {
    return this.data("get", "/customers/{customer_id}/credentials", { auth: "session", path: { customer_id: customerId } });
  }

  // ── Customer webhook (operator or customer session) ───────────────────────────────────────

  /**
   * Registers (or overwrites) the customer's webhook; the answer carries the `whsec_` signing
   * secret, shown only here.
   * @throws PlatformApiError 400 `BAD_REQUEST` (URL, header key, private target), 404 `CUSTOMER_NOT_FOUND`, 422.
   */
  async createWebhook(customerId: string, body: WebhookRequest): Promise<WebhookCreated> {
    return this.data("post", "/customers/{customer_id}/webhooks", { auth: "session", path: { customer_id: customerId }, body });
  }

  /** Reads the webhook, header values masked. @throws PlatformApiError 404 `CUSTOMER_NOT_FOUND` or `WEBHOOK_NOT_FOUND`. */
  async getWebhook(customerId: string): Promise<Webhook> {
    return this.data("get", "/customers/{customer_id}/webhooks", { auth: "session", path: { customer_id: customerId } });
  }

  /** Replaces URL and headers, keeping the secret. @throws PlatformApiError 400, 404 `WEBHOOK_NOT_FOUND`, 422. */
  async updateWebhook(customerId: string, body: WebhookRequest): Promise<WebhookUpdated> {
    return this.data("put", "/customers/{customer_id}/webhooks", { auth: "session", path: { customer_id: customerId }, body });
  }

  /** Deletes the webhook: notifications stop. @throws PlatformApiError 404 `WEBHOOK_NOT_FOUND`. */
  async deleteWebhook(customerId: string): Promise<void> {
    await this.send("delete", "/customers/{customer_id}/webhooks", { auth: "session", path: { customer_id: customerId } });
  }

  /** Sends a signed `webhook.test` payload now; always 200 with the outcome. @throws PlatformApiError 404 `WEBHOOK_NOT_FOUND`. */
  async verifyWebhook(customerId: string): Promise<WebhookVerification> {
    return this.data("post", "/customers/{customer_id}/webhooks/verify", { auth: "session", path: { customer_id: customerId } });
  }

  /** Rotates the signing secret (both sign for 24 h). @throws PlatformApiError 404 `WEBHOOK_NOT_FOUND`. */
  async rotateWebhookSecret(customerId: string): Promise<WebhookSecretRotation> {
    return this.data("post", "/customers/{customer_id}/webhooks/secret", { auth: "session", path: { customer_id: customerId } });
  }

  /** One page of the delivery log, newest first. @throws PlatformApiError 404 `CUSTOMER_NOT_FOUND`, 422. */
  async listWebhookDeliveries(
    customerId: string,
    query: QueryOf<"/customers/{customer_id}/webhooks/deliveries", "get"> = {},
  ): Promise<Page<WebhookDelivery>> {
    return this.page("get", "/customers/{customer_id}/webhooks/deliveries", { auth: "session", path: { customer_id: customerId }, query });
  }

  /** Sends one delivery again now (same `webhook-id`). @throws PlatformApiError 400 (webhook disabled by 410), 404. */
  async retryWebhookDelivery(customerId: string, deliveryId: string): Promise<WebhookDelivery> {
    return this.data("post", "/customers/{customer_id}/webhooks/deliveries/{delivery_id}/retry", {
      auth: "session",
      path: { customer_id: customerId, delivery_id: deliveryId },
    });
  }

  // ── Email poller (operator or customer session) ───────────────────────────────────────────

  /** Configures the customer's email poller, enabled. @throws PlatformApiError 404, 409 `POLLER_ALREADY_EXISTS`, 422. */
  async createEmailPoller(customerId: string, body: CreateEmailPollerRequest): Promise<EmailPoller> {
    return this.data("post", "/customers/{customer_id}/email/poller", { auth: "session", path: { customer_id: customerId }, body });
  }

  /** Reads the poller with its statistics, password masked. @throws PlatformApiError 404 `POLLER_NOT_FOUND`. */
  async getEmailPoller(customerId: string): Promise<EmailPollerWithStats> {
    return this.data("get", "/customers/{customer_id}/email/poller", { auth: "session", path: { customer_id: customerId } });
  }

  /** Updates the poller; omitted fields keep their values. @throws PlatformApiError 404, 422. */
  async updateEmailPoller(customerId: string, body: UpdateEmailPollerRequest): Promise<EmailPollerWithStats> {
    return this.data("put", "/customers/{customer_id}/email/poller", { auth: "session", path: { customer_id: customerId }, body });
  }

  /** Deletes the poller: polling stops. @throws PlatformApiError 404 `POLLER_NOT_FOUND`. */
  async deleteEmailPoller(customerId: string): Promise<void> {
    await this.send("delete", "/customers/{customer_id}/email/poller", { auth: "session", path: { customer_id: customerId } });
  }

  /** Logs in to the mailbox now. @throws PlatformApiError 401 `UNAUTHORIZED` (login or connection failed, with the reason), 404. */
  async verifyEmailPoller(customerId: string): Promise<EmailPollerVerification> {
    return this.data("post", "/customers/{customer_id}/email/poller/verify", { auth: "session", path: { customer_id: customerId } });
  }

  /** Starts polling. @throws PlatformApiError 404 `POLLER_NOT_FOUND` (also another poller's id). */
  async enableEmailPoller(customerId: string, pollerId: string): Promise<MessageData> {
    return this.data("post", "/customers/{customer_id}/email/poller/{poller_id}/enable", {
      auth: "session",
      path: { customer_id: customerId, poller_id: pollerId },
    });
  }

  /** Stops polling; the configuration is kept. @throws PlatformApiError 404 `POLLER_NOT_FOUND`. */
  async disableEmailPoller(customerId: string, pollerId: string): Promise<MessageData> {
    return this.data("post", "/customers/{customer_id}/email/poller/{poller_id}/disable", {
      auth: "session",
      path: { customer_id: customerId, poller_id: pollerId },
    });
  }

  /** Revokes a credential. @throws PlatformApiError 404 `CUSTOMER_NOT_FOUND` or `CREDENTIAL_NOT_FOUND`. */
  async deleteCredential(customerId: string, credentialId: string): Promise<void> {
    await this.send("delete", "/customers/{customer_id}/credentials/{credential_id}", {
      auth: "session",
      path: { customer_id: customerId, credential_id: credentialId },
    });
  }

  // ── Users (owner API key) ─────────────────────────────────────────────────────────────────

  /**
   * Creates a `PENDING` user.
   * @throws PlatformApiError 400 `INVALID_ACCOUNT_TYPE`/`INVALID_ACCOUNT_ROLE`/`INVALID_ACCOUNT_PURPOSE`/`INVALID_AGE`,
   *   409 `EMAIL_ALREADY_EXISTS`/`PHONE_ALREADY_EXISTS`/`RESOURCE_CONFLICT`, 422 (one entry per invalid field).
   */
  async createUser(body: CreateUserRequest): Promise<User> {
    return this.data("post", "/users", { auth: "owner", body });
  }

  /** Reads a user. @throws PlatformApiError 404 `USER_NOT_FOUND` (unknown or another customer's), `RESOURCE_NOT_FOUND` (deleted). */
  async getUser(userId: string): Promise<User> {
    return this.data("get", "/users/{user_id}", { auth: "owner", path: { user_id: userId } });
  }

  /** Lists users, newest first. @throws PlatformApiError 400 `INVALID_USER_TYPE`, 422 (`limit` outside 1–100). */
  async listUsers(query: ListUsersQuery = {}): Promise<Page<User>> {
    return this.page("get", "/users", { auth: "owner", query });
  }

  /** Updates a user partially; answers the full user. @throws PlatformApiError 400, 404, 409, 422. */
  async updateUser(userId: string, body: UpdateUserRequest): Promise<User> {
    return this.data("put", "/users/{user_id}", { auth: "owner", path: { user_id: userId }, body });
  }

  /** Activates a user (`VERIFIED`, active); a no-op when already `VERIFIED`. @throws PlatformApiError 404. */
  async activateUser(userId: string): Promise<MessageData> {
    return this.data("post", "/users/{user_id}/activate", { auth: "owner", path: { user_id: userId } });
  }

  /** Deactivates a user (`SUSPENDED`); its user tokens stop working. @throws PlatformApiError 400 (still `PENDING`), 404. */
  async deactivateUser(userId: string): Promise<MessageData> {
    return this.data("post", "/users/{user_id}/deactivate", { auth: "owner", path: { user_id: userId } });
  }

  /** Soft-deletes a user. @throws PlatformApiError 400 `CANNOT_DELETE_ACTIVE_USER`, 404. */
  async deleteUser(userId: string): Promise<void> {
    await this.send("delete", "/users/{user_id}", { auth: "owner", path: { user_id: userId } });
  }

  /** Issues a user token for a `VERIFIED` user. @throws PlatformApiError 404 `USER_NOT_FOUND` or `RESOURCE_NOT_FOUND` (not active). */
  async createUserToken(userId: string): Promise<UserToken> {
    return this.data("post", "/users/{user_id}/token", { auth: "owner", path: { user_id: userId } });
  }

  // ── Wallets (user token, else owner API key) ─────────────────────────────────────────────

  /**
   * Opens a wallet for an active user, with one deposit address per network of `body.networks`.
   * `wallet_type` is sent as `virtual` when omitted (the server's default). With a user token, only
   * for that token's user.
   * @throws PlatformApiError 400 `WALLET_NAME_REQUIRED`/`WALLET_NAME_MAX_LENGTH`/`INVALID_CURRENCY`/
   *   `UNSUPPORTED_CURRENCY`/`BAD_REQUEST` (unknown or repeated network)/`CLIENT_NO_SUPPLIER_ID`,
   *   403 `FORBIDDEN` (a user token of another user), 404 `USER_NOT_FOUND`/`RESOURCE_NOT_FOUND`
   *   (user not active), 409 `RESOURCE_CONFLICT` (name taken for this user), 422.
   */
  async createWallet(userId: string, body: CreateWalletRequest): Promise<Wallet> {
    return this.data("post", "/users/{user_id}/wallets", { auth: "wallet", path: { user_id: userId }, body: { ...body, wallet_type: body.wallet_type ?? "virtual" } });
  }

  /**
   * Lists a user's wallets with their addresses, newest first.
   * @throws PlatformApiError 403 `FORBIDDEN` (a user token of another user), 404 `USER_NOT_FOUND`, or
   *   `WALLET_NOT_FOUND` when the user has no wallet at all (not an empty page), 422.
   */
  async listWallets(userId: string, query: ListWalletsQuery = {}): Promise<Page<Wallet>> {
    return this.page("get", "/users/{user_id}/wallets", { auth: "wallet", path: { user_id: userId }, query });
  }

  /**
   * Reads a wallet's balances, one entry per currency it holds, as 8-decimal strings.
   * @throws PlatformApiError 404 `WALLET_NOT_FOUND` (unknown, another customer's, or with a user token another user's).
   */
  async getWalletBalance(walletId: string): Promise<WalletBalance> {
    return this.data("get", "/wallets/{wallet_id}/balance", { auth: "wallet", path: { wallet_id: walletId } });
  }

  /**
   * Lists a wallet's transactions, newest first unless `filter[sort]` is `ASC`, filtered by the
   * `filter[where][…]` parameters; `meta.pagination` links keep those filters.
   * @example
   * await client.listWalletTransactions(walletId, { "filter[where][type]": "deposit", "filter[sort]": "DESC" });
   * @throws PlatformApiError 400 `BAD_REQUEST` (`filter[limit]` over 100), 404 `WALLET_NOT_FOUND`, 422.
   */
  async listWalletTransactions(walletId: string, query: ListWalletTransactionsQuery = {}): Promise<Page<WalletTransaction>> {
    return this.page("get", "/wallets/{wallet_id}/transactions", { auth: "wallet", path: { wallet_id: walletId }, query });
  }

  // ── Currencies (owner API key) ──────────────────────────────────────────────────────────

  /** Lists the supported currencies, fiat and crypto (no pagination). @throws PlatformApiError 401, 403 (a user token). */
  async listCurrencies(): Promise<Currency[]> {
    return this.data("get", "/currencies", { auth: "owner" });
  }

  /** Lists the trading pairs (no pagination). @throws PlatformApiError 401, 403 (a user token). */
  async listTradingPairs(): Promise<TradingPair[]> {
    return this.data("get", "/currencies/pairs", { auth: "owner" });
  }

  // ── Sandbox (owner API key) ──────────────────────────────────────────────────────────────

  /**
   * Sandbox only: credits a wallet of the key's customer as a confirmed on-chain deposit and answers
   * the recorded `deposit` transaction (status `done`, a made-up hash).
   * @throws PlatformApiError 400 `AMOUNT_MUST_BE_POSITIVE`/`INVALID_AMOUNT`/`INVALID_CURRENCY`,
   *   404 `NOT_FOUND` (the provider is not the sandbox), `WALLET_NOT_FOUND`, or `ADDRESS_NOT_FOUND`
   *   (the wallet does not hold that network and currency), 422.
   */
  async createSandboxDeposit(body: CreateSandboxDepositRequest): Promise<WalletTransaction> {
    return this.data("post", "/sandbox/deposits", { auth: "owner", body });
  }

  // ── Transport ─────────────────────────────────────────────────────────────────────────────

  /** Sends operation `method template` and returns its success envelope's `data`. */
  private async data<P extends keyof paths, M extends MethodOf<P>>(method: M, template: P, spec: RequestSpec<P, M>): Promise<DataOf<P, M>> {
    const { envelope } = await this.send(method, template, spec);
    return envelope.data as DataOf<P, M>;
  }

  /** Sends list operation `method template` and returns `data` with `meta.pagination`. */
  private async page<P extends keyof paths, M extends MethodOf<P>>(
    method: M,
    template: P,
    spec: RequestSpec<P, M>,
  ): Promise<{ data: DataOf<P, M>; pagination: Pagination }> {
    const { envelope, status, traceId } = await this.send(method, template, spec);
    const meta = envelope.meta;
    if (!isObject(meta) || !isObject(meta.pagination)) {
      throw new PlatformApiError(status, [], traceId, `HTTP ${status}: list response without meta.pagination`);
    }
    return { data: envelope.data as DataOf<P, M>, pagination: meta.pagination as Pagination };
  }

  /**
   * Sends one request. Answers the parsed success envelope (empty for 204).
   * @throws PlatformApiError on a non-2xx status, or a 2xx body that is not `{success: true, data}`;
   *   whatever `fetch` throws (network failure, abort) propagates unchanged.
   */
  private async send<P extends keyof paths, M extends MethodOf<P>>(
    method: M,
    template: P,
    spec: RequestSpec<P, M>,
  ): Promise<{ envelope: Record<string, unknown>; status: number; traceId: string | undefined }> {
    const headers: Record<string, string> = { accept: "application/json", ...this.authHeader(spec.auth) };
    const init: RequestInit = { method: method.toUpperCase(), headers };
    if (spec.body !== undefined) {
      headers["content-type"] = "application/json";
      init.body = JSON.stringify(spec.body);
    }
    const response = await fetch(this.url(template, spec.path as Record<string, string> | undefined, spec.query), init);
    const text = await response.text();
    let body: unknown;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    const meta = isObject(body) && isObject(body.meta) ? body.meta : undefined;
    const traceId = typeof meta?.trace_id === "string" ? meta.trace_id : (response.headers.get("x-trace-id") ?? undefined);

    if (!response.ok) {
      const errors = isObject(body) && Array.isArray(body.errors) ? (body.errors as ErrorItem[]) : [];
      throw new PlatformApiError(response.status, errors, traceId);
    }
    if (response.status === 204) return { envelope: {}, status: 204, traceId };
    if (!isObject(body) || body.success !== true || !("data" in body)) {
      throw new PlatformApiError(response.status, [], traceId, `HTTP ${response.status}: response is not a success envelope`);
    }
    return { envelope: body, status: response.status, traceId };
  }

  private authHeader(auth: Auth | undefined): Record<string, string> {
    const { masterKey, sessionToken, apiKey, userToken } = this.credentials;
    if (auth === "master" && masterKey) return { "x-master-api-key": masterKey };
    if (auth === "session" && sessionToken) return { authorization: `Bearer ${sessionToken}` };
    if (auth === "wallet" && userToken) return { authorization: `Bearer ${userToken}` };
    if ((auth === "owner" || auth === "wallet") && apiKey) return { "x-api-key": apiKey };
    return {};
  }

  /** `template` with `{name}` replaced by the encoded path parameters, plus the query string. */
  private url(template: string, path: Record<string, string> | undefined, query: object | undefined): string {
    const resolved = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = path?.[name];
      if (value === undefined) throw new TypeError(`Missing path parameter '${name}' of ${template}`);
      return encodeURIComponent(value);
    });
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) params.append(key, String(value));
    }
    const search = params.toString();
    return `${this.baseUrl}${resolved}${search ? `?${search}` : ""}`;
  }
}

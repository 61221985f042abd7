/**
 * Dredd cases of wallet states and the operator's currency switches
 * (docs/decisions/customers-users-and-wallets.md "Wallet states", docs/decisions/provider-and-sandbox.md
 * "Currency switches"), merged into the platform hookfile's CASES (tests/contract/dredd-hooks.cjs,
 * which documents what a case is).
 *
 * A state call changes its wallet for good (a deactivated wallet stays so), and every run sends its
 * cases again: each case that needs a wallet in some state opens a fresh, empty wallet of the
 * example user just before its request and brings it there ({@link onFreshWallet}). Update
 * Currency's cases switch nothing off, so the other operations' cases keep their currencies.
 */
const { randomUUID } = require("node:crypto");

/** A well-formed wallet id no wallet has. */
const UNKNOWN_WALLET_ID = "0b9f2c4e-8a61-4d3b-9c7e-5f1a2b3c4d5e";

/** `data` of an answer must match `properties`. */
const dataOf = (properties) => ({ properties: { data: { properties } } });

/**
 * Just before the request: opens a fresh wallet of the example user (owner key), applies the state
 * calls `steps` to it in order (`suspend` with the operator session, the others with the owner key),
 * and points the request at `/wallets/<it>/<verb>`.
 */
function onFreshWallet(c, verb, steps = []) {
  const { baseUrl } = c.contract;
  const owner = { "x-api-key": c.f.ownerKey, "content-type": "application/json" };
  const operator = { authorization: `Bearer ${c.f.operatorToken}`, "content-type": "application/json" };
  return c.ensureActive(c.f.userId).before(async () => {
    const opened = await fetch(`${baseUrl}/users/${c.f.userId}/wallets`, {
      method: "POST",
      headers: owner,
      body: JSON.stringify({ name: `Dredd state ${randomUUID()}`, networks: [{ name: "networks/bitcoin", currency: "btc" }] }),
    });
    const text = await opened.text();
    if (opened.status !== 201) throw new Error(`Opening a wallet answered ${opened.status}: ${text}`);
    const walletId = JSON.parse(text).data.wallet_id;
    for (const step of steps) {
      const res = await fetch(`${baseUrl}/wallets/${walletId}/${step}`, {
        method: "POST",
        headers: step === "suspend" || step === "reinstate" ? operator : owner,
        body: JSON.stringify({ reason: `Dredd ${step}` }),
      });
      if (res.status !== 200) throw new Error(`${step} answered ${res.status}: ${await res.text()}`);
    }
    c.path(`/wallets/${walletId}/${verb}`);
  });
}

/** The cases of the five state calls and Update Currency. */
function walletStateCases() {
  return {
    lockWallet: {
      200: (c) => onFreshWallet(c, "lock").expect(dataOf({ status: { const: "LOCKED" }, status_reason: { const: c.example().reason }, is_active: { const: false } })),
      400: [
        (c) => onFreshWallet(c, "lock", ["suspend"]).error("WALLET_SUSPENDED"),
        (c) => onFreshWallet(c, "lock", ["deactivate"]).error("WALLET_INACTIVE"),
        (c) => c.path("/wallets/not-a-wallet-id/lock").error("INVALID_WALLET_ID"),
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("user").error("FORBIDDEN"), (c) => c.as("operator").error("FORBIDDEN")],
      404: (c) => c.path(`/wallets/${UNKNOWN_WALLET_ID}/lock`).error("WALLET_NOT_FOUND"),
      422: (c) => onFreshWallet(c, "lock").body({ reason: "" }).error("UNPROCESSABLE_ENTITY"),
    },
    unlockWallet: {
      200: (c) => onFreshWallet(c, "unlock", ["lock"]).expect(dataOf({ status: { const: "ACTIVE" }, status_reason: { type: "null" }, is_active: { const: true } })),
      400: [
        (c) => onFreshWallet(c, "unlock", ["suspend"]).error("WALLET_SUSPENDED"),
        (c) => onFreshWallet(c, "unlock", ["deactivate"]).error("WALLET_INACTIVE"),
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("user").error("FORBIDDEN"), (c) => c.as("operator").error("FORBIDDEN")],
      404: (c) => c.path(`/wallets/${UNKNOWN_WALLET_ID}/unlock`).error("WALLET_NOT_FOUND"),
    },
    suspendWallet: {
      200: (c) => onFreshWallet(c, "suspend", ["lock"]).expect(dataOf({ status: { const: "SUSPENDED" }, status_reason: { const: c.example().reason } })),
      400: (c) => onFreshWallet(c, "suspend", ["deactivate"]).error("WALLET_INACTIVE"),
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("owner").error("FORBIDDEN"), (c) => c.as("ownSession").error("FORBIDDEN")],
      404: (c) => c.path(`/wallets/${UNKNOWN_WALLET_ID}/suspend`).error("WALLET_NOT_FOUND"),
      422: (c) => onFreshWallet(c, "suspend").body({ reason: 5 }).error("UNPROCESSABLE_ENTITY"),
    },
    reinstateWallet: {
      // reinstate gives back the state before the suspension, here LOCKED with its reason
      200: (c) => onFreshWallet(c, "reinstate", ["lock", "suspend"]).expect(dataOf({ status: { const: "LOCKED" }, status_reason: { const: "Dredd lock" } })),
      400: [
        (c) => onFreshWallet(c, "reinstate").error("BAD_REQUEST"), // not suspended
        (c) => onFreshWallet(c, "reinstate", ["deactivate"]).error("WALLET_INACTIVE"),
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: (c) => c.as("owner").error("FORBIDDEN"),
      404: (c) => c.path(`/wallets/${UNKNOWN_WALLET_ID}/reinstate`).error("WALLET_NOT_FOUND"),
    },
    deactivateWallet: {
      200: (c) => onFreshWallet(c, "deactivate").expect(dataOf({ status: { const: "INACTIVE" }, is_active: { const: false } })),
      400: [
        (c) => c.path(`/wallets/${c.f.walletId}/deactivate`).error("BAD_REQUEST"), // the seeded wallet holds money
        (c) => onFreshWallet(c, "deactivate", ["suspend"]).error("WALLET_SUSPENDED"),
        (c) => onFreshWallet(c, "deactivate", ["deactivate"]).error("WALLET_INACTIVE"),
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("user").error("FORBIDDEN"), (c) => c.as("operator").error("FORBIDDEN")],
      404: (c) => c.path(`/wallets/${UNKNOWN_WALLET_ID}/deactivate`).error("WALLET_NOT_FOUND"),
    },
    updateCurrency: {
      // switches nothing off: the other operations' cases keep their currencies
      200: [
        (c) => c.body({ can_withdraw: true }).expect(dataOf({ code: { const: "usdt" }, can_withdraw: { const: true } })),
        (c) => c.as("master").body({ is_trading_enabled: true }).expect(dataOf({ code: { const: "usdt" }, is_trading_enabled: { const: true } })),
      ],
      401: (c) => c.as("none").error("UNAUTHORIZED"),
      403: [(c) => c.as("owner").error("FORBIDDEN"), (c) => c.as("ownSession").error("FORBIDDEN")],
      404: (c) => c.path("/currencies/xyz").error("NOT_FOUND"),
      422: (c) => c.body({ can_withdraw: "no" }).error("UNPROCESSABLE_ENTITY"),
    },
  };
}

module.exports = { walletStateCases };

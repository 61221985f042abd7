/**
 * The statements of on-chain sends (docs/decisions/live-chains.md "Sends") on the chains module's
 * tables `chain_send` and `chain_nonce` (./entities.ts). A send is queued in the transaction of its
 * withdrawal's confirm; the sender job (./sender.ts) then allocates its nonce and stores its signed
 * bytes in one transaction, before any broadcast. Amounts in the chain's units and fees in wei per
 * gas travel as integer text; heights are block numbers; hashes `0x…` lower case.
 */
import type { PreparedStatement, Sql } from "../../../db/sql.js";
import type { ChainSendKind, ChainSendState } from "../entities.js";

/** A send as the sender reads it (bigints for the chain's integers). */
export interface SendRow {
  id: number;
  network: string;
  kind: ChainSendKind;
  /** The withdrawal it pays; null for a refill, a top-up and a sweep. */
  withdrawalId: string | null;
  customerId: string | null;
  fromAddress: string;
  /** A sweep's signing key: the deposit address's derivation path; null for the service's own wallets. */
  keyPath: string | null;
  toAddress: string;
  currency: string;
  contract: string | null;
  amountUnits: bigint;
  state: ChainSendState;
  /** The send that must be `confirmed` before this one is signed (a sweep's top-up), and its state; nulls when none. */
  dependsOn: number | null;
  dependsState: ChainSendState | null;
  nonce: number | null;
  rawTx: string | null;
  txHash: string | null;
  txHashes: string[];
  maxFeePerGas: bigint | null;
  maxPriorityFeePerGas: bigint | null;
  broadcastHeight: number | null;
  minedHeight: number | null;
  fee: string | null;
  feeWaitSince: Date | null;
}

const SEND_COLUMNS = `id::int, network, kind, withdrawal_id, customer_id, from_address, key_path, to_address, currency, contract, amount_units::text, state, nonce::int,
                      raw_tx, tx_hash, tx_hashes, max_fee_per_gas::text, max_priority_fee_per_gas::text, broadcast_height::int, mined_height::int,
                      fee::text, fee_wait_since, depends_on::int,
                      (select d.state from chain_send d where d.id = chain_send.depends_on) as depends_state`;

/** Queues the send of withdrawal `$1` (customer `$2`) on network `$3`: from `$4` to `$5`, currency `$6`, contract `$7` (null: native), `$8` chain units, at `$9`. */
export const INSERT_SEND: PreparedStatement = {
  name: "chains_insert_send",
  text: `insert into chain_send (network, withdrawal_id, customer_id, from_address, to_address, currency, contract, amount_units, state, tx_hashes, created_at, updated_at)
         values ($3, $1, $2, $4, $5, $6, $7, $8::numeric, 'queued', '{}', $9, $9)`,
};

/** Queues a refill on network `$1`: the gas wallet `$2` gives the hot wallet `$3` back `$4` wei of fees, at `$5`. */
export const INSERT_REFILL: PreparedStatement = {
  name: "chains_insert_refill",
  text: `insert into chain_send (network, kind, withdrawal_id, customer_id, from_address, to_address, currency, contract, amount_units, state, tx_hashes, created_at, updated_at)
         values ($1, 'refill', null, null, $2, $3, $6, null, $4::numeric, 'queued', '{}', $5, $5)`,
};

/** The open sends (`queued`, `broadcast`) of network `$1`, oldest first, at most `$2`: the order their nonces are given in. */
export const OPEN_SENDS: PreparedStatement = {
  name: "chains_open_sends",
  text: `select ${SEND_COLUMNS} from chain_send where network = $1 and state in ('queued', 'broadcast') order by id limit $2`,
};

/** Send `$1`, its row locked until the transaction ends. */
export const LOCK_SEND: PreparedStatement = { name: "chains_lock_send", text: `select ${SEND_COLUMNS} from chain_send where id = $1 for update` };

/** The first nonce of address `$2` on network `$1`: `$3` (the node's count of its transactions); nothing when the row exists. */
export const INIT_NONCE: PreparedStatement = {
  name: "chains_init_nonce",
  text: `insert into chain_nonce (network, address, next_nonce) values ($1, $2, $3) on conflict (network, address) do nothing`,
};

/** The next nonce of address `$2` on network `$1`, its row locked until the transaction ends. */
export const LOCK_NONCE: PreparedStatement = {
  name: "chains_lock_nonce",
  text: `select next_nonce::int as next from chain_nonce where network = $1 and address = $2 for update`,
};

/**
 * Send `$1` signed with nonce `$2`: raw `$3`, hash `$4` (added to the attempts), fees `$5`/`$6`,
 * gas limit `$7`, at `$8`; the sender's next nonce moves past it in the same statement.
 */
export const SIGN_SEND: PreparedStatement = {
  name: "chains_sign_send",
  text: `with signed as (
           update chain_send set nonce = $2, raw_tx = $3, tx_hash = $4::text, tx_hashes = array_append(tx_hashes, $4::text), max_fee_per_gas = $5::numeric,
                  max_priority_fee_per_gas = $6::numeric, gas_limit = $7::numeric, broadcast_height = null, fee_wait_since = null, last_error = null, updated_at = $8
            where id = $1 returning network, from_address
         )
         update chain_nonce n set next_nonce = $2::bigint + 1 from signed s where n.network = s.network and n.address = s.from_address`,
};

/** Send `$1` replaced (same nonce): raw `$2`, hash `$3` (added to the attempts), fees `$4`/`$5`, at `$6`; its first broadcast height is reset. */
export const REPLACE_SEND: PreparedStatement = {
  name: "chains_replace_send",
  text: `update chain_send set raw_tx = $2, tx_hash = $3::text, tx_hashes = array_append(tx_hashes, $3::text), max_fee_per_gas = $4::numeric,
                max_priority_fee_per_gas = $5::numeric, broadcast_height = null, last_error = null, updated_at = $6
          where id = $1 and state = 'broadcast'`,
};

/** The node took send `$1`'s latest bytes when the head was `$2`: `broadcast`, first broadcast height kept. */
export const MARK_BROADCAST: PreparedStatement = {
  name: "chains_mark_broadcast",
  text: `update chain_send set state = 'broadcast', broadcast_height = coalesce(broadcast_height, $2), last_error = null, updated_at = now()
          where id = $1 and state in ('queued', 'broadcast')`,
};

/** Send `$1` mined at height `$2` (null: its block left the chain), fee `$3` (8-decimal text, or null). */
export const MARK_MINED: PreparedStatement = {
  name: "chains_mark_mined",
  text: `update chain_send set mined_height = $2, fee = $3::numeric, updated_at = now() where id = $1`,
};

/** Send `$1` ends `$2` (`confirmed`, `failed`) with `$3` the reason (or null), if still open: its withdrawal and customer. */
export const FINISH_SEND: PreparedStatement = {
  name: "chains_finish_send",
  text: `update chain_send set state = $2, last_error = $3, updated_at = now() where id = $1 and state in ('queued', 'broadcast')
         returning withdrawal_id, customer_id`,
};

/** Send `$1` is waiting for fees under the cap since `$2` at the latest (kept when already waiting); `$3` says why. */
export const FEE_WAIT: PreparedStatement = {
  name: "chains_fee_wait",
  text: `update chain_send set fee_wait_since = coalesce(fee_wait_since, $2), last_error = $3, updated_at = now() where id = $1`,
};

/** Send `$1`'s last problem `$2` (a refusal of the node it will retry). */
export const SEND_ERROR: PreparedStatement = {
  name: "chains_send_error",
  text: `update chain_send set last_error = $2, updated_at = now() where id = $1`,
};

/** The sends of withdrawals `$1` (uuid[]) as their records show them, with the follower's head of their network. */
export const SEND_VIEWS: PreparedStatement = {
  name: "chains_send_views",
  text: `select s.withdrawal_id, s.tx_hash, s.state, s.nonce::int, s.fee::text, s.mined_height::int, c.head::int as head
           from chain_send s left join chain_cursor c on c.network = s.network
          where s.withdrawal_id = any($1::uuid[])`,
};

type Raw = Record<string, unknown>;

const big = (v: unknown): bigint | null => (v === null || v === undefined ? null : BigInt(String(v)));

/** A {@link SendRow} of a row of {@link SEND_COLUMNS}. */
function sendOf(r: Raw): SendRow {
  return {
    id: r.id as number,
    network: r.network as string,
    kind: r.kind as ChainSendKind,
    withdrawalId: r.withdrawal_id as string | null,
    customerId: r.customer_id as string | null,
    fromAddress: r.from_address as string,
    keyPath: r.key_path as string | null,
    toAddress: r.to_address as string,
    currency: r.currency as string,
    contract: r.contract as string | null,
    amountUnits: BigInt(r.amount_units as string),
    state: r.state as ChainSendState,
    nonce: r.nonce as number | null,
    rawTx: r.raw_tx as string | null,
    txHash: r.tx_hash as string | null,
    txHashes: (r.tx_hashes as string[] | null) ?? [],
    maxFeePerGas: big(r.max_fee_per_gas),
    maxPriorityFeePerGas: big(r.max_priority_fee_per_gas),
    broadcastHeight: r.broadcast_height as number | null,
    minedHeight: r.mined_height as number | null,
    fee: r.fee as string | null,
    feeWaitSince: r.fee_wait_since === null ? null : new Date(r.fee_wait_since as string),
    dependsOn: r.depends_on as number | null,
    dependsState: r.depends_state as ChainSendState | null,
  };
}

/** A send to queue (./send-queue.ts): addresses lower case, `amountUnits` in the chain's units. */
export interface NewSend {
  withdrawalId: string;
  customerId: string;
  network: string;
  fromAddress: string;
  toAddress: string;
  currency: string;
  contract: string | null;
  amountUnits: bigint;
  at: Date;
}

/** Queues `send` in `tx` (the confirm's transaction). */
export async function insertSend(tx: Sql, send: NewSend): Promise<void> {
  await tx.run(INSERT_SEND, [send.withdrawalId, send.customerId, send.network, send.fromAddress, send.toAddress, send.currency, send.contract, send.amountUnits.toString(), send.at]);
}

/** The open sends of `network`, oldest first, at most `limit`. */
export async function openSends(sql: Sql, network: string, limit: number): Promise<SendRow[]> {
  return (await sql.rows<Raw>(OPEN_SENDS, [network, limit])).map(sendOf);
}

/** Send `id` locked in `tx`, or null. */
export async function lockSend(tx: Sql, id: number): Promise<SendRow | null> {
  const [row] = await tx.rows<Raw>(LOCK_SEND, [id]);
  return row ? sendOf(row) : null;
}

/** The next nonce of `address` on `network`, locked in `tx`; `initial` (the node's count) when the service never sent from it. */
export async function lockNextNonce(tx: Sql, network: string, address: string, initial: number): Promise<number> {
  await tx.run(INIT_NONCE, [network, address, initial]);
  const [row] = await tx.rows<{ next: number }>(LOCK_NONCE, [network, address]);
  if (!row) throw new Error(`chain_nonce of ${address} on ${network} vanished`);
  return row.next;
}

/** A signed attempt of a send: its nonce, bytes, hash and fees. */
export interface SignedAttempt {
  nonce: number;
  rawTx: string;
  txHash: string;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  gasLimit: bigint;
}

/** Stores send `id`'s first signed attempt and moves its sender's next nonce past it, in `tx`. */
export async function storeSigned(tx: Sql, id: number, a: SignedAttempt, at: Date): Promise<void> {
  await tx.run(SIGN_SEND, [id, a.nonce, a.rawTx, a.txHash, a.maxFeePerGas.toString(), a.maxPriorityFeePerGas.toString(), a.gasLimit.toString(), at]);
}

/** Stores send `id`'s replacement (same nonce), in `tx`. */
export async function storeReplacement(tx: Sql, id: number, a: Omit<SignedAttempt, "nonce" | "gasLimit">, at: Date): Promise<void> {
  await tx.run(REPLACE_SEND, [id, a.rawTx, a.txHash, a.maxFeePerGas.toString(), a.maxPriorityFeePerGas.toString(), at]);
}

/** Send `id` taken by the node at head `head`. */
export async function markBroadcast(sql: Sql, id: number, head: number): Promise<void> {
  await sql.run(MARK_BROADCAST, [id, head]);
}

/** Send `id` mined at `height` with `fee` (null, null: no longer mined). */
export async function markMined(sql: Sql, id: number, height: number | null, fee: string | null): Promise<void> {
  await sql.run(MARK_MINED, [id, height, fee]);
}

/** Ends send `id` as `state` in `tx`. @returns its withdrawal and customer (nulls but for a withdrawal's send), or null when it had already ended. */
export async function finishSend(tx: Sql, id: number, state: "confirmed" | "failed", reason: string | null): Promise<{ withdrawalId: string | null; customerId: string | null } | null> {
  const [row] = await tx.rows<{ withdrawal_id: string | null; customer_id: string | null }>(FINISH_SEND, [id, state, reason]);
  return row ? { withdrawalId: row.withdrawal_id, customerId: row.customer_id } : null;
}

/** Queues, in `tx` at `at`, the refill of `wei` of the native coin `currency` on `network` from the gas wallet `gas` to the hot wallet `hot` (lower case). */
export async function insertRefill(tx: Sql, refill: { network: string; gas: string; hot: string; wei: bigint; currency: string; at: Date }): Promise<void> {
  await tx.run(INSERT_REFILL, [refill.network, refill.gas, refill.hot, refill.wei.toString(), refill.at, refill.currency]);
}

/** Send `id` waits for fees since `since` at the latest, because of `reason`. */
export async function feeWait(sql: Sql, id: number, since: Date, reason: string): Promise<void> {
  await sql.run(FEE_WAIT, [id, since, reason.slice(0, 500)]);
}

/** Records `reason` as send `id`'s last problem. */
export async function sendError(sql: Sql, id: number, reason: string): Promise<void> {
  await sql.run(SEND_ERROR, [id, reason.slice(0, 500)]);
}

/** A send as a withdrawal's `chain` shows it (spec `ChainSend`). */
export interface SendView {
  tx_hash: string | null;
  state: ChainSendState;
  confirmations: number;
  nonce: number | null;
  fee: string | null;
}

/**
 * The `chain` records of withdrawals `ids` that have a send, by withdrawal id: `confirmations` =
 * the follower's head − the mined height + 1 (0 until mined); `fee` 8-decimal text.
 */
export async function sendViews(sql: Sql, ids: readonly string[]): Promise<Map<string, SendView>> {
  const views = new Map<string, SendView>();
  if (ids.length === 0) return views;
  const rows = await sql.rows<{ withdrawal_id: string; tx_hash: string | null; state: ChainSendState; nonce: number | null; fee: string | null; mined_height: number | null; head: number | null }>(SEND_VIEWS, [ids]);
  for (const r of rows) {
    const confirmations = r.mined_height === null || r.head === null ? 0 : Math.max(0, r.head - r.mined_height + 1);
    views.set(r.withdrawal_id, { tx_hash: r.tx_hash, state: r.state, confirmations, nonce: r.nonce, fee: r.fee });
  }
  return views;
}

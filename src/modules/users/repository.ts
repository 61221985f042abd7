/**
 * The users module's repository (docs/architecture.md "Reaching the database"): the module owns
 * `app_user` (src/modules/users/entities.ts), whose plain CRUD runs in MikroORM's unit of work
 * (src/modules/users/service.ts), except Deactivate User, which runs {@link DEACTIVATE_USER} in a
 * transaction that also announces the revocation of the user's tokens ({@link deactivateUser}).
 *
 * It also holds the rule "a user in good standing", for the modules whose hot paths read the
 * users module's `app_user` inside statements of their own instead of through `UserService`:
 * Create Quote and Create Order (src/modules/trading/repository.ts), Create Transfer for both wallets'
 * owners (src/modules/transfers/repository.ts), and Initiate Withdrawal, Confirm Withdrawal and Resend
 * Code (src/modules/withdrawals/repository.ts). The rule is stated in
 * docs/decisions/customers-users-and-wallets.md "Users" (a user in good standing), each operation's
 * answer to a user who is not in its check order (docs/decisions/trading.md "Check orders",
 * docs/decisions/limits-and-allowlist.md "Transfers", docs/decisions/withdrawals.md "Initiate").
 *
 * A user is in good standing when it exists, belongs to the caller's customer, is not deleted, and
 * is `VERIFIED` and active. The rule is written here once, in its two halves: the SQL a statement
 * embeds ({@link userOfCustomerSql}: exists and is the customer's; {@link goodStandingSql}: not
 * deleted, `VERIFIED` and active), so each operation still reads its caller in the one statement it
 * always did; and {@link assertGoodStanding}, which turns what the statement read into the refusal,
 * in one order (unknown, deleted, not active) with one message each. Only the error code of the two
 * refusals is the operation's own, as its reference page states it.
 */
import type { PreparedStatement, Tx } from "../../db/sql.js";
import { DomainError, quote } from "../../domain/errors.js";

/**
 * Deactivates user `$1` (a UUID) of customer `$2`: `status` `$3`, `is_active` `$4`,
 * `verification_status` `$5` (what src/domain/users.ts `deactivate` answers), `tokens_revoked_at`
 * now, and `token_version` one more than the stored one, computed when the update runs, so two
 * concurrent deactivations both count (the version only has to change; docs/security.md "Tokens and
 * rate-limit headers"). Deleted users are left alone.
 */
export const DEACTIVATE_USER: PreparedStatement = {
  name: "users_deactivate",
  text: `update app_user set status = $3, is_active = $4, verification_status = $5, tokens_revoked_at = now(),
                token_version = token_version + 1, updated_at = now()
          where user_id = $1::uuid and customer_id = $2 and deleted_at is null`,
};

/**
 * Deactivates user `userId` of `customerId` in `tx` with the lifecycle values `state` ({@link DEACTIVATE_USER}).
 * @returns whether a row changed. @throws the driver's error.
 */
export async function deactivateUser(
  tx: Tx,
  customerId: string,
  userId: string,
  state: { status: string; isActive: boolean; verificationStatus: string },
): Promise<boolean> {
  return (await tx.run(DEACTIVATE_USER, [userId, customerId, state.status, state.isActive, state.verificationStatus])) > 0;
}

/**
 * The errors of `UserService.find` and `UserService.findLive` (src/modules/users/service.ts), for a
 * module that reads the user itself on its hot path and checks it the same way: USER_NOT_FOUND (404)
 * for no such user of the customer, RESOURCE_NOT_FOUND (404) for a deleted one.
 */
export const userNotFound = (userId: string): DomainError => new DomainError("USER_NOT_FOUND", `User ${quote(userId)} not found.`);
/** See {@link userNotFound}. */
export const userDeleted = (userId: string): DomainError => new DomainError("RESOURCE_NOT_FOUND", `User ${quote(userId)} has been deleted.`);

/**
 * SQL condition: row `u` of `app_user` (its alias in the statement) is user `userId` of customer
 * `customerId`, both SQL expressions (a placeholder such as `$1`, or a column such as `w.user_id`).
 * In a `where`, no row means no such user of the customer; in an outer join's `on`, a row of nulls.
 */
export function userOfCustomerSql(u: string, userId: string, customerId: string): string {
  return `${u}.user_id = ${userId} and ${u}.customer_id = ${customerId}`;
}

/**
 * SQL boolean, never null: row `u` of `app_user` is not deleted, `VERIFIED` and active (false for
 * the row of nulls of an outer join that found no user). Select it as a column and hand it to
 * {@link assertGoodStanding} as `goodStanding`.
 */
export function goodStandingSql(u: string): string {
  return `coalesce(${u}.deleted_at is null and ${u}.status = 'VERIFIED' and ${u}.is_active, false)`;
}

/** What a statement read of a user it found with {@link userOfCustomerSql}. */
export interface UserStanding {
  /** `deleted_at is not null`. */
  deleted: boolean;
  /** The column of {@link goodStandingSql}. */
  goodStanding: boolean;
}

/** The code an operation answers a deleted, or a not active, user with (both 404; the operation's reference page names it). */
export type StandingRefusalCode = "USER_NOT_FOUND" | "RESOURCE_NOT_FOUND";

/**
 * Checks that user `userId` (as the request named it; quoted in the messages) is in good standing.
 * @param standing what the statement read of the user; null when it found no such user of the customer.
 * @param codes the operation's code for a deleted user and for one that is not `VERIFIED` and active
 *   (Create Quote: RESOURCE_NOT_FOUND and USER_NOT_FOUND; Create Order and Create Transfer:
 *   USER_NOT_FOUND for both; the withdrawals: RESOURCE_NOT_FOUND for both).
 * @throws DomainError USER_NOT_FOUND (404) "User … not found." when there is no such user of the
 *   customer; `codes.deleted` (404) "User … has been deleted."; `codes.inactive` (404) "User … is not active.".
 */
export function assertGoodStanding<S extends UserStanding>(
  userId: string,
  standing: S | null,
  codes: { deleted: StandingRefusalCode; inactive: StandingRefusalCode },
): asserts standing is S {
  if (!standing) throw userNotFound(userId);
  if (standing.goodStanding) return;
  if (standing.deleted) throw new DomainError(codes.deleted, `User ${quote(userId)} has been deleted.`);
  throw new DomainError(codes.inactive, `User ${quote(userId)} is not active.`);
}

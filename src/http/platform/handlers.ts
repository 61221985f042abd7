/**
 * Platform handlers of the identity slice: sessions, customers, credentials, users and user
 * tokens. Each turns a validated request into a service call and returns the envelope's `data`.
 */
import type { operations } from "../../../generated/types/platform.js";
import { DomainError } from "../../domain/errors.js";
import type { Principal } from "../../modules/identity/auth.js";
import type { IdentityService } from "../../modules/identity/service.js";
import type { UserService } from "../../modules/users/service.js";
import type { PageRequest } from "../../domain/paging.js";
import { buildPagination } from "../envelope.js";
import type { HandlerMap } from "../types.js";

/** Services the platform handlers call. */
export interface PlatformServices {
  identity: IdentityService;
  users: UserService;
}

/** Page size default and maximum (reference: "Limits"). */
export const DEFAULT_PAGE_SIZE = 20;

/** `filter[limit]`/`filter[skip]` of a validated query, with defaults. */
export function filterPage(query: { "filter[limit]"?: number; "filter[skip]"?: number }): PageRequest {
  return { limit: Number(query["filter[limit]"] ?? DEFAULT_PAGE_SIZE), skip: Number(query["filter[skip]"] ?? 0) };
}

/** A list's query without its page parameters: the filters every navigation link keeps. */
export function filtersOf(query: object): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) if (k !== "filter[limit]" && k !== "filter[skip]" && v !== undefined) kept[k] = String(v);
  return kept;
}

/** The owner principal's customer. Access rules guarantee the kind; this narrows the type. */
function ownerOf(principal: Principal | null): { customerId: string; credentialId: string } {
  if (principal?.kind !== "owner") throw new DomainError("FORBIDDEN", "This operation needs the owner API key.");
  return principal;
}

/** Query values arrive coerced by the validator; booleans may still be strings from express. */
const asBoolean = (v: unknown): boolean | undefined => (v === undefined ? undefined : v === true || v === "true");

/** Handlers of the implemented platform operations. */
export function platformHandlers({ identity, users }: PlatformServices): HandlerMap<operations> {
  return {
    createSession: async ({ em, principal, body }) => ({ status: 201, data: await identity.createSession(em, principal, body) }),

    createCustomer: async ({ em, body }) => ({ status: 201, data: await identity.createCustomer(em, body) }),
    listCustomers: async ({ em, query }) => {
      const page = filterPage(query);
      const { items, total } = await identity.listCustomers(em, page);
      return { status: 200, data: items, pagination: buildPagination("/customers", page, total) };
    },
    getCustomer: async ({ em, params }) => ({ status: 200, data: (await identity.getCustomerView(em, params.customer_id)) }),
    updateCustomer: async ({ em, params, body }) => ({ status: 200, data: await identity.updateCustomer(em, params.customer_id, body) }),
    deleteCustomer: async ({ em, params }) => {
      await identity.deleteCustomer(em, params.customer_id);
      return { status: 204 };
    },
    generateCredentials: async ({ em, params }) => ({ status: 201, data: await identity.generateCredentials(em, params.customer_id) }),
    listCredentials: async ({ em, params }) => ({ status: 200, data: await identity.listCredentials(em, params.customer_id) }),
    deleteCredential: async ({ em, params }) => {
      await identity.revokeCredential(em, params.customer_id, params.credential_id);
      return { status: 204 };
    },

    createUser: async ({ em, principal, body }) => ({ status: 201, data: await users.create(em, ownerOf(principal).customerId, body) }),
    listUsers: async ({ em, principal, query }) => {
      // page/limit as the reference's request; filter[limit]/filter[skip] as its navigation links.
      const limit = Number(query["filter[limit]"] ?? query.limit ?? DEFAULT_PAGE_SIZE);
      const skip = query["filter[skip]"] !== undefined ? Number(query["filter[skip]"]) : (Number(query.page ?? 1) - 1) * limit;
      const page = { limit, skip };
      const filter = {
        ...(query.status !== undefined && { status: query.status }),
        ...(query.user_type !== undefined && { user_type: query.user_type }),
        ...(query.verification_status !== undefined && { verification_status: query.verification_status }),
        ...(query.is_active !== undefined && { is_active: asBoolean(query.is_active) }),
        ...(query.search !== undefined && query.search !== "" && { search: query.search }),
      };
      const { items, total } = await users.list(em, ownerOf(principal).customerId, page, filter);
      const kept = Object.fromEntries(Object.entries(filter).map(([k, v]) => [k, String(v)]));
      return { status: 200, data: items, pagination: buildPagination("/users", page, total, kept) };
    },
    getUser: async ({ em, principal, params }) => ({ status: 200, data: await users.get(em, ownerOf(principal).customerId, params.user_id) }),
    updateUser: async ({ em, principal, params, body }) => ({
      status: 200,
      data: await users.update(em, ownerOf(principal).customerId, params.user_id, body as never),
    }),
    deleteUser: async ({ em, principal, params }) => {
      await users.delete(em, ownerOf(principal).customerId, params.user_id);
      return { status: 204 };
    },
    activateUser: async ({ em, principal, params }) => ({ status: 200, data: await users.activate(em, ownerOf(principal).customerId, params.user_id) }),
    deactivateUser: async ({ em, principal, params }) => ({ status: 200, data: await users.deactivate(em, ownerOf(principal).customerId, params.user_id) }),
    createUserToken: async ({ em, principal, params }) => {
      const owner = ownerOf(principal);
      return { status: 201, data: await users.issueToken(em, owner.customerId, owner.credentialId, params.user_id) };
    },
  };
}

/** Platform operations of the contract that are not built yet; they answer 501 `NOT_IMPLEMENTED`. None. */
export const platformNotImplemented: readonly (keyof operations)[] = [
];

/**
 * Envelope and pagination builders of both surfaces (reference: "Response envelope of the
 * platform API", "Pagination object", "Response envelope of the credit core").
 */
import type { components as PlatformComponents } from "../../generated/types/platform.js";
import type { components as CreditComponents } from "../../generated/types/credit.js";
import type { PageRequest } from "../domain/paging.js";

/** The two surfaces of the service. */
export type Surface = "platform" | "credit";

export type PlatformMeta = PlatformComponents["schemas"]["Meta"];
export type Pagination = PlatformComponents["schemas"]["Pagination"];
export type PlatformErrorItem = PlatformComponents["schemas"]["ErrorItem"];
export type CreditErrorItem = CreditComponents["schemas"]["CreditErrorItem"];

/** The last millisecond {@link nowIso} formatted, and its text: answers of one millisecond share it. */
let lastMs = Number.NaN;
let lastIso = "";

/** Now, UTC, ISO 8601 with milliseconds (formatted once per millisecond: docs/performance.md "What keeps the request path cheap"). */
function nowIso(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/** `meta` of the platform API: timestamp now (UTC), version `v1`, the request's trace id. */
export function platformMeta(traceId: string): PlatformMeta {
  return { timestamp: nowIso(), version: "v1", trace_id: traceId };
}

/** `meta` of the credit core: timestamp now (UTC), version `v2`, the request's UUID v4 trace id. */
export function creditMeta(traceId: string) {
  return { timestamp: nowIso(), version: "v2" as const, traceId };
}

/** Error body of a surface for one or more error items. */
export function errorBody(surface: Surface, traceId: string, errors: (PlatformErrorItem | CreditErrorItem)[]) {
  return surface === "platform"
    ? { success: false as const, errors, meta: platformMeta(traceId) }
    : { success: false as const, errors, meta: creditMeta(traceId) };
}

/**
 * Builds `meta.pagination`. Navigation links are relative to the surface's base address and use
 * `filter[limit]`/`filter[skip]` (reference: the user list uses this form too); `extraQuery` keeps
 * the list's other filters in every link.
 * @param path the list's path relative to the base address, e.g. `/customers`.
 */
export function buildPagination(
  path: string,
  page: PageRequest,
  total: number,
  extraQuery: Record<string, string> = {},
): Pagination {
  const link = (skip: number): string => {
    const params = new URLSearchParams(extraQuery);
    params.set("filter[limit]", String(page.limit));
    params.set("filter[skip]", String(skip));
    return `${path}?${params.toString().replace(/%5B/g, "[").replace(/%5D/g, "]")}`;
  };
  const lastSkip = total === 0 ? 0 : Math.floor((total - 1) / page.limit) * page.limit;
  const hasNext = page.skip + page.limit < total;
  const hasPrevious = page.skip > 0;
  return {
    records: { skip: page.skip, has_next: hasNext, has_previous: hasPrevious, total, limit: page.limit },
    navigation: {
      first: link(0),
      last: link(lastSkip),
      previous: hasPrevious ? link(Math.max(0, page.skip - page.limit)) : null,
      next: hasNext ? link(page.skip + page.limit) : null,
    },
  };
}

/**
 * Offset paging of the lists (reference: "Pagination object"): the page a caller asked for, as the
 * services read it. The HTTP layer parses `filter[limit]`/`filter[skip]` into it and renders the
 * answer's `meta.pagination` (src/http/envelope.ts `buildPagination`).
 */

/** Offset page request: at most `limit` records (a positive integer) after skipping `skip` (0 or more). */
export interface PageRequest {
  limit: number;
  skip: number;
}

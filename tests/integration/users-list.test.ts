/**
 * Listing end users over HTTP on a real PostgreSQL (reference: "Users (owner API key)", "User",
 * "`individual` object", "States and transitions › User", "Authentication", the User codes,
 * "Limits"; docs/decisions/customers-users-and-wallets.md):
 * listUsers' order, paging, meta.pagination, search and filters, and the errors of its parameters.
 */
import { describe, expect, it } from "vitest";
import { expectPlatformError } from "../support/fixtures.js";
import { ids, useUsersScene } from "../support/users-scene.js";
import { clockPast } from "../support/wait.js";

const users = useUsersScene();
const { tenant, newUser, deleteUser, listUsers, activated, deactivated } = users;

describe("GET /users (listUsers)", () => {
  it("lists newest first with page/limit and meta.pagination in filter[limit]/filter[skip] form", async () => {
    const { key } = await tenant("list");
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const user = await newUser(key, { first_name: `Person${"abcde"[i]}` });
      created.push(user.user_id);
      await clockPast(user.created_at as string); // the next user's created_at is a later millisecond
    }
    const newestFirst = [...created].reverse();

    const all = await listUsers(key);
    expect(all.status).toBe(200);
    expect(all.body.success).toBe(true);
    expect(ids(all)).toEqual(newestFirst);
    expect(all.body.meta.pagination).toEqual({
      records: { skip: 0, has_next: false, has_previous: false, total: 5, limit: 20 },
      navigation: { first: "/users?filter[limit]=20&filter[skip]=0", last: "/users?filter[limit]=20&filter[skip]=0", previous: null, next: null },
    });

    const p1 = await listUsers(key, "?limit=2");
    expect(ids(p1)).toEqual(newestFirst.slice(0, 2));
    expect(p1.body.meta.pagination).toEqual({
      records: { skip: 0, has_next: true, has_previous: false, total: 5, limit: 2 },
      navigation: {
        first: "/users?filter[limit]=2&filter[skip]=0",
        last: "/users?filter[limit]=2&filter[skip]=4",
        previous: null,
        next: "/users?filter[limit]=2&filter[skip]=2",
      },
    });

    const p2 = await listUsers(key, "?page=2&limit=2");
    expect(ids(p2)).toEqual(newestFirst.slice(2, 4));
    expect(p2.body.meta.pagination.records).toEqual({ skip: 2, has_next: true, has_previous: true, total: 5, limit: 2 });
    expect(p2.body.meta.pagination.navigation.previous).toBe("/users?filter[limit]=2&filter[skip]=0");
    expect(p2.body.meta.pagination.navigation.next).toBe("/users?filter[limit]=2&filter[skip]=4");

    const p3 = await listUsers(key, "?page=3&limit=2");
    expect(ids(p3)).toEqual(newestFirst.slice(4));
    expect(p3.body.meta.pagination.records).toMatchObject({ skip: 4, has_next: false, has_previous: true });
    expect(p3.body.meta.pagination.navigation.next).toBeNull();

    // the navigation links can be followed as they are
    const followed = await listUsers(key, (p1.body.meta.pagination.navigation.next as string).replace("/users", ""));
    expect(followed.status).toBe(200);
    expect(ids(followed)).toEqual(newestFirst.slice(2, 4));
    expect(followed.body.meta.pagination.navigation.next).toBe("/users?filter[limit]=2&filter[skip]=4");
    const filtered = await listUsers(key, "?status=PENDING&limit=2");
    expect(filtered.body.meta.pagination.navigation.next).toBe("/users?status=PENDING&filter[limit]=2&filter[skip]=2");
    const followedFiltered = await listUsers(key, (filtered.body.meta.pagination.navigation.next as string).replace("/users", ""));
    expect(ids(followedFiltered)).toEqual(newestFirst.slice(2, 4));

    const beyond = await listUsers(key, "?page=9&limit=2");
    expect(beyond.status).toBe(200);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.meta.pagination.records.total).toBe(5);
  });

  it("answers an empty page for a customer without users", async () => {
    const { key } = await tenant("list-empty");
    const res = await listUsers(key);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.meta.pagination.records).toEqual({ skip: 0, has_next: false, has_previous: false, total: 0, limit: 20 });
  });

  it("filters by status, is_active and verification_status", async () => {
    const { key } = await tenant("list-filter");
    const pending = await newUser(key);
    const verified = await newUser(key);
    const suspended = await newUser(key);
    await activated(key, verified.user_id);
    await activated(key, suspended.user_id);
    await deactivated(key, suspended.user_id);

    expect(ids(await listUsers(key, "?status=PENDING"))).toEqual([pending.user_id]);
    expect(ids(await listUsers(key, "?status=VERIFIED"))).toEqual([verified.user_id]);
    expect(ids(await listUsers(key, "?status=SUSPENDED"))).toEqual([suspended.user_id]);
    expect(ids(await listUsers(key, "?is_active=true"))).toEqual([verified.user_id]);
    expect(ids(await listUsers(key, "?is_active=false")).sort()).toEqual([pending.user_id, suspended.user_id].sort());
    expect(ids(await listUsers(key, "?verification_status=pending"))).toEqual([pending.user_id]);
    expect(ids(await listUsers(key, "?verification_status=verified")).sort()).toEqual([verified.user_id, suspended.user_id].sort());
    expect(ids(await listUsers(key, "?verification_status=unverified"))).toEqual([]);
    expect(ids(await listUsers(key, "?status=SUSPENDED&is_active=true"))).toEqual([]);

    const filtered = await listUsers(key, "?status=PENDING&limit=1");
    expect(filtered.body.meta.pagination.records.total).toBe(1);
    expect(filtered.body.meta.pagination.navigation.first).toBe("/users?status=PENDING&filter[limit]=1&filter[skip]=0");
  });

  it("filters by user_type; any other user_type answers 400 INVALID_USER_TYPE", async () => {
    const { key } = await tenant("list-type");
    const person = await newUser(key, { account_type: "individual" });
    const company = await newUser(key, { account_type: "business" });
    expect(ids(await listUsers(key, "?user_type=individual"))).toEqual([person.user_id]);
    expect(ids(await listUsers(key, "?user_type=business"))).toEqual([company.user_id]);
    expectPlatformError(await listUsers(key, "?user_type=corporate"), 400, "INVALID_USER_TYPE");
    expectPlatformError(await listUsers(key, "?user_type=Individual"), 400, "INVALID_USER_TYPE");
  });

  it("searches first name, last name and email, case-insensitively", async () => {
    const { key } = await tenant("list-search");
    const marty = await newUser(key, { first_name: "Marty", last_name: "McFly", email: `marty.${users.customerSeq}@hill-valley.example` });
    const doc = await newUser(key, { first_name: "Emmett", last_name: "Brown", email: `doc.${users.customerSeq}@Hill-Valley.example` });
    const biff = await newUser(key, { first_name: "Biff", last_name: "Tannen", email: `biff.${users.customerSeq}@tannen.example` });

    expect(ids(await listUsers(key, "?search=MARTY"))).toEqual([marty.user_id]);
    expect(ids(await listUsers(key, "?search=mcfly"))).toEqual([marty.user_id]);
    expect(ids(await listUsers(key, "?search=bRoWn"))).toEqual([doc.user_id]);
    expect(ids(await listUsers(key, "?search=HILL-VALLEY")).sort()).toEqual([marty.user_id, doc.user_id].sort());
    expect(ids(await listUsers(key, "?search=tannen"))).toEqual([biff.user_id]);
    expect(ids(await listUsers(key, "?search=nobody"))).toEqual([]);
    // LIKE wildcards in the search text are literal
    expect(ids(await listUsers(key, "?search=%25"))).toEqual([]);
    expect(ids(await listUsers(key, "?search=_"))).toEqual([]);
    expect(ids(await listUsers(key, "?search=")).length).toBe(3);
  });

  it("excludes deleted users and other customers' users", async () => {
    const a = await tenant("list-own-a");
    const b = await tenant("list-own-b");
    const mine = await newUser(a.key);
    const gone = await newUser(a.key);
    await newUser(b.key);
    expect((await deleteUser(a.key, gone.user_id)).status).toBe(204);
    const res = await listUsers(a.key);
    expect(ids(res)).toEqual([mine.user_id]);
    expect(res.body.meta.pagination.records.total).toBe(1);
    expect(ids(await listUsers(a.key, `?search=${encodeURIComponent(gone.email)}`))).toEqual([]);
  });

  it.each(["?limit=101", "?limit=0", "?page=0", "?limit=abc", "?status=DELETED", "?verification_status=done", "?is_active=maybe"])(
    "answers 422 for %s",
    async (query) => {
      const { key } = await tenant("list-422");
      const res = await listUsers(key, query);
      expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
      expect(res.body.errors).toHaveLength(1);
    },
  );

  it("answers the largest page number the contract allows without a server error", async () => {
    const { key } = await tenant("list-huge-page");
    await newUser(key);
    const res = await listUsers(key, "?page=2147483647&limit=100");
    expect(res.status, JSON.stringify(res.body)).not.toBe(500);
    expect([200, 422]).toContain(res.status);
    if (res.status === 200) {
      expect(res.body.data).toEqual([]);
      expect(res.body.meta.pagination.records).toMatchObject({ total: 1, has_next: false, has_previous: true });
    }
  });

  it("accepts limit=100", async () => {
    const { key } = await tenant("list-100");
    const res = await listUsers(key, "?limit=100");
    expect(res.status).toBe(200);
    expect(res.body.meta.pagination.records.limit).toBe(100);
  });
});

/**
 * Names people compare and user tokens (docs/security.md "Names people compare", "Tokens and
 * rate-limit headers"), beyond what users-*.test.ts and wallets-*.test.ts hold:
 * - customer names follow the mixed-script rule of every name;
 * - Migration20261126030000_names_tokens on a database that already holds data: wallets whose
 *   names collide under the new comparison ("Main", "main", "ＭＡＩＮ" of one user) do not make it
 *   fail; the oldest keeps the name's key, the younger ones keep their names and no key, and no new
 *   wallet can take the name. Users deactivated before it keep refusing the tokens issued before it.
 */
import request from "supertest";
import { beforeAll, expect, it } from "vitest";
import { SecretBox } from "../../src/modules/identity/secrets.js";
import { TEST_SECRETS_KEY, useTestApp } from "../support/app.js";
import { BASE, Walk, expectPlatformError } from "../support/fixtures.js";

const MIGRATION = "Migration20261126030000_names_tokens";

const t = useTestApp();
let walk: Walk;

beforeAll(async () => {
  walk = new Walk(t.express);
});

const api = t.api;
const sql = <Row extends object>(text: string, params: unknown[] = []) => t.orm.em.getConnection().execute<Row[]>(text, params);
const BTC = { name: "networks/bitcoin", currency: "btc" };

/** An active user of `key`'s customer. */
async function activeUser(key: string): Promise<string> {
  const user = await walk.user(key);
  const userId = user.user_id as string;
  expect((await api().post(`${BASE}/users/${userId}/activate`).set("x-api-key", key)).status).toBe(200);
  return userId;
}

it("refuses customer names mixing Latin with Cyrillic or Greek letters inside one word, naming each field (422)", async () => {
  const operator = await walk.operatorToken();
  const asOperator = (r: request.Test) => r.set("Authorization", `Bearer ${operator}`);
  const created = await asOperator(api().post(`${BASE}/customers`)).send({ customer_id: "mixed-co", email: "ops@mixed.example", entity_name: "\u0410cme Corp" });
  expectPlatformError(created, 422, "UNPROCESSABLE_ENTITY");
  expect(created.body.errors).toEqual([{ code: "UNPROCESSABLE_ENTITY", field: "entity_name", message: expect.stringMatching(/mix Latin, Cyrillic or Greek letters/) }]);
  await walk.customer("mixed-co", operator);
  const put = (body: Record<string, unknown>) => asOperator(api().put(`${BASE}/customers/mixed-co`)).send(body);
  const res = await put({ first_name: "\u0410da", last_name: "Lovel\u03b1ce", business: { entity_name: "Mixed C\u043e", incorporation_country: "US" } });
  expectPlatformError(res, 422, "UNPROCESSABLE_ENTITY");
  expect((res.body.errors as { field: string }[]).map((e) => e.field).sort()).toEqual(["business.entity_name", "first_name", "last_name"]);
  expect((await put({ first_name: "Ада", last_name: "Lovelace", business: { entity_name: "ООО Ромашка Ltd", incorporation_country: "US" } })).status).toBe(200);
});

it("keys the existing wallets oldest first, keeps look-alikes that already exist, and keeps tokens of users deactivated before it refused", { timeout: 60_000 }, async () => {
  const { key, customerId, credentialId } = await walk.tenant("mig-names");
  const holder = await activeUser(key);
  const many = await activeUser(key);
  const suspendedOnce = await activeUser(key);
  const created = await api().post(`${BASE}/users/${holder}/wallets`).set("x-api-key", key).send({ name: "Main", networks: [BTC] });
  expect(created.status, JSON.stringify(created.body)).toBe(201);

  // tokens as the service issued them before the migration: no version claim
  const box = new SecretBox(TEST_SECRETS_KEY);
  const legacy = async (userId: string) => (await box.issueToken({ kind: "user", userId, customerId, credentialId }, 900)).token;
  const manyToken = await legacy(many);
  const suspendedToken = await legacy(suspendedOnce);
  expect((await api().post(`${BASE}/users/${suspendedOnce}/deactivate`).set("x-api-key", key)).status).toBe(200);
  expect((await api().post(`${BASE}/users/${suspendedOnce}/activate`).set("x-api-key", key)).status).toBe(200);

  await t.orm.migrator.down({ migrations: [MIGRATION] });
  // wallets the exact-name rule allowed (without networks, so without addresses to make): look-alikes
  // of "Main" (microseconds apart), and 1200 wallets of another user whose 600 names each come
  // twice, across the migration's 1000-row batches
  await sql(
    `insert into wallet (wallet_id, customer_id, user_id, vault_wallet_id, name, description, wallet_type, networks, status, created_at, updated_at)
     select gen_random_uuid(), w.customer_id, w.user_id, w.vault_wallet_id, v.name, null, w.wallet_type, '[]'::jsonb, 'ACTIVE', w.created_at + v.i * interval '1 microsecond', w.updated_at
       from wallet w, (values (1, 'main'), (2, 'ＭＡＩＮ'), (3, 'Savings')) as v(i, name) where w.user_id = ?`,
    [holder],
  );
  await sql(
    `insert into wallet (wallet_id, customer_id, user_id, vault_wallet_id, name, description, wallet_type, networks, status, created_at, updated_at)
     select gen_random_uuid(), w.customer_id, ?, w.vault_wallet_id, case when i <= 600 then 'W ' || i else 'w ' || (i - 600) end, null, w.wallet_type, '[]'::jsonb, 'ACTIVE',
            w.created_at + i * interval '1 microsecond', w.updated_at
       from wallet w, generate_series(1, 1200) as i where w.user_id = ? and w.name = 'Main'`,
    [many, holder],
  );
  await t.orm.migrator.up({ migrations: [MIGRATION] });

  const keys = await sql<{ name: string; name_key: string | null }>(`select name, name_key from wallet where user_id = ? order by created_at`, [holder]);
  expect(keys).toEqual([
    { name: "Main", name_key: "main" },
    { name: "main", name_key: null },
    { name: "ＭＡＩＮ", name_key: null },
    { name: "Savings", name_key: "savings" },
  ]);
  const [counts] = await sql<{ keyed: string; unkeyed: string; first_keyed: boolean }>(
    `select count(name_key) as keyed, count(*) - count(name_key) as unkeyed, bool_and(name_key is not null) filter (where name like 'W %') as first_keyed
       from wallet where user_id = ?`,
    [many],
  );
  expect(counts).toEqual({ keyed: "600", unkeyed: "600", first_keyed: true });

  // nothing a client sees changed; the name stays taken in all its forms
  const list = await api().get(`${BASE}/users/${holder}/wallets`).set("x-api-key", key);
  expect(list.status, JSON.stringify(list.body)).toBe(200);
  expect((list.body.data as { name: string }[]).map((w) => w.name).sort()).toEqual(["Main", "Savings", "main", "ＭＡＩＮ"].sort());
  for (const name of ["MAIN", "ｍａｉｎ", "savings"]) {
    expectPlatformError(await api().post(`${BASE}/users/${holder}/wallets`).set("x-api-key", key).send({ name, networks: [BTC] }), 409, "RESOURCE_CONFLICT");
  }
  expect((await api().post(`${BASE}/users/${holder}/wallets`).set("x-api-key", key).send({ name: "Spending", networks: [BTC] })).status).toBe(201);

  // a token without a version works for a user never deactivated, not for one deactivated before
  const wallets = (userId: string, token: string) => api().get(`${BASE}/users/${userId}/wallets`).set("Authorization", `Bearer ${token}`);
  expect((await wallets(many, manyToken)).status).toBe(200);
  const refused = await wallets(suspendedOnce, suspendedToken);
  expectPlatformError(refused, 401, "UNAUTHORIZED");
  expect(refused.body.errors[0].message).toMatch(/revoked when its user was deactivated/);
});

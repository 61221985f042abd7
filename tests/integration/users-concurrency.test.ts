/**
 * Uniqueness holds under concurrency: the database's partial unique indexes back the service's
 * pre-checks, and a lost race answers the same 409 as a plain duplicate (never a 500).
 */
import { beforeAll, expect, it } from "vitest";
import { useTestApp } from "../support/app.js";
import { BASE, Walk, userBody } from "../support/fixtures.js";

const t = useTestApp();
let key: string;

beforeAll(async () => {
  key = (await new Walk(t.express).tenant("race-co")).key;
});

it("20 parallel creates with one email: exactly one 201, the rest 409 EMAIL_ALREADY_EXISTS", async () => {
  const email = "same.person@example.com";
  const responses = await Promise.all(
    Array.from({ length: 20 }, () => t.api().post(`${BASE}/users`).set("x-api-key", key).send(userBody({ email }))),
  );
  const statuses = responses.map((r) => r.status).sort();
  expect(statuses.filter((s) => s === 201)).toHaveLength(1);
  expect(statuses.filter((s) => s === 409)).toHaveLength(19);
  for (const r of responses.filter((x) => x.status === 409)) expect(r.body.errors[0].code).toBe("EMAIL_ALREADY_EXISTS");
  const list = await t.api().get(`${BASE}/users?search=same.person`).set("x-api-key", key);
  expect(list.body.meta.pagination.records.total).toBe(1);
});

it("20 parallel creates with one phone number: exactly one 201, the rest 409 PHONE_ALREADY_EXISTS", async () => {
  const responses = await Promise.all(
    Array.from({ length: 20 }, () =>
      t.api().post(`${BASE}/users`).set("x-api-key", key).send(userBody({ phone_country_code: "ES", phone_number: "612345678" })),
    ),
  );
  expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
  const conflicts = responses.filter((r) => r.status === 409);
  expect(conflicts).toHaveLength(19);
  for (const r of conflicts) expect(r.body.errors[0].code).toBe("PHONE_ALREADY_EXISTS");
});

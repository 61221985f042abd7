/**
 * The committed migrations and the entity definitions describe the same schema: after migrating a
 * fresh database, MikroORM finds nothing to change. A new entity field without a migration (or the
 * reverse) fails here; `npm run migration:create` writes the missing migration.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { initORM, type MikroORM } from "../../src/db/orm.js";
import { ENTITIES } from "../../src/modules/entities.js";
import { createTestDatabase } from "../support/app.js";

let orm: MikroORM;
let drop: () => Promise<void>;

beforeAll(async () => {
  const db = await createTestDatabase();
  drop = db.drop;
  orm = await initORM(db.url, ENTITIES);
});
afterAll(async () => {
  await orm.close(true);
  await drop();
});

it("applies every migration and leaves no difference from the entities", async () => {
  expect(await orm.migrator.getPending()).toEqual([]);
  expect((await orm.migrator.getExecuted()).map((m) => m.name)).toContain("Migration20261121000000_identity");
  expect((await orm.schema.getUpdateSchemaSQL()).trim()).toBe("");
});

it("rolls every migration back down to an empty schema and up again", async () => {
  await orm.migrator.down({ to: 0 });
  const tables = await orm.em.getConnection().execute<{ table_name: string }[]>(
    "select table_name from information_schema.tables where table_schema = 'public' and table_name <> 'mikro_orm_migrations'",
  );
  expect(tables).toEqual([]);
  await orm.migrator.up();
  expect((await orm.schema.getUpdateSchemaSQL()).trim()).toBe("");
});

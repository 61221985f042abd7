/**
 * `npm run ledger:check [-- --rebuild]`: checks the custody ledger's invariants on the configured
 * database (DATABASE_URL, or the embedded PostgreSQL under DATA_DIR): every journal entry and every
 * currency sums to zero, each wallet account's cached balance equals the sum of its postings,
 * external (network) accounts hold no cached balance (theirs is derived from their postings:
 * docs/decisions/customers-users-and-wallets.md "The custody ledger"), no wallet bucket is negative. With `--rebuild`, rebuilds the balance cache from the postings
 * first. Prints the findings (src/modules/ledger/service.ts `LedgerCheck`) and the external
 * accounts' balances, summed from their postings.
 *
 * With live EVM networks (the same configuration the service reads), it also compares, per live
 * network and currency, what the service's addresses hold on chain with what the ledger owes
 * (docs/decisions/live-chains.md "Reconciliation"; scripts/ledger-check-chains.ts): a deficit fails,
 * a surplus is reported only. Exits 1 when a problem remains.
 */
import { loadConfig } from "../src/config.js";
import { startEmbeddedPostgres } from "../src/db/embedded.js";
import { initORM } from "../src/db/orm.js";
import { Db } from "../src/db/sql.js";
import { ENTITIES } from "../src/modules/entities.js";
import { LedgerService } from "../src/modules/ledger/service.js";
import { checkLiveChains } from "./ledger-check-chains.js";

const config = loadConfig();
const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres(config.dataDir);
const orm = await initORM(config.databaseUrl ?? (embedded?.url as string), ENTITIES);
// unnamed statements: the check also runs through a transaction pooler (docs/operations.md "PgBouncer")
const db = new Db(await orm.em.getConnection().getNativeClient(), { named: false });
let failed: boolean;
try {
  const ledger = new LedgerService();
  if (process.argv.includes("--rebuild")) {
    const changed = await db.transaction((tx) => ledger.rebuildBalanceCache(tx));
    console.log(`Rebuilt the balance cache: ${changed} account(s) corrected.`);
  }
  const check = await ledger.verify(db);
  console.log(JSON.stringify(check, null, 2));
  const external = await ledger.externalBalances(db);
  console.log("External (network) accounts, balances summed from their postings:");
  for (const account of external) console.log(`  ${account.code} ${account.balance.toFixed()}`);
  failed = Object.values(check).some((list) => list.length > 0);
  console.log(failed ? "The ledger is NOT consistent." : "The ledger is consistent.");
  if (!(await checkLiveChains(config, db, ledger))) failed = true;
} finally {
  await orm.close(true);
  await embedded?.stop();
}
process.exit(failed ? 1 : 0);

/**
 * The live networks' part of `npm run ledger:check` (scripts/ledger-check.ts;
 * docs/decisions/live-chains.md "Reconciliation"): per live network and currency, what the
 * service's addresses hold on chain against what the ledger owes (src/modules/chains/overview-reconcile.ts).
 * The live networks come from the configuration the service reads (src/config.ts `loadConfig`),
 * the custody keys are opened as the app opens them (src/providers/evm/keys.ts `openCustodyKeys`),
 * except that the check never writes a mnemonic: without `CUSTODY_MNEMONIC_FILE`, a missing
 * `DATA_DIR/custody-mnemonic.txt` fails the check. Without a live network it does nothing.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../src/config.js";
import type { Db } from "../src/db/sql.js";
import { createLogger } from "../src/logging.js";
import { hasDeficit, holdingLine, reconcileChains } from "../src/modules/chains/overview-reconcile.js";
import type { LedgerService } from "../src/modules/ledger/service.js";
import { CUSTODY_MNEMONIC_FILE_NAME, openCustodyKeys } from "../src/providers/evm/keys.js";

/**
 * Prints each live network's holdings against the ledger (one line per network and currency).
 * @returns false when an address set holds less than the ledger owes, or the check could not be made
 *   (no mnemonic, a node that does not answer); true otherwise, and without a live network.
 */
export async function checkLiveChains(config: Config, db: Db, ledger: LedgerService): Promise<boolean> {
  if (config.liveChains.length === 0) return true;
  console.log("Live networks, what the deposit addresses and the hot wallet hold on chain against what the ledger owes:");
  if (config.custodyMnemonicFile === undefined && !existsSync(join(config.dataDir, CUSTODY_MNEMONIC_FILE_NAME))) {
    console.log(`  not checked: no custody mnemonic at ${join(config.dataDir, CUSTODY_MNEMONIC_FILE_NAME)} (set DATA_DIR or CUSTODY_MNEMONIC_FILE as the service has them)`);
    return false;
  }
  try {
    const custody = openCustodyKeys(config.liveChains.map((c) => c.network), config, createLogger(config.logLevel));
    if (!custody) return true;
    const holdings = await reconcileChains(config.liveChains, { db, ledger, custody, rpcTimeoutS: config.chainRpcTimeoutS });
    for (const h of holdings) console.log(`  ${holdingLine(h)}`);
    const short = hasDeficit(holdings);
    console.log(short ? "The service's addresses hold LESS than the ledger owes." : "The service's addresses hold what the ledger owes.");
    return !short;
  } catch (error) {
    console.log(`  not checked: ${error instanceof Error ? error.message : String(error)}`);
    return false;
  }
}

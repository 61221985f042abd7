/**
 * The email poller (reference: "Email poller"; decisions.md §4; issue 7). STUB being written: the
 * constructor and method names are the contract with src/app.ts and the handlers.
 */
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type { Logger } from "pino";
import type { SecretBox } from "../identity/secrets.js";
import type { IdentityService } from "../identity/service.js";
import type { JobScheduler } from "../../jobs/scheduler.js";
import type { WithdrawalService } from "../withdrawals/service.js";

/** Settings of the poller (src/config.ts). */
export interface PollerSettings {
  /** `POLLER_INTERVAL_S`. */
  intervalS: number;
  /** `IMAP_TIMEOUT_S`. */
  timeoutS: number;
  /** `ALLOW_PRIVATE_NETWORK_TARGETS`. */
  allowPrivate: boolean;
}

/** Name of the polling job (one recurring job per enabled poller, data `{pollerId}`). */
export const POLL_JOB = "email-poll";

/** Email pollers of customers and their polling job. */
export class EmailPollerService {
  constructor(
    readonly orm: MikroORM,
    readonly box: SecretBox,
    readonly identity: IdentityService,
    readonly scheduler: JobScheduler,
    readonly withdrawals: WithdrawalService,
    readonly settings: PollerSettings,
    readonly logger: Logger,
  ) {}

  /** Defines the polling job on the scheduler (every process). */
  defineJobs(): void {
    this.scheduler.define<{ pollerId: string }>(POLL_JOB, async ({ pollerId }) => {
      await this.poll(this.orm.em.fork(), pollerId);
    });
  }

  /** Makes sure every enabled poller has its recurring job at the configured interval (worker start). */
  async syncJobs(): Promise<void> {}

  /** One poll of poller `pollerId`. */
  async poll(_em: EntityManager, _pollerId: string): Promise<void> {}
}

/** The customer's PIN webhook and its delivery (issue 7). SKELETON being written. */
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type { Logger } from "pino";
import type { SecretBox } from "../identity/secrets.js";
import type { IdentityService } from "../identity/service.js";
import type { JobScheduler } from "../../jobs/scheduler.js";
import type { PinEvent, PinPush } from "../withdrawals/service.js";

/** Settings of webhook delivery (src/config.ts). */
export interface WebhookSettings {
  timeoutS: number;
  retryBaseS: number;
  allowPrivate: boolean;
}

/** Name of the delivery job. */
export const DELIVERY_JOB = "webhook-delivery";

/** Webhook configuration, outbox and delivery. */
export class WebhookService implements PinPush {
  constructor(
    readonly orm: MikroORM,
    readonly box: SecretBox,
    readonly identity: IdentityService,
    readonly scheduler: JobScheduler,
    readonly settings: WebhookSettings,
    readonly logger: Logger,
  ) {}

  defineJobs(): void {}

  async scheduleRecurring(_intervalS: number): Promise<void> {}

  async enqueuePin(_tx: EntityManager, _pin: PinEvent): Promise<void> {}

  kick(): void {}
}

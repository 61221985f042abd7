/** Platform handlers of the email poller (issue 7). STUB being written. */
import type { operations } from "../../../generated/types/platform.js";
import type { EmailPollerService } from "../../modules/poller/service.js";
import type { HandlerMap } from "../types.js";

/** Handlers of the email poller operations. */
export function pollerHandlers(_pollers: EmailPollerService): HandlerMap<operations> {
  return {};
}

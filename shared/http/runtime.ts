import { systemClock, type Clock } from "../lease/clock.js";
import type { ServerConfig } from "../config/server-config.js";
import { processStallMonitor } from "./stall-monitor.js";
import { LeaseService } from "../lease/lease-service.js";
import { LeaseTokenSigner } from "../lease/lease-token.js";
import type { LeaseStore } from "../lease/lease-store.js";

/** Everything a request handler needs, built once per process. */
export interface Runtime {
  readonly service: LeaseService;
}

export function createRuntime(
  config: Pick<ServerConfig, "timing" | "storeTimeoutMs" | "leaseSecret">,
  store: LeaseStore,
  clock: Clock = systemClock,
): Runtime {
  // Watch for stalls from start-up on, so that a freeze before the first request is seen too.
  processStallMonitor.start();
  const service = new LeaseService({
    store,
    clock,
    timing: config.timing,
    tokens: new LeaseTokenSigner(config.leaseSecret),
    storeTimeoutMs: config.storeTimeoutMs,
  });
  return { service };
}

import { systemClock, type Clock } from "../lease/clock.js";
import type { ServerConfig } from "../config/server-config.js";
import { processStallMonitor } from "./stall-monitor.js";
import { LeaseService } from "../lease/lease-service.js";
import { AdmissionGate } from "../lease/admission.js";
import { LeaseTokenSigner } from "../lease/lease-token.js";
import type { LeaseStore } from "../lease/lease-store.js";
import { MemberService } from "../members/member-service.js";
import type { MemberStore } from "../members/member-store.js";
import { MemberSweeper } from "../members/member-sweeper.js";
import { MemberTokenSigner } from "../members/member-token.js";
import { defaultMembershipRules, type MembershipRules } from "../members/membership-rules.js";
import { noMemberStore } from "../members/no-member-store.js";

/** Everything a request handler (and the sweeper's timer) needs, built once per process. */
export interface Runtime {
  readonly service: LeaseService;
  readonly members: MemberService;
  readonly sweeper: MemberSweeper;
  /** Membership's durations and the sweep period, as configured. */
  readonly membership: MembershipRules;
}

/** The configuration a runtime reads; `members` defaults from I and T (defaultMembershipRules). */
export type RuntimeConfig = Pick<ServerConfig, "timing" | "storeTimeoutMs" | "leaseSecret"> & {
  readonly members?: ServerConfig["members"];
  /** Load shedding's bounds; absent or undefined: none. */
  readonly admission?: ServerConfig["admission"];
};

/**
 * The runtime of one process. `memberStore` is the configured membership store; without one
 * (tests of the lease routes) every member route answers 503 and nothing is kept.
 */
export function createRuntime(config: RuntimeConfig, store: LeaseStore, clock: Clock = systemClock, memberStore: MemberStore = noMemberStore()): Runtime {
  // Watch for stalls from start-up on, so that a freeze before the first request is seen too.
  processStallMonitor.start();
  // One gate for the process: leases and members share the store, so they share its bound.
  // A shed caller is told to come back after about one I.
  const admission = config.admission === undefined ? undefined : new AdmissionGate(config.admission, Math.max(1, Math.ceil(config.timing.intervalMs / 1000)));
  const service = new LeaseService({
    ...(admission === undefined ? {} : { admission }),
    store,
    clock,
    timing: config.timing,
    tokens: new LeaseTokenSigner(config.leaseSecret),
    storeTimeoutMs: config.storeTimeoutMs,
  });
  const membership: MembershipRules =
    config.members === undefined
      ? defaultMembershipRules(config.timing)
      : {
          ...config.timing,
          ttlMs: config.members.ttlMs,
          retentionMs: config.members.retentionMs,
          maxPerGroup: config.members.maxPerGroup,
          sweepPeriodMs: config.members.sweepPeriodMs,
        };
  const members = new MemberService({
    ...(admission === undefined ? {} : { admission }),
    store: memberStore,
    clock,
    rules: membership,
    tokens: new MemberTokenSigner(config.leaseSecret),
    storeTimeoutMs: config.storeTimeoutMs,
  });
  const sweeper = new MemberSweeper({
    store: memberStore,
    clock,
    rules: membership,
    storeTimeoutMs: config.storeTimeoutMs,
  });
  return { service, members, sweeper, membership };
}

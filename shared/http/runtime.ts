import { systemClock, type Clock } from "../service/clock.js";
import type { ServerConfig } from "../config/server-config.js";
import { processStallMonitor } from "../service/stall-monitor.js";
import { processLoopLag } from "../service/loop-lag.js";
import { processLoopLoad } from "../service/loop-load.js";
import { LeaseService } from "../lease/lease-service.js";
import { AdmissionGate, type AdmissionLimits, type ProcessLoad } from "../service/admission.js";
import { LeaseTokenSigner } from "../lease/lease-token.js";
import { TokenKeys, type TokenSecretStore } from "../service/token-keys.js";
import { StandbySweeper } from "../lease/standby-sweeper.js";
import type { LeaseStore } from "../lease/lease-store.js";
import { MemberService } from "../members/member-service.js";
import type { MemberStore } from "../members/member-store.js";
import { MemberSweeper } from "../members/member-sweeper.js";
import { MemberTokenSigner } from "../members/member-token.js";
import { defaultMembershipRules, type MembershipRules } from "../members/membership-rules.js";
import { noMemberStore } from "../members/no-member-store.js";
import type { Meter } from "@opentelemetry/api";
import type { TelemetryFailure } from "../contract/lease-view.js";
import { meteredLeaseStore, meteredMemberStore } from "./metered-stores.js";
import { createServiceMetrics } from "./service-metrics.js";

/** Everything a request handler (and the sweeper's timer) needs, built once per process. */
export interface Runtime {
  readonly service: LeaseService;
  readonly members: MemberService;
  readonly sweeper: MemberSweeper;
  /** Deletes the lease standby rows gone stale (the sweepStandbys timer): reads never do. */
  readonly standbySweeper: StandbySweeper;
  /** Membership's durations and the sweep period, as configured. */
  readonly membership: MembershipRules;
  /**
   * This process's metrics as Prometheus text (GET /api/metrics); only the local host has
   * it. In Azure the metrics go to Application Insights: a scaled-out app has no single
   * process to scrape.
   */
  readonly metricsText?: () => Promise<string>;
  /** Telemetry that could not start: the service runs without it, and health names it with its fix. */
  readonly telemetryFailure?: TelemetryFailure;
  /**
   * What the lease and member tokens are signed with: HA_LEASE_SECRET, or the secret kept in
   * the store (`parts.secrets`), loaded from the first moment the store answers.
   */
  readonly tokenKeys: TokenKeys;
}

/** Where the runtime's metrics go. Without a meter nothing is measured and the stores are not wrapped. */
export interface RuntimeTelemetry {
  /** The meter the service's instruments are made on (shared/http/metric-names.ts). */
  readonly meter?: Meter;
  /** The process's metrics as Prometheus text, when this host can serve them. */
  readonly metricsText?: () => Promise<string>;
  /** Why telemetry asked for could not start (there is then no meter): health shows it. */
  readonly failure?: TelemetryFailure;
  /** How busy the process is and how late it runs what is due, as the admission gate reads them; processLoad() by default (tests give their own). */
  readonly load?: ProcessLoad;
}

/** The configuration a runtime reads; `members` defaults from I and T (defaultMembershipRules). */
export type RuntimeConfig = Pick<ServerConfig, "timing" | "storeTimeoutMs" | "leaseSecret"> & {
  readonly members?: ServerConfig["members"];
  /** Load shedding's bounds; absent or undefined: none. */
  readonly admission?: ServerConfig["admission"];
};

/** What a runtime runs on, besides its settings: the stores, the clock and the telemetry. */
export interface RuntimeParts {
  readonly leases: LeaseStore;
  /** Membership's store; none by default: every member route then answers 503 and nothing is kept. */
  readonly members?: MemberStore;
  /**
   * Where the token secret is kept when HA_LEASE_SECRET is not set (the lease store, for
   * the Table and Cosmos stores): every instance on one store then signs with one secret.
   * Without it (and without the setting) each process draws its own.
   */
  readonly secrets?: TokenSecretStore;
  /** ha_time; the system clock by default. */
  readonly clock?: Clock;
  /** The clock that floors new epochs (LeaseServiceDeps.epochClock); `clock` by default. */
  readonly epochClock?: Clock;
  readonly telemetry?: RuntimeTelemetry;
}

/**
 * The runtime of one process. `parts.members` is the configured membership store; without one
 * (tests of the lease routes) every member route answers 503 and nothing is kept.
 * `telemetry.meter` turns on the service's metrics (heartbeat and release outcomes, member
 * transitions, sweeps, store call durations); without it nothing is measured.
 */
export function createRuntime(config: RuntimeConfig, parts: RuntimeParts): Runtime {
  const { leases: leaseStore, clock = systemClock, epochClock, members: memberStoreGiven = noMemberStore(), telemetry = {}, secrets } = parts;
  // One set of keys for both kinds of token. Without HA_LEASE_SECRET the store's secret,
  // asked for now: until it answers this process seals with a key of its own, which it keeps
  // accepting after (a token of it fails elsewhere, as before).
  const tokenKeys = new TokenKeys(config.leaseSecret);
  if (secrets !== undefined) void tokenKeys.loadFrom(secrets, { timeoutMs: config.storeTimeoutMs });
  // Watch for stalls from start-up on, so that a freeze before the first request is seen too.
  processStallMonitor.start();
  const metrics = telemetry.meter === undefined ? undefined : createServiceMetrics(telemetry.meter);
  // One gate for the process: leases and members share the store, so they share its bound.
  // A shed caller is told to come back after about one I. It also sheds polls and
  // acquisitions while this process is saturated (processLoad).
  const admission =
    config.admission === undefined
      ? undefined
      : new AdmissionGate(config.admission, Math.max(1, Math.ceil(config.timing.intervalMs / 1000)), telemetry.load ?? processLoad(config.admission), metrics?.shed);
  const store = metrics === undefined ? leaseStore : meteredLeaseStore(leaseStore, metrics.storeDuration);
  const memberStore = metrics === undefined ? memberStoreGiven : meteredMemberStore(memberStoreGiven, metrics.storeDuration);
  const service = new LeaseService({
    ...(admission === undefined ? {} : { admission }),
    store,
    metrics: metrics?.lease,
    clock,
    ...(epochClock === undefined ? {} : { epochClock }),
    timing: config.timing,
    tokens: new LeaseTokenSigner(tokenKeys),
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
    tokens: new MemberTokenSigner(tokenKeys),
    storeTimeoutMs: config.storeTimeoutMs,
    metrics: metrics?.members,
  });
  const sweeper = new MemberSweeper({
    store: memberStore,
    clock,
    rules: membership,
    storeTimeoutMs: config.storeTimeoutMs,
    metrics: metrics?.members,
  });
  const standbySweeper = new StandbySweeper({ store, clock, timing: config.timing, storeTimeoutMs: config.storeTimeoutMs });
  return {
    service,
    members,
    sweeper,
    standbySweeper,
    membership,
    tokenKeys,
    ...(telemetry.metricsText === undefined ? {} : { metricsText: telemetry.metricsText }),
    ...(telemetry.failure === undefined ? {} : { telemetryFailure: telemetry.failure }),
  };
}

/**
 * This process's load as the gate reads it: busy time from processLoopLoad (100 ms samples)
 * and delay from processLoopLag (20 ms samples), each started only when its rule is on.
 */
function processLoad(limits: AdmissionLimits): ProcessLoad {
  const load = limits.shedBusyFraction === undefined ? undefined : processLoopLoad.start();
  const lag = limits.shedDelayMs === undefined ? undefined : processLoopLag.start();
  return { busyFraction: () => load?.busyFraction(), delayMs: () => lag?.delayMs() };
}

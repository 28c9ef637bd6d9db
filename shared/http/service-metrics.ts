import type { Attributes, Histogram, Meter } from "@opentelemetry/api";
import type { HeartbeatOutcome, LeaseMetrics, ReleaseOutcome } from "../lease/lease-metrics.js";
import type { MemberMetrics, MemberTransition, SweepResult } from "../members/member-metrics.js";
import type { ShedReason } from "../service/admission.js";
import { ATTRIBUTE, METRIC, STORE_DURATION_BUCKETS_S } from "./metric-names.js";

/** The instruments of one process, made once from its Meter. */
export interface ServiceMetrics {
  readonly lease: LeaseMetrics;
  readonly members: MemberMetrics;
  /** Store call durations (seconds), by store, system, operation and result: see metered-stores.ts. */
  readonly storeDuration: Histogram;
  /** Requests the admission gate refused (503 Overloaded), by reason. */
  readonly shed: (reason: ShedReason) => void;
}

/**
 * Builds the service's instruments on `meter`. The attribute sets are made once per value
 * and reused, so counting an answer allocates nothing: the hot path pays a counter add.
 */
export function createServiceMetrics(meter: Meter): ServiceMetrics {
  const heartbeats = meter.createCounter(METRIC.heartbeats, {
    description: "UpdateHeartBeat answers, by outcome (renewed, acquired, taken-over, rejected, conflict, revoked, unavailable).",
    unit: "{heartbeat}",
  });
  const releases = meter.createCounter(METRIC.releases, {
    description: "Release (DELETE) answers, by outcome (released, revoked, held, conflict, unavailable).",
    unit: "{release}",
  });
  const preemptions = meter.createCounter(METRIC.preemptions, {
    description: "Preemptions asked of a role's holder by a standby of higher priority (a planned handover with reason preempt), by role.",
    unit: "{preemption}",
  });
  const byUtype = attributeSets(ATTRIBUTE.utype);
  const transitions = meter.createCounter(METRIC.memberTransitions, {
    description: "Stored membership transitions: joined, rejoined, left, removed (by the sweeper).",
    unit: "{transition}",
  });
  const sweeps = meter.createCounter(METRIC.sweeps, { description: "Membership sweeps, by result (completed, failed).", unit: "{sweep}" });
  const sweepDuration = meter.createHistogram(METRIC.sweepDuration, {
    description: "Duration of membership sweeps.",
    unit: "s",
    advice: { explicitBucketBoundaries: STORE_DURATION_BUCKETS_S },
  });
  const storeDuration = meter.createHistogram(METRIC.storeDuration, {
    description: "Duration of lease and membership store calls.",
    unit: "s",
    advice: { explicitBucketBoundaries: STORE_DURATION_BUCKETS_S },
  });
  const shed = meter.createCounter(METRIC.shed, {
    description: "Requests refused before the store with 503 Overloaded, by reason (queue: too many waiting for the store; busy: the process running its own work past HA_SHED_BUSY_PERCENT; delay: requests delayed past HA_SHED_DELAY_MS).",
    unit: "{request}",
  });
  const byShedReason = attributeSets(ATTRIBUTE.shedReason);
  const byOutcome = attributeSets(ATTRIBUTE.outcome);
  const byTransition = attributeSets(ATTRIBUTE.transition);
  const bySweepResult = attributeSets(ATTRIBUTE.sweepResult);
  return {
    lease: {
      heartbeat: (outcome: HeartbeatOutcome) => heartbeats.add(1, byOutcome(outcome)),
      release: (outcome: ReleaseOutcome) => releases.add(1, byOutcome(outcome)),
      preemption: (utype: string) => preemptions.add(1, byUtype(utype)),
    },
    members: {
      transition: (transition: MemberTransition, count = 1) => transitions.add(count, byTransition(transition)),
      sweep: (result: SweepResult, durationMs: number) => {
        sweeps.add(1, bySweepResult(result));
        sweepDuration.record(durationMs / 1000, bySweepResult(result));
      },
    },
    storeDuration,
    shed: (reason: ShedReason) => shed.add(1, byShedReason(reason)),
  };
}

/** One frozen attribute set per value of `key`, made on first use. */
function attributeSets(key: string): (value: string) => Attributes {
  const made = new Map<string, Attributes>();
  return (value) => {
    let set = made.get(value);
    if (set === undefined) {
      set = Object.freeze({ [key]: value });
      made.set(value, set);
    }
    return set;
  };
}

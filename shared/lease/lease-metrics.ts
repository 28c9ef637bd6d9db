/**
 * What the lease service reports as it answers, for metrics (shared/http/service-metrics.ts
 * turns it into OpenTelemetry instruments). The domain knows only this port; the default
 * reports nothing, so a service built without a meter pays one empty call per answer.
 */

/**
 * How a heartbeat ended. `renewed`: the caller's own term goes on (fast or slow path, or
 * its own duplicate won the race); `acquired`: a first term on a role never held;
 * `taken-over`: a new term on a role whose last holder released or expired; `rejected`:
 * another live primary holds it (409 LeaseHeld); `conflict`: another write won (409
 * Conflict); `revoked`: the caller's term has ended (409 LeaseRevoked); `unavailable`:
 * the store failed (503).
 */
export type HeartbeatOutcome = "renewed" | "acquired" | "taken-over" | "rejected" | "conflict" | "revoked" | "unavailable";

/** How a release (DELETE) ended: the answer's outcome, or `unavailable` when the store failed. */
export type ReleaseOutcome = "released" | "revoked" | "held" | "conflict" | "forbidden" | "unavailable";

export interface LeaseMetrics {
  heartbeat(outcome: HeartbeatOutcome): void;
  release(outcome: ReleaseOutcome): void;
  /**
   * A standby of higher priority asked the holder of `utype` to hand the role over to it
   * (docs/protocol.md#priorities-and-preemption): counted once per handover written.
   */
  preemption?(utype: string): void;
}

export const noLeaseMetrics: LeaseMetrics = {
  heartbeat: () => undefined,
  release: () => undefined,
  preemption: () => undefined,
};

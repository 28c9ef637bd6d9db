import type { MemberState } from "../contract/members.js";
import type { MemberRow, ServiceGap, SweepMarker } from "./member.js";

/** The durations states are judged by, and when the sweeper's marker counts as stale. */
export interface AgeRules {
  /** T: older than this, a member is unreachable. */
  readonly timeoutMs: number;
  /** ttl: older than this, a member is leaving. */
  readonly ttlMs: number;
  /**
   * T + the sweep period: a marker older than this means the sweeper is not running (the
   * functions or the store are down), and the time since it last swept counts as a gap.
   */
  readonly staleAfterMs: number;
}

/**
 * The gaps in the service's own operation that ages must not count, as of `haTime`: the
 * one the sweeper last recorded, and, when the marker is stale, the gap in progress since
 * it last swept. No marker (a group the sweeper has not seen yet) means no gap.
 *
 * `readFrom` is when the read that returned the marker began (default `haTime`): the marker
 * is stale only if it was so then. A marker read during a slow query may have been
 * replaced by a sweep before the query ended; judged stale at `haTime` instead, it would
 * invent a gap over time the sweeper was running, and reset a dead member's age.
 */
export function serviceGaps(marker: SweepMarker | undefined, haTime: number, rules: AgeRules, readFrom = haTime): ServiceGap[] {
  if (marker === undefined) return [];
  const gaps = marker.gap === null ? [] : [marker.gap];
  if (readFrom - marker.sweptAt > rules.staleAfterMs) gaps.push({ startedAt: marker.sweptAt, endedAt: haTime });
  return gaps;
}

/**
 * How long ago `since` was, counting only time during which the service was operating:
 * (haTime − since) less its overlap with every gap. A member alive when the service
 * stopped therefore restarts its age when the service resumes (no mass `unreachable`),
 * and one already failing keeps the age it had (no resurrection). Never negative: a row
 * written by an instance whose clock is ahead is 0 ms old, not −ε.
 */
export function operatingAgeMs(since: number, haTime: number, gaps: readonly ServiceGap[]): number {
  let age = haTime - since;
  for (const gap of gaps) {
    const overlap = Math.min(haTime, gap.endedAt) - Math.max(since, gap.startedAt);
    if (overlap > 0) age -= overlap;
  }
  return Math.max(0, age);
}

/**
 * Seed 001's state machine, derived on read:
 *   said goodbye                    → leaving
 *   age > ttl                       → leaving
 *   T < age ≤ ttl                   → unreachable (back to active on its next heartbeat)
 *   age ≤ T, ≥ 2 heartbeats         → active
 *   age ≤ T, 1 heartbeat            → joining
 */
export function memberState(row: Pick<MemberRow, "renewedAt" | "heartbeats" | "leftAt">, ageMs: number, rules: AgeRules): MemberState {
  if (row.leftAt !== null) return "leaving";
  if (ageMs > rules.ttlMs) return "leaving";
  if (ageMs > rules.timeoutMs) return "unreachable";
  return row.heartbeats >= 2 ? "active" : "joining";
}

/** A row's age and state as seen at `haTime`, with the group's gaps. */
export function judgeRow(
  row: Pick<MemberRow, "renewedAt" | "heartbeats" | "leftAt">,
  haTime: number,
  gaps: readonly ServiceGap[],
  rules: AgeRules,
): { ageMs: number; state: MemberState } {
  const ageMs = operatingAgeMs(row.renewedAt, haTime, gaps);
  return { ageMs, state: memberState(row, ageMs, rules) };
}

import type { MembersTiming } from "../contract/members.js";
import type { AgeRules } from "./member-age.js";

/** Membership's durations and bounds, from server configuration (docs/membership.md). */
export interface MembershipRules extends MembersTiming {
  /** How long a leaving row is kept before the sweeper deletes it. */
  readonly retentionMs: number;
  /** The most rows the sweeper lets a group keep. */
  readonly maxPerGroup: number;
  /** How often the sweeper runs. */
  readonly sweepPeriodMs: number;
}

/** A marker not refreshed within T + one sweep period means the sweeper is not running. */
export function ageRulesOf(rules: Pick<MembershipRules, "timeoutMs" | "ttlMs" | "sweepPeriodMs">): AgeRules {
  return { timeoutMs: rules.timeoutMs, ttlMs: rules.ttlMs, staleAfterMs: rules.timeoutMs + rules.sweepPeriodMs };
}

/** The defaults from I and T alone: ttl = 3·T, retention = ttl, 1000 rows, a sweep every 5 s. */
export function defaultMembershipRules(timing: { intervalMs: number; timeoutMs: number }): MembershipRules {
  const ttlMs = 3 * timing.timeoutMs;
  return { ...timing, ttlMs, retentionMs: ttlMs, maxPerGroup: 1000, sweepPeriodMs: 5000 };
}

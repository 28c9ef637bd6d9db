import type { LeaseTiming } from "../contract/timing.js";
import { ConfigError } from "./config-error.js";
import { readInteger, readString, type Env } from "./env.js";

/** Membership's settings (docs/membership.md#timings, docs/configuration.md). */
export interface MembersConfig {
  /** ttl (HA_MEMBER_TTL_MS): older than this, a member is leaving. Default 3·T. */
  readonly ttlMs: number;
  /** How long a leaving row is kept before the sweeper deletes it (HA_MEMBER_RETENTION_MS). Default ttl. */
  readonly retentionMs: number;
  /** The most rows the sweeper lets a group keep (HA_MEMBERS_MAX_PER_GROUP). Default 1000. */
  readonly maxPerGroup: number;
  /** The sweeper's timer schedule, an NCRONTAB expression (HA_SWEEP_SCHEDULE). Default every 5 s. */
  readonly sweepSchedule: string;
  /** The period that schedule fires at: the local host's timer, and the staleness of the sweep marker. */
  readonly sweepPeriodMs: number;
}

export const DEFAULT_SWEEP_SCHEDULE = "*/5 * * * * *";

/** Whole seconds (or minutes) that divide a minute (an hour): the periods NCRONTAB repeats evenly. */
const EVEN_STEPS = new Set([1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30]);

export function loadMembersConfig(env: Env, timing: LeaseTiming): MembersConfig {
  const limits = { min: 1, max: 86_400_000 };
  const ttlMs = readInteger(env, "HA_MEMBER_TTL_MS", 3 * timing.timeoutMs, { ...limits, example: 3 * timing.timeoutMs });
  if (ttlMs <= timing.timeoutMs) {
    throw new ConfigError(
      "HA_MEMBER_TTL_MS",
      `HA_MEMBER_TTL_MS (${ttlMs}) must be greater than HA_TIMEOUT_MS (${timing.timeoutMs}): a member is unreachable between T and ttl. Raise it (default 3 × T = ${3 * timing.timeoutMs}) or unset it.`,
    );
  }
  const retentionMs = readInteger(env, "HA_MEMBER_RETENTION_MS", ttlMs, { min: 0, max: limits.max, example: ttlMs });
  const maxPerGroup = readInteger(env, "HA_MEMBERS_MAX_PER_GROUP", 1000, { min: 1, max: 100_000, example: 1000 });
  const sweepSchedule = readString(env, "HA_SWEEP_SCHEDULE") ?? DEFAULT_SWEEP_SCHEDULE;
  return { ttlMs, retentionMs, maxPerGroup, sweepSchedule, sweepPeriodMs: sweepPeriodOf(sweepSchedule) };
}

/**
 * The period of an NCRONTAB schedule (six fields, seconds first), for the forms that repeat
 * evenly: `*\/N * * * * *` (every N seconds), `0 *\/N * * * *` (every N minutes), `* * * * * *`
 * (every second), `0 * * * * *` (every minute). The service must know the period: a sweep
 * marker older than T + the period means the sweeper is not running.
 */
export function sweepPeriodOf(schedule: string): number {
  const fields = schedule.trim().split(/\s+/);
  const rest = fields.slice(2).every((field) => field === "*");
  const [seconds, minutes] = fields;
  if (fields.length === 6 && rest) {
    if (minutes === "*") {
      if (seconds === "*") return 1000;
      const step = /^\*\/([0-9]+)$/.exec(seconds ?? "")?.[1];
      if (step !== undefined && EVEN_STEPS.has(Number(step))) return Number(step) * 1000;
    }
    if (seconds === "0") {
      if (minutes === "*") return 60_000;
      const step = /^\*\/([0-9]+)$/.exec(minutes ?? "")?.[1];
      if (step !== undefined && EVEN_STEPS.has(Number(step))) return Number(step) * 60_000;
    }
  }
  throw new ConfigError(
    "HA_SWEEP_SCHEDULE",
    `HA_SWEEP_SCHEDULE must be a six-field NCRONTAB schedule that repeats evenly: "*/N * * * * *" (every N seconds) or "0 */N * * * *" (every N minutes), N one of ${[...EVEN_STEPS].join(", ")} (got "${schedule}"). Unset it for every 5 s.`,
  );
}

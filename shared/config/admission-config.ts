import { ConfigError } from "./config-error.js";
import { readInteger, readString, type Env } from "./env.js";
import type { LeaseTiming } from "../contract/timing.js";

/** Load shedding's bounds (docs/protocol.md, "Overload"); undefined when switched off. */
export interface AdmissionConfig {
  /** HA_MAX_IN_FLIGHT: requests at the store at once, per process. */
  readonly maxInFlight: number;
  /** HA_MAX_QUEUED: requests waiting for one of those slots; polls and acquisitions may fill half. */
  readonly maxQueued: number;
  /** HA_SHED_BUSY_PERCENT / 100: past this share of its time running its own work, a process refuses polls and acquisitions at once; undefined when 0 (off). */
  readonly shedBusyFraction: number | undefined;
  /** HA_SHED_DELAY_MS: past this delay of every request, a process refuses polls and acquisitions at once; undefined when 0 (off). */
  readonly shedDelayMs: number | undefined;
}

export const DEFAULT_MAX_IN_FLIGHT = 64;
export const DEFAULT_MAX_QUEUED = 256;
export const DEFAULT_SHED_BUSY_PERCENT = 90;
/** The default delay budget's bounds: I / 10, within these. */
export const DEFAULT_SHED_DELAY_MIN_MS = 50;
export const DEFAULT_SHED_DELAY_MAX_MS = 100;
/** Below this a delay is the scheduler's and the timers' noise, not load. */
export const MIN_SHED_DELAY_MS = 10;

/**
 * HA_SHED_DELAY_MS's default for an interval I: I / 10 within 50–100 ms (100 ms at the
 * default I = 1 s); off (undefined) when that is not under I. The busy rule
 * (HA_SHED_BUSY_PERCENT, the process's own CPU time) is what catches a process saturated by
 * its own work; this one is for a process starved of CPU by others, whose lag a scheduler
 * inflates too. Beside two CPU hogs at a moderate 120 requests/s, a 50 ms budget refused 38
 * requests the process had time for and 100 ms none, while past what the process was given
 * (320/s) 100 ms still shed (bench/shed-hog.mjs, docs/benchmarks.md).
 */
export function defaultShedDelayMs(intervalMs: number): number | undefined {
  const budget = Math.min(DEFAULT_SHED_DELAY_MAX_MS, Math.max(DEFAULT_SHED_DELAY_MIN_MS, Math.round(intervalMs / 10)));
  return budget < intervalMs ? budget : undefined;
}

/** HA_MAX_IN_FLIGHT=0 switches shedding off: every request goes to the store at once. */
export function loadAdmissionConfig(env: Env, timing: LeaseTiming): AdmissionConfig | undefined {
  const maxInFlight = readInteger(env, "HA_MAX_IN_FLIGHT", DEFAULT_MAX_IN_FLIGHT, { min: 0, max: 100_000, example: DEFAULT_MAX_IN_FLIGHT });
  const maxQueued = readInteger(env, "HA_MAX_QUEUED", DEFAULT_MAX_QUEUED, { min: 0, max: 1_000_000, example: DEFAULT_MAX_QUEUED });
  const shedBusyPercent = readInteger(env, "HA_SHED_BUSY_PERCENT", DEFAULT_SHED_BUSY_PERCENT, { min: 0, max: 100, example: DEFAULT_SHED_BUSY_PERCENT });
  const shedDelayMs = loadShedDelay(env, timing.intervalMs);
  if (maxInFlight === 0) return undefined;
  if (maxQueued < 2) {
    throw new ConfigError(
      "HA_MAX_QUEUED",
      `HA_MAX_QUEUED must be at least 2 (got ${maxQueued}): polls and acquisitions may wait in half of the queue, renewals in all of it. Set it to, for example, ${DEFAULT_MAX_QUEUED}, or set HA_MAX_IN_FLIGHT=0 to switch shedding off.`,
    );
  }
  return { maxInFlight, maxQueued, shedBusyFraction: shedBusyPercent === 0 ? undefined : shedBusyPercent / 100, shedDelayMs };
}

function loadShedDelay(env: Env, intervalMs: number): number | undefined {
  const fallback = defaultShedDelayMs(intervalMs);
  const example = fallback ?? 0;
  const given = readString(env, "HA_SHED_DELAY_MS");
  if (given === undefined) return fallback;
  const delay = readInteger(env, "HA_SHED_DELAY_MS", example, { min: 0, max: 3_600_000, example });
  if (delay === 0) return undefined;
  if (delay < MIN_SHED_DELAY_MS || delay >= intervalMs) {
    throw new ConfigError(
      "HA_SHED_DELAY_MS",
      `HA_SHED_DELAY_MS must be 0 (off) or from ${MIN_SHED_DELAY_MS} ms (below that is the scheduler's noise) to less than HA_INTERVAL_MS, ${intervalMs} ms (a request delayed that long already costs a renewal its round) (got ${delay}). Set it to, for example, ${example}, or unset it for the default.`,
    );
  }
  return delay;
}

import { ConfigError } from "./config-error.js";
import { readInteger, type Env } from "./env.js";

/** Load shedding's bounds (docs/protocol.md, "Overload"); undefined when switched off. */
export interface AdmissionConfig {
  /** HA_MAX_IN_FLIGHT: requests at the store at once, per process. */
  readonly maxInFlight: number;
  /** HA_MAX_QUEUED: requests waiting for one of those slots; polls and acquisitions may fill half. */
  readonly maxQueued: number;
  /** HA_SHED_BUSY_PERCENT / 100: past this share of its time busy, a process refuses polls and acquisitions at once; undefined when 0 (off). */
  readonly shedBusyFraction: number | undefined;
}

export const DEFAULT_MAX_IN_FLIGHT = 64;
export const DEFAULT_MAX_QUEUED = 256;
export const DEFAULT_SHED_BUSY_PERCENT = 90;

/** HA_MAX_IN_FLIGHT=0 switches shedding off: every request goes to the store at once. */
export function loadAdmissionConfig(env: Env): AdmissionConfig | undefined {
  const maxInFlight = readInteger(env, "HA_MAX_IN_FLIGHT", DEFAULT_MAX_IN_FLIGHT, { min: 0, max: 100_000, example: DEFAULT_MAX_IN_FLIGHT });
  const maxQueued = readInteger(env, "HA_MAX_QUEUED", DEFAULT_MAX_QUEUED, { min: 0, max: 1_000_000, example: DEFAULT_MAX_QUEUED });
  const shedBusyPercent = readInteger(env, "HA_SHED_BUSY_PERCENT", DEFAULT_SHED_BUSY_PERCENT, { min: 0, max: 100, example: DEFAULT_SHED_BUSY_PERCENT });
  if (maxInFlight === 0) return undefined;
  if (maxQueued < 2) {
    throw new ConfigError(
      "HA_MAX_QUEUED",
      `HA_MAX_QUEUED must be at least 2 (got ${maxQueued}): polls and acquisitions may wait in half of the queue, renewals in all of it. Set it to, for example, ${DEFAULT_MAX_QUEUED}, or set HA_MAX_IN_FLIGHT=0 to switch shedding off.`,
    );
  }
  return { maxInFlight, maxQueued, shedBusyFraction: shedBusyPercent === 0 ? undefined : shedBusyPercent / 100 };
}

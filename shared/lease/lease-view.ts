import { isLive, type LeaseState } from "./lease.js";
import type { LeaseTiming } from "../config/server-config.js";

/** The live primary of a utype, as the REST contract shows it (SPEC §4). */
export interface PrimaryView {
  readonly uuid: string;
  readonly address: string | null;
  readonly epoch: number;
  /** ISO-8601 UTC. */
  readonly renewedAt: string;
  readonly expiresInMs: number;
}

export interface LeaseView {
  readonly utype: string;
  readonly primary: PrimaryView | null;
  readonly intervalMs: number;
  readonly timeoutMs: number;
}

/** Shows `entry` as seen at `haTime`: its holder when live, otherwise no primary. */
export function toLeaseView(
  utype: string,
  entry: LeaseState | undefined,
  haTime: number,
  timing: LeaseTiming,
): LeaseView {
  const primary =
    entry !== undefined && isLive(entry, haTime, timing.timeoutMs)
      ? {
          uuid: entry.uuid,
          address: entry.address,
          epoch: entry.epoch,
          renewedAt: new Date(entry.renewedAt).toISOString(),
          expiresInMs: entry.renewedAt + timing.timeoutMs - haTime,
        }
      : null;
  return { utype, primary, intervalMs: timing.intervalMs, timeoutMs: timing.timeoutMs };
}

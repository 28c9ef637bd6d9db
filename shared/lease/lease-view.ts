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
  /**
   * Always present. True once the lease was revoked (DELETE without its token): the holder
   * can no longer renew it, and nobody takes over before it expires.
   */
  readonly revoked: boolean;
}

export interface LeaseView {
  readonly utype: string;
  readonly primary: PrimaryView | null;
  readonly intervalMs: number;
  readonly timeoutMs: number;
}

/** What a view needs of an entry: the fast path knows no more than this. */
export type ViewedLease = Pick<LeaseState, "uuid" | "address" | "epoch" | "renewedAt" | "revoked">;

/** Shows `entry` as seen at `haTime`: its holder when live, otherwise no primary. */
export function toLeaseView(
  utype: string,
  entry: ViewedLease | undefined,
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
          revoked: entry.revoked,
        }
      : null;
  return { utype, primary, intervalMs: timing.intervalMs, timeoutMs: timing.timeoutMs };
}

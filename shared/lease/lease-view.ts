import type { LeaseView } from "../contract/lease-view.js";
import type { LeaseTiming } from "../contract/timing.js";
import { isLive, type LeaseState } from "./lease.js";

/** What a view needs of an entry: the fast path knows no more than this. */
export type ViewedLease = Pick<LeaseState, "uuid" | "address" | "epoch" | "renewedAt" | "revoked">;

/**
 * Shows `entry` as seen at `haTime`: its holder when live, otherwise no primary; and the
 * entry's epoch either way (0 when there is no entry), so that a caller can learn the
 * fencing token of a role nobody holds now.
 */
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
  return { utype, primary, epoch: entry?.epoch ?? 0, intervalMs: timing.intervalMs, timeoutMs: timing.timeoutMs };
}

import type { LeaseView } from "../contract/lease-view.js";
import type { LeaseTiming } from "../contract/timing.js";
import type { HandoverView } from "../contract/lease-view.js";
import { isLive, pendingHandover, reservedFor, withPriority, type LeaseState } from "./lease.js";

/**
 * What a view needs of an entry: the fast path knows no more than this (and never renews
 * while a handover is pending: see LeaseService).
 */
export type ViewedLease = Pick<LeaseState, "uuid" | "address" | "epoch" | "renewedAt" | "revoked" | "handover" | "priority">;

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
      ? withPriority(
          {
            uuid: entry.uuid,
            address: entry.address,
            epoch: entry.epoch,
            renewedAt: new Date(entry.renewedAt).toISOString(),
            expiresInMs: entry.renewedAt + timing.timeoutMs - haTime,
            revoked: entry.revoked,
          },
          entry.priority,
        )
      : null;
  const handover = entry === undefined ? null : toHandoverView(entry, haTime, timing.timeoutMs);
  return { utype, primary, epoch: entry?.epoch ?? 0, intervalMs: timing.intervalMs, timeoutMs: timing.timeoutMs, handover };
}

/** The entry's handover as it stands at `haTime`: pending on a live holder, reserved after its release, else null. */
function toHandoverView(entry: ViewedLease, haTime: number, timeoutMs: number): HandoverView | null {
  const iso = (ms: number): string => new Date(ms).toISOString();
  const pending = pendingHandover(entry, haTime, timeoutMs);
  const reason = entry.handover?.reason === "preempt" ? { reason: "preempt" as const } : {};
  if (pending !== undefined) return { to: pending.to, requestedAt: iso(pending.requestedAt), phase: "pending", until: iso(pending.requestedAt + timeoutMs), ...reason };
  const reserved = reservedFor(entry, haTime, timeoutMs);
  if (reserved !== undefined && entry.handover !== undefined) {
    return { to: reserved, requestedAt: iso(entry.handover.requestedAt), phase: "reserved", until: iso(entry.renewedAt + timeoutMs), ...reason };
  }
  return null;
}

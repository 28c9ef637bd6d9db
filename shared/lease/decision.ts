import { isLive, type LeaseState } from "./lease.js";

/** What a participant asks of the lease of one utype. */
export type LeaseRequest =
  | {
      readonly op: "heartbeat";
      readonly utype: string;
      readonly uuid: string;
      readonly address: string | null;
    }
  | { readonly op: "release"; readonly utype: string; readonly uuid: string };

/**
 * What the store must do. `create` writes only if no entry exists; every other write is
 * conditional on the ETag of the entry that the decision was made on.
 */
export type LeaseAction =
  | { readonly kind: "create"; readonly next: LeaseState }
  | { readonly kind: "renew"; readonly next: LeaseState }
  | { readonly kind: "takeOver"; readonly next: LeaseState }
  | { readonly kind: "release"; readonly next: LeaseState }
  /** Another live holder has the lease; nothing is written. */
  | { readonly kind: "reject"; readonly holder: LeaseState }
  /** A release with nothing to release (no entry, already released, or expired); nothing is written. */
  | { readonly kind: "none" };

/**
 * The whole of the lease protocol's server side (SPEC §2) as a pure function: no I/O, no
 * clock. `haTime` is the function host's clock when the entry was read; `timeoutMs` is T.
 *
 * UpdateHeartBeat:
 *   1. no entry                                   → create with epoch 1
 *   2. entry.uuid == uuid                         → renew, epoch unchanged
 *   3. entry released, or older than T            → take over with epoch + 1
 *   4. otherwise                                  → reject: another live holder
 * Release:
 *   1. entry.uuid == uuid                         → clear the holder, keep the epoch
 *   2. another live holder                        → reject
 *   3. otherwise                                  → nothing to do
 */
export function decide(
  entry: LeaseState | undefined,
  request: LeaseRequest,
  haTime: number,
  timeoutMs: number,
): LeaseAction {
  return request.op === "heartbeat"
    ? decideHeartbeat(entry, request, haTime, timeoutMs)
    : decideRelease(entry, request.uuid, haTime, timeoutMs);
}

function decideHeartbeat(
  entry: LeaseState | undefined,
  { utype, uuid, address }: { utype: string; uuid: string; address: string | null },
  haTime: number,
  timeoutMs: number,
): LeaseAction {
  const base = { utype, uuid, address, renewedAt: haTime };
  if (entry === undefined) return { kind: "create", next: { ...base, epoch: 1 } };
  if (entry.uuid === uuid) {
    return { kind: "renew", next: { ...base, epoch: entry.epoch } };
  }
  if (!isLive(entry, haTime, timeoutMs)) {
    return { kind: "takeOver", next: { ...base, epoch: entry.epoch + 1 } };
  }
  return { kind: "reject", holder: entry };
}

function decideRelease(
  entry: LeaseState | undefined,
  uuid: string,
  haTime: number,
  timeoutMs: number,
): LeaseAction {
  if (entry === undefined || entry.uuid === "") return { kind: "none" };
  if (entry.uuid === uuid) {
    return { kind: "release", next: { ...entry, uuid: "", address: null, renewedAt: haTime } };
  }
  if (isLive(entry, haTime, timeoutMs)) return { kind: "reject", holder: entry };
  return { kind: "none" };
}

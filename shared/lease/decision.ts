import { isLive, withEndedUuid, type LeaseState } from "./lease.js";

/** What a participant asks of the lease of one utype. */
export type LeaseRequest =
  | {
      readonly op: "heartbeat";
      readonly utype: string;
      readonly uuid: string;
      /** A string sets the address, null clears it, undefined (omitted) keeps the stored one. */
      readonly address: string | null | undefined;
    }
  | {
      readonly op: "release";
      readonly utype: string;
      readonly uuid: string;
      /**
       * The epoch named by a lease token that verified for this utype and uuid, if one was
       * presented. With the entry's uuid it is the holder's proof of consent.
       */
      readonly provenEpoch: number | undefined;
    };

/**
 * Why a heartbeat is refused. `held`: another live uuid holds the lease (409 LeaseHeld).
 * `revoked`: the caller's lease was revoked; `ended`: the caller's term ended (released,
 * retired or taken over). Both are 409 LeaseRevoked: the caller must use a new uuid.
 */
export type RejectReason = "held" | "revoked" | "ended";

/**
 * What the store must do. `create` writes only if no entry exists; every other write is
 * conditional on the ETag of the entry that the decision was made on.
 */
export type LeaseAction =
  | { readonly kind: "create"; readonly next: LeaseState }
  | { readonly kind: "renew"; readonly next: LeaseState }
  | { readonly kind: "take-over"; readonly next: LeaseState }
  /** The holder is cleared (proven release, or an expired holder's own DELETE); the epoch is kept. */
  | { readonly kind: "release"; readonly next: LeaseState }
  /** The live holder is marked revoked; nothing else changes. */
  | { readonly kind: "revoke"; readonly next: LeaseState }
  /** A uuid that holds nothing is added to the ended list; nothing else changes. */
  | { readonly kind: "retire"; readonly next: LeaseState }
  /** The heartbeat is refused; nothing is written. */
  | { readonly kind: "reject"; readonly reason: RejectReason; readonly holder: LeaseState }
  /** Nothing to write (a release already done); the entry is answered as it is. */
  | { readonly kind: "none" };

/**
 * The whole of the lease protocol's server side (docs/protocol.md#the-rule-server-side) as a pure function: no I/O, no
 * clock. `haTime` is the function host's clock when the entry was read; `timeoutMs` is T.
 *
 * UpdateHeartBeat:
 *   1. no entry                                   → create with epoch 1
 *   2. the caller's uuid ended here               → reject (ended)
 *   3. entry.uuid == uuid, revoked                → reject (revoked)
 *   4. entry.uuid == uuid                         → renew, epoch unchanged
 *   5. entry released, or older than T            → take over with epoch + 1; the old holder ends
 *   6. otherwise                                  → reject (held)
 * Release (DELETE ?uuid=…[&lease=…]):
 *   1. entry.uuid == uuid, proven or expired      → clear the holder, keep the epoch; it ends
 *   2. entry.uuid == uuid, live                   → revoke (once)
 *   3. any other uuid not yet ended               → retire it (also with no entry yet)
 *   4. otherwise                                  → nothing to do
 * The ended list changes only with a term (take over, release, retire), never on a renewal.
 */
export function decide(
  entry: LeaseState | undefined,
  request: LeaseRequest,
  haTime: number,
  timeoutMs: number,
): LeaseAction {
  return request.op === "heartbeat"
    ? decideHeartbeat(entry, request, haTime, timeoutMs)
    : decideRelease(entry, request, haTime, timeoutMs);
}

function decideHeartbeat(
  entry: LeaseState | undefined,
  { utype, uuid, address }: { utype: string; uuid: string; address: string | null | undefined },
  haTime: number,
  timeoutMs: number,
): LeaseAction {
  if (entry === undefined) {
    return { kind: "create", next: { utype, uuid, address: address ?? null, epoch: 1, renewedAt: haTime, startedAt: haTime, revoked: false, endedUuids: [] } };
  }
  if (entry.endedUuids.includes(uuid)) return { kind: "reject", reason: "ended", holder: entry };
  if (entry.uuid === uuid) {
    if (entry.revoked) return { kind: "reject", reason: "revoked", holder: entry };
    return { kind: "renew", next: { ...entry, address: address === undefined ? entry.address : address, renewedAt: haTime } };
  }
  if (!isLive(entry, haTime, timeoutMs)) {
    return {
      kind: "take-over",
      next: {
        utype,
        uuid,
        address: address ?? null,
        epoch: entry.epoch + 1,
        renewedAt: haTime,
        startedAt: haTime,
        revoked: false,
        endedUuids: withEndedUuid(entry.endedUuids, entry.uuid),
      },
    };
  }
  return { kind: "reject", reason: "held", holder: entry };
}

function decideRelease(
  entry: LeaseState | undefined,
  { utype, uuid, provenEpoch }: { utype: string; uuid: string; provenEpoch: number | undefined },
  haTime: number,
  timeoutMs: number,
): LeaseAction {
  if (entry === undefined) {
    // Nothing to release, but the uuid is retired all the same, so that its acquire still
    // in flight cannot create a lease nobody is behind. Epoch 0: the first holder gets 1.
    return {
      kind: "retire",
      next: { utype, uuid: "", address: null, epoch: 0, renewedAt: haTime, revoked: false, endedUuids: [uuid] },
    };
  }
  if (entry.uuid === uuid) {
    // The holder consents (its token proves uuid and epoch), or its lease has expired and
    // nobody believes in it any more: clearing it is as safe as a takeover would be.
    if (provenEpoch === entry.epoch || !isLive(entry, haTime, timeoutMs)) {
      return {
        kind: "release",
        next: { ...entry, uuid: "", address: null, renewedAt: haTime, revoked: false, endedUuids: withEndedUuid(entry.endedUuids, uuid) },
      };
    }
    // No consent: the holder may still be working, so it must run out on its own.
    if (entry.revoked) return { kind: "none" };
    return { kind: "revoke", next: { ...entry, revoked: true } };
  }
  if (entry.endedUuids.includes(uuid)) return { kind: "none" };
  return { kind: "retire", next: { ...entry, endedUuids: withEndedUuid(entry.endedUuids, uuid) } };
}

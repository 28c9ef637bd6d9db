import { erasedTerm, nextEpoch } from "./epoch.js";
import { isLive, pendingHandover, priorityOf, reservedFor, withEndedUuid, withPriority, type LeaseHandover, type LeaseState } from "./lease.js";

/** What a participant asks of the lease of one utype. */
export type LeaseRequest =
  | {
      readonly op: "heartbeat";
      readonly utype: string;
      readonly uuid: string;
      /** A string sets the address, null clears it, undefined (omitted) keeps the stored one. */
      readonly address: string | null | undefined;
      /** The caller's priority; undefined: 0. */
      readonly priority?: number | undefined;
      /**
       * The epoch named by a lease token that verified for this utype and uuid, if one was
       * presented: the term the caller believes it holds.
       */
      readonly tokenEpoch?: number;
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
    }
  | {
      readonly op: "handover";
      readonly utype: string;
      /** The standby's uuid that should take over, or null for any. */
      readonly to: string | null;
    }
  | {
      /** A standby that stops cleanly withdraws (its standby row goes beside this decision). */
      readonly op: "withdraw";
      readonly utype: string;
      readonly uuid: string;
    };

/**
 * Why a heartbeat is refused. `held`: another live uuid holds the lease (409 LeaseHeld).
 * `revoked`: the caller's lease was revoked; `ended`: the caller's term ended (released,
 * retired or taken over). Both are 409 LeaseRevoked: the caller must use a new uuid.
 * `outranked`: the role is free, but a standby of higher priority was seen within T and the
 * role became free less than I ago (docs/protocol.md#priorities-and-preemption): answered as
 * `held` (409 LeaseHeld), nothing written.
 */
export type RejectReason = "held" | "revoked" | "ended" | "outranked";

/**
 * What the store must do. `create` writes only if no entry exists; every other write is
 * conditional on the ETag of the entry that the decision was made on.
 */
export type HeartbeatAction =
  | { readonly kind: "create"; readonly next: LeaseState }
  | { readonly kind: "renew"; readonly next: LeaseState }
  | { readonly kind: "take-over"; readonly next: LeaseState }
  /** The heartbeat is refused; nothing is written. `holder` undefined: there is no entry. */
  | { readonly kind: "reject"; readonly reason: RejectReason; readonly holder: LeaseState | undefined };

export type ReleaseAction =
  /** The holder is cleared (proven release, or an expired holder's own DELETE); the epoch is kept. */
  | { readonly kind: "release"; readonly next: LeaseState }
  /** The live holder is marked revoked; nothing else changes. */
  | { readonly kind: "revoke"; readonly next: LeaseState }
  /** A uuid that holds nothing is added to the ended list; nothing else changes. */
  | { readonly kind: "retire"; readonly next: LeaseState }
  /** Nothing to write (a release already done); the entry is answered as it is. */
  | { readonly kind: "none" };

export type HandoverAction =
  /** An operator's handover request is stored on the live holder's entry; nothing else changes. */
  | { readonly kind: "request-handover"; readonly next: LeaseState }
  /** A handover request is refused: nobody live and unrevoked holds the role, or `to` is the holder itself. */
  | { readonly kind: "refuse-handover"; readonly reason: "no-primary" | "to-holder" }
  /** The same request is pending already: nothing to write. */
  | { readonly kind: "none" };

export type WithdrawAction =
  /** A handover names the standby that withdraws: it is dropped, as on a retire; nothing else changes. */
  | { readonly kind: "drop-handover"; readonly next: LeaseState }
  /** Nothing on the entry names it: nothing to write. */
  | { readonly kind: "none" };

/** Every answer of the rule; each question has its own narrow part (decideHeartbeat, decideRelease, decideHandover, decideWithdraw). */
export type LeaseAction = HeartbeatAction | ReleaseAction | HandoverAction | WithdrawAction;

/**
 * The whole of the lease protocol's server side (docs/protocol.md#the-rule-server-side) as a pure function: no I/O, no
 * clock. `haTime` is the function host's clock when the entry was read; `timeoutMs` is T;
 * `epochFloor` the least epoch a new term may get (nextEpoch): ha_time, unless a test of the
 * counter alone gives less.
 *
 * UpdateHeartBeat (a new term's epoch is nextEpoch(stored, epochFloor): above the stored one and
 * never below the clock, so that no epoch repeats after the store forgets its last writes):
 *   0. the caller's token names a term the entry
 *      cannot have handed out (erasedTerm)        → reject (ended): a loss erased its term
 *   1. no entry                                   → create with epoch nextEpoch(0, epochFloor)
 *   2. the caller's uuid ended here               → reject (ended)
 *   3. entry.uuid == uuid, revoked                → reject (revoked)
 *   4. entry.uuid == uuid, handover older than T  → reject (revoked): it did not step down
 *   5. entry.uuid == uuid                         → renew, epoch unchanged (a handover stays)
 *   6. released and reserved for another uuid     → reject (held) until the release + T
 *   7. free (released, or older than T), a standby of higher priority seen within T, and
 *      less than I since the role became free     → reject (outranked), only when `ranking`
 *                                                   is given (the service reads the standbys
 *                                                   only when rankingMatters)
 *   8. entry released, or older than T            → take over with nextEpoch(epoch, epochFloor); the old holder ends
 *   9. otherwise                                  → reject (held)
 * Release (DELETE ?uuid=…[&lease=…]):
 *   1. entry.uuid == uuid, proven or expired      → clear the holder, keep the epoch; it ends.
 *                                                   Proven during a handover to X: reserved for X
 *   2. entry.uuid == uuid, live                   → revoke (once)
 *   3. any other uuid not yet ended               → retire it (also with no entry yet); a
 *                                                   reservation for it is dropped
 *   4. otherwise                                  → nothing to do
 * Handover (POST …/handover, `to` already resolved to a uuid or null):
 *   1. no live, unrevoked holder                  → refuse (no-primary)
 *   2. to == the holder                           → refuse (to-holder)
 *   3. the same request pending                   → nothing to do
 *   4. otherwise                                  → store {to, requestedAt} (the first request's time)
 * Withdraw (DELETE ?uuid=…&standby=true, a standby's clean stop):
 *   1. a handover (pending or reserved) names uuid → drop it: nobody waits for a standby that left
 *   2. otherwise                                  → nothing to do (only its standby row goes)
 * The ended list changes only with a term (take over, release, retire), never on a renewal
 * or a withdrawal: a withdrawn uuid held nothing, and the list's 8 places are for those that did.
 */
export function decide(
  entry: LeaseState | undefined,
  request: LeaseRequest,
  haTime: number,
  timeoutMs: number,
  epochFloor = haTime,
): LeaseAction {
  switch (request.op) {
    case "heartbeat":
      return decideHeartbeat(entry, request, haTime, timeoutMs, epochFloor);
    case "release":
      return decideRelease(entry, request, haTime, timeoutMs);
    case "handover":
      return decideHandover(entry, request.to, haTime, timeoutMs);
    case "withdraw":
      return decideWithdraw(entry, request.uuid);
  }
}

export function decideWithdraw(entry: LeaseState | undefined, uuid: string): WithdrawAction {
  if (entry?.handover === undefined || entry.handover.to !== uuid) return { kind: "none" };
  return { kind: "drop-handover", next: withoutHandover(entry) };
}

export function decideHandover(entry: LeaseState | undefined, to: string | null, haTime: number, timeoutMs: number): HandoverAction {
  if (entry === undefined || entry.revoked || !isLive(entry, haTime, timeoutMs)) return { kind: "refuse-handover", reason: "no-primary" };
  if (to === entry.uuid) return { kind: "refuse-handover", reason: "to-holder" };
  const pending = pendingHandover(entry, haTime, timeoutMs);
  if (pending !== undefined && pending.to === to) return { kind: "none" };
  const handover: LeaseHandover = { to, requestedAt: pending?.requestedAt ?? haTime };
  return { kind: "request-handover", next: { ...entry, handover } };
}

/** The entry without its handover (a new term, or a release that reserves nothing). */
function withoutHandover(entry: LeaseState): LeaseState {
  if (entry.handover === undefined) return entry;
  const rest: { -readonly [K in keyof LeaseState]?: LeaseState[K] } = { ...entry };
  delete rest.handover;
  return rest as LeaseState;
}

/** What the ranking of a free role's candidates needs of a standby row. */
export interface RankedStandby {
  readonly uuid: string;
  readonly seenAt: number;
  readonly priority?: number;
}

/** The standbys of the role (stale rows too: the rule filters by age) and I, for rule 7 of UpdateHeartBeat. */
export interface Ranking {
  readonly standbys: readonly RankedStandby[];
  readonly intervalMs: number;
}

/**
 * When a role nobody holds became free to take: its release (a reserved one: the end of the
 * reservation), or its expiry (the last renewal + T).
 */
export function freeSince(entry: Pick<LeaseState, "uuid" | "renewedAt" | "handover">, timeoutMs: number): number {
  if (entry.uuid !== "" || typeof entry.handover?.to === "string") return entry.renewedAt + timeoutMs;
  return entry.renewedAt;
}

/**
 * Whether a takeover of `entry` by `uuid` at `haTime` must be ranked against the role's
 * standbys (rule 7): the role became free less than I ago, it is not reserved for the
 * caller (a handover named it), and priorities are in use (the entry is `ranked`, or the
 * caller states one). Otherwise nobody is outranked, so no read is needed.
 */
export function rankingMatters(
  entry: LeaseState | undefined,
  caller: { readonly uuid: string; readonly priority?: number | undefined },
  haTime: number,
  timing: { readonly timeoutMs: number; readonly intervalMs: number },
): boolean {
  if (entry === undefined || reservedFor(entry, haTime, timing.timeoutMs) === caller.uuid) return false;
  // Nobody of the role ever stated a priority, and neither does the caller: all are equal.
  if (entry.ranked !== true && (caller.priority ?? 0) === 0) return false;
  return haTime < freeSince(entry, timing.timeoutMs) + timing.intervalMs;
}

/** A standby that outranks the caller (rule 7): seen within T, of higher priority, not the caller, not ended here, not the old holder. */
export function outrankedBy(
  entry: LeaseState,
  caller: { readonly uuid: string; readonly priority?: number | undefined },
  standbys: readonly RankedStandby[],
  haTime: number,
  timeoutMs: number,
): RankedStandby | undefined {
  const mine = caller.priority ?? 0;
  return standbys.find(
    (standby) =>
      priorityOf(standby) > mine &&
      standby.uuid !== caller.uuid &&
      standby.uuid !== entry.uuid &&
      !entry.endedUuids.includes(standby.uuid) &&
      haTime - standby.seenAt <= timeoutMs,
  );
}

export function decideHeartbeat(
  entry: LeaseState | undefined,
  { utype, uuid, address, priority, tokenEpoch }: { utype: string; uuid: string; address: string | null | undefined; priority?: number | undefined; tokenEpoch?: number | undefined },
  haTime: number,
  timeoutMs: number,
  epochFloor = haTime,
  ranking?: Ranking,
): HeartbeatAction {
  // A genuine token for a term the entry does not know: the store forgot that term (a geo
  // failover, a restore). Its holder must stop now, and never start another term with this
  // uuid; a standby takes the role under an epoch above the erased one (nextEpoch's clock).
  if (tokenEpoch !== undefined && erasedTerm({ uuid, epoch: tokenEpoch }, entry)) return { kind: "reject", reason: "ended", holder: entry };
  if (entry === undefined) {
    return { kind: "create", next: withPriority({ utype, uuid, address: address ?? null, epoch: nextEpoch(0, epochFloor), renewedAt: haTime, startedAt: haTime, revoked: false, endedUuids: [] }, priority) };
  }
  if (entry.endedUuids.includes(uuid)) return { kind: "reject", reason: "ended", holder: entry };
  if (entry.uuid === uuid) {
    if (entry.revoked) return { kind: "reject", reason: "revoked", holder: entry };
    if (entry.handover !== undefined && haTime - entry.handover.requestedAt > timeoutMs) return { kind: "reject", reason: "revoked", holder: entry };
    return { kind: "renew", next: withPriority({ ...entry, address: address === undefined ? entry.address : address, renewedAt: haTime }, priority) };
  }
  if (!isLive(entry, haTime, timeoutMs)) {
    const reserved = reservedFor(entry, haTime, timeoutMs);
    if (reserved !== undefined && reserved !== uuid) return { kind: "reject", reason: "held", holder: entry };
    if (
      ranking !== undefined &&
      rankingMatters(entry, { uuid, priority }, haTime, { timeoutMs, intervalMs: ranking.intervalMs }) &&
      outrankedBy(entry, { uuid, priority }, ranking.standbys, haTime, timeoutMs) !== undefined
    ) {
      return { kind: "reject", reason: "outranked", holder: entry };
    }
    return {
      kind: "take-over",
      next: withPriority({
        utype,
        uuid,
        address: address ?? null,
        epoch: nextEpoch(entry.epoch, epochFloor),
        renewedAt: haTime,
        startedAt: haTime,
        revoked: false,
        endedUuids: withEndedUuid(entry.endedUuids, entry.uuid),
        ...(entry.ranked === true ? { ranked: true as const } : {}),
      }, priority),
    };
  }
  return { kind: "reject", reason: "held", holder: entry };
}

export type PreemptAction =
  /** A handover to the caller, reason `preempt`, is stored on the live holder's entry (or re-pointed to it). */
  | { readonly kind: "request-handover"; readonly next: LeaseState }
  /** Nothing to write: the caller does not outrank the holder, a handover stands, or the same one is pending. */
  | { readonly kind: "none" };

/**
 * A standby's preemption (docs/protocol.md#priorities-and-preemption), decided when its
 * announcement with `preempt` is refused because the role is held:
 *   1. no live, unrevoked holder, or the caller holds or ended here → nothing
 *   2. the caller's priority is not above the holder's             → nothing
 *   3. no handover pending                                         → store {to: caller, reason: preempt}
 *   4. an operator's handover pending                              → nothing: an operator's is never undone
 *   5. a preemption for the caller pending                         → nothing
 *   6. a preemption for another standby pending, of lower priority
 *      than the caller's (`pendingToPriority`, undefined when that
 *      standby is not seen any more)                               → re-point it to the caller
 *                                                                    (the first request's time kept)
 *   7. otherwise                                                   → nothing
 */
export function decidePreempt(
  entry: LeaseState | undefined,
  caller: { readonly uuid: string; readonly priority?: number | undefined },
  haTime: number,
  timeoutMs: number,
  pendingToPriority?: number,
): PreemptAction {
  if (entry === undefined || entry.uuid === "" || entry.uuid === caller.uuid || entry.revoked || !isLive(entry, haTime, timeoutMs)) return { kind: "none" };
  if (entry.endedUuids.includes(caller.uuid)) return { kind: "none" };
  const mine = caller.priority ?? 0;
  if (mine <= priorityOf(entry)) return { kind: "none" };
  const pending = pendingHandover(entry, haTime, timeoutMs);
  if (pending === undefined) return { kind: "request-handover", next: { ...entry, handover: { to: caller.uuid, requestedAt: haTime, reason: "preempt" } } };
  if (pending.reason !== "preempt" || pending.to === caller.uuid) return { kind: "none" };
  if (pendingToPriority !== undefined && pendingToPriority >= mine) return { kind: "none" };
  return { kind: "request-handover", next: { ...entry, handover: { to: caller.uuid, requestedAt: pending.requestedAt, reason: "preempt" } } };
}

/**
 * How a proven release ends its term: `preempted` when it answers a pending preemption
 * (the holder stepped down for a standby of higher priority), else `released`.
 */
export function releaseEnd(entry: LeaseState, provenEpoch: number | undefined, haTime: number, timeoutMs: number): "released" | "preempted" {
  return provenEpoch === entry.epoch && pendingHandover(entry, haTime, timeoutMs)?.reason === "preempt" ? "preempted" : "released";
}

export function decideRelease(
  entry: LeaseState | undefined,
  { utype, uuid, provenEpoch }: { utype: string; uuid: string; provenEpoch: number | undefined },
  haTime: number,
  timeoutMs: number,
): ReleaseAction {
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
    const proven = provenEpoch === entry.epoch;
    if (proven || !isLive(entry, haTime, timeoutMs)) {
      const released: LeaseState = { ...entry, uuid: "", address: null, renewedAt: haTime, revoked: false, endedUuids: withEndedUuid(entry.endedUuids, uuid) };
      // A proven release during a handover to a named standby reserves the role for it.
      const reserves = proven && typeof pendingHandover(entry, haTime, timeoutMs)?.to === "string";
      return { kind: "release", next: reserves ? released : withoutHandover(released) };
    }
    // No consent: the holder may still be working, so it must run out on its own.
    if (entry.revoked) return { kind: "none" };
    return { kind: "revoke", next: { ...entry, revoked: true } };
  }
  if (entry.endedUuids.includes(uuid)) return { kind: "none" };
  const retired: LeaseState = { ...entry, endedUuids: withEndedUuid(entry.endedUuids, uuid) };
  // The standby a handover names can no longer take over: nobody waits for it any more.
  return { kind: "retire", next: entry.handover?.to === uuid ? withoutHandover(retired) : retired };
}

import type { LeaseView, StandbyView } from "./lease-view.js";

/**
 * The answer to UpdateHeartBeat. `accepted` (200): the caller holds the lease, and `lease`
 * is the token for the next renewal's fast path. Otherwise 409 with the view of who holds
 * it now: `held` (LeaseHeld) another live holder has it; `revoked` (LeaseRevoked) the
 * caller's term is over (its lease was revoked, or its uuid ended), so it must stop acting
 * as primary and compete again with a new uuid; `conflict` (Conflict) the caller's write
 * lost a race with another write, and nothing was retried.
 */
export type HeartbeatResult =
  | { readonly outcome: "accepted"; readonly view: LeaseView; readonly lease: string }
  | { readonly outcome: "held" | "conflict" | "revoked"; readonly view: LeaseView };

/**
 * The answer to a release. `released` (200): nothing of the caller's is held any more
 * (primary null, or someone else's expired lease). `revoked` (200): the caller's live
 * lease is marked revoked and runs out on its own. `held` (409 LeaseHeld): another live
 * uuid holds it. `conflict` (409 Conflict): the write lost a race.
 */
export interface ReleaseResult {
  /** `released`, `revoked`, `held` or `conflict`, as above. */
  readonly outcome: "released" | "revoked" | "held" | "conflict";
  /** The lease as the release left it. */
  readonly view: LeaseView;
}

/**
 * The answer to a standby's withdrawal (DELETE ?uuid=…&standby=true, docs/protocol.md#standbys).
 * `withdrawn` (200): its standby row is gone, and a handover that named it too. `conflict`
 * (409 Conflict): the write dropping such a handover kept losing races (the row is gone all the same).
 */
export interface WithdrawResult {
  /** `withdrawn`, or `conflict` when dropping a handover that named the standby kept losing races (its row is gone either way). */
  readonly outcome: "withdrawn" | "conflict";
  /** The role as the service saw it when it answered. */
  readonly view: LeaseView;
}

/**
 * The answer to a handover request. `requested` (202): the request is on the entry (or was
 * already); the holder learns it at its next renewal. `no-primary` (409 NoPrimary): nobody
 * live and unrevoked holds the role. `no-such-standby` (409 NoSuchStandby): `to` names no
 * standby seen recently enough (within T/2 + 2·I, never more than T), or names the holder
 * itself; `standbys` are those that were; `lastSeen`, when `to` names a standby seen
 * before that, is its row, with when it was last seen.
 * `conflict` (409 Conflict): the write kept losing races.
 */
export type HandoverResult =
  | { readonly outcome: "requested" | "no-primary" | "conflict"; readonly view: LeaseView }
  | { readonly outcome: "no-such-standby"; readonly view: LeaseView; readonly standbys: readonly StandbyView[]; readonly lastSeen?: StandbyView };

/** Which 409 error code each refused outcome is sent with. */
export const REFUSED_OUTCOME_CODES = {
  held: "LeaseHeld",
  revoked: "LeaseRevoked",
  conflict: "Conflict",
} as const;

import type { HandoverView, LeaseView } from "../../contract/lease-view.js";
import type { LeaseTiming } from "../../contract/timing.js";

/**
 * One term: a uuid holding the lease at one epoch. `lease` and `deadline` move on with
 * every accepted renewal; a renewal accepted at another epoch starts a new Term.
 */
export interface Term {
  readonly uuid: string;
  readonly epoch: number;
  /** The token of the last accepted heartbeat: the next renewal's fast path, and a release's proof. */
  lease: string;
  /**
   * Monotonic time at which this elector stops being primary unless a renewal is accepted
   * first: sentAt + (T − I) of the last accepted heartbeat (docs/protocol.md#timing-rules).
   */
  deadline: number;
  /** Aborted, with a TermEndedError, when the term ends. */
  readonly ended: AbortController;
  /**
   * With `rideThroughMs`: whether the term may ride through past its deadline. True after
   * each accepted heartbeat; false once a renewal met something other than an outage (a
   * refusal: docs/protocol.md#ride-through), and then the deadline ends the term as without
   * the option.
   */
  rides: boolean;
  /** When the current ride-through began (the deadline passed with no answer), undefined when not riding. */
  ridingSince: number | undefined;
}

/**
 * What the elector is doing, as one value (client-go's phases):
 * - `following`: polling GetPrimary; nothing held.
 * - `acquiring`: an UpdateHeartBeat without a token is in flight, so this uuid may hold the
 *   lease without knowing it (stop() must then release it, without a token).
 * - `leading`: primary while now < term.deadline.
 * - `releasing`: stop() is winding down; `term` is still renewed, never used, until the
 *   user's handlers are done, then released. Undefined once the lease was refused or lost.
 * - `stopped`: stop() has finished.
 */
export type Role =
  | { readonly kind: "following" }
  | { readonly kind: "acquiring" }
  | { readonly kind: "leading"; readonly term: Term }
  | { readonly kind: "releasing"; readonly term: Term | undefined }
  | { readonly kind: "stopped" };

// What the phases (follow, acquire, lead) hand each other.

/** Where a follow phase begins: its first poll, and a takeover already due at a known time. */
export interface FollowStart {
  readonly pollAt: number;
  readonly takeoverAt: number | undefined;
}

/** An accepted acquire: the term it started, when it was sent, and what it answered. */
export interface Elected {
  readonly term: Term;
  readonly sentAt: number;
  readonly view: LeaseView;
}

/** How a lead phase ended. `halted`: stop() ended the loop; the term is stop()'s to release. */
export type LeadEnd =
  | { readonly reason: "rejected" | "revoked"; readonly term: Term; readonly view: LeaseView }
  | { readonly reason: "lease-expired" | "affinity-lost" | "resigned" | "halted"; readonly term: Term }
  /** A planned handover pending: an operator's, or a preemption's (`handover.reason`). */
  | { readonly reason: "handover"; readonly term: Term; readonly handover: HandoverView };

export type AcquireOutcome =
  | { readonly kind: "elected"; readonly elected: Elected }
  /** Refused: held by another, a lost race, or (`ended`) this uuid's term ended. */
  | { readonly kind: "refused"; readonly ended: boolean; readonly view: LeaseView }
  /** Accepted only after its own deadline: it proves nothing about now. */
  | { readonly kind: "too-late" }
  | { readonly kind: "unanswered" };

/** The epoch of the view's primary when it is `uuid`, live and not revoked; the only answer that renews a term. */
export function epochHeldBy(view: LeaseView, uuid: string): number | undefined {
  const primary = view.primary;
  return primary !== null && primary.uuid === uuid && !primary.revoked ? primary.epoch : undefined;
}

/**
 * When a follower should try to take over: the moment the lease it was shown expires, not
 * up to I later. The answer left the server before it reached us, so now + expiresInMs is
 * at or after the real expiry; the +1 is because the service takes over only once the
 * lease is older than T. Undefined when there is nobody to take over from.
 */
export function takeoverTime(view: LeaseView, ownUuid: string, now: number): number | undefined {
  const primary = view.primary;
  if (primary === null || primary.uuid === ownUuid) return undefined;
  return now + Math.max(0, primary.expiresInMs) + 1;
}

/** A pending handover to this uuid or to any: the standby polls fast so that the gap after the release stays far below I. */
export function handoverFor(view: LeaseView, uuid: string): boolean {
  const handover = view.handover;
  return handover !== null && handover !== undefined && handover.phase === "pending" && (handover.to === null || handover.to === uuid);
}

/** A planned handover, pending or reserved, to this uuid or to any. */
export function handoverFavours(view: LeaseView, uuid: string): boolean {
  const handover = view.handover;
  return handover !== null && handover !== undefined && (handover.to === null || handover.to === uuid);
}

/** A standby's poll while a handover to it (or to any) is pending: max(50 ms, I/10), never more than T. */
export function fastPollMs(view: LeaseTiming): number {
  return Math.min(view.timeoutMs, Math.max(50, view.intervalMs / 10));
}

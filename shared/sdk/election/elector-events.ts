import type { PrimaryView } from "../../contract/lease-view.js";

/**
 * Why a primary stopped being one. `rejected`: a heartbeat got 409, another uuid holds the
 * lease. `revoked`: a heartbeat got 409 LeaseRevoked, someone revoked the lease (DELETE
 * without its token); nobody takes over before it expires. `lease-expired`: the deadline
 * passed without an accepted renewal (slow or failing calls, or a process pause).
 * `stopped`: stop() or the abort signal. `affinity-lost`: the primary of the affinity utype
 * is no longer at this elector's address. `epoch-changed`: a renewal was accepted with
 * another epoch than the one held, which only happens when the service lost its state;
 * `elected` with the new epoch follows at once. `resigned`: resign() gave the term up; the
 * lease is released and a new uuid competes, so the next term has a new epoch. `handover`:
 * an operator asked for a planned handover (docs/protocol.md#planned-handover); as with
 * `stopped` the handlers are awaited, then the lease is released with its token (the named
 * standby takes over at once) and a new uuid competes after T. `preempted`: the same, but
 * asked by a standby of higher priority after its hold-down, not by an operator
 * (docs/protocol.md#priorities-and-preemption).
 */
export type DemotionReason = "rejected" | "revoked" | "lease-expired" | "stopped" | "affinity-lost" | "epoch-changed" | "resigned" | "handover" | "preempted";

/** The events of a PrimaryElector, with what each handler is given (docs/sdk.md#events). */
export interface ElectorEvents {
  /**
   * This elector became primary; `epoch` is the fencing token for its writes. `signal` is
   * aborted when this term ends, before `demoted` is emitted, with a TermEndedError that
   * names the reason: hand it to the work done for this term.
   */
  elected: { readonly uuid: string; readonly epoch: number; readonly signal: AbortSignal };
  /** It is no longer primary. Handlers of a `stopped`, `handover` or `preempted` demotion are awaited before release. */
  demoted: { readonly reason: DemotionReason; readonly uuid: string; readonly epoch: number };
  /**
   * The primary this elector observes changed (another uuid or epoch, or none). `epoch` is
   * the role's epoch from the same answer: the holder's, or the last term's when none holds it.
   */
  primaryChanged: { readonly primary: PrimaryView | null; readonly epoch: number };
  /**
   * With `rideThroughMs`: the term's deadline passed while its renewals got no answer, a
   * timeout or a 5xx, and it rides through (docs/protocol.md#ride-through). It stays primary,
   * its epoch unchanged, for up to `leftMs` more unless an answer comes first: accepted, the
   * term goes on; anything else ends it at once. Meanwhile another participant may be
   * elected too (if only this one is cut off): work that is not fenced by the epoch must stop
   * here. `exclusiveTimeLeftMs()` reads 0 until an accepted renewal.
   */
  ridingThrough: { readonly uuid: string; readonly epoch: number; readonly leftMs: number };
  /** Non-fatal: a failed call, a corrupted answer, slow round trips. The elector keeps going. */
  error: Error;
}

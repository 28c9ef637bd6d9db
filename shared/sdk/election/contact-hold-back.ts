import type { LeaseTiming } from "../../contract/timing.js";
import type { LeaseView } from "../../contract/lease-view.js";

/**
 * How long a standby holds back, after calls of its own failed (no answer, a timeout or a
 * 5xx: an outage, not a refusal; see isOutage), before it takes a role whose holder may come
 * back (docs/protocol.md#sticky-recovery, whose table this follows). When the service is out
 * for everyone, no holder can renew, so every lease runs out meanwhile; a standby that took an
 * expired lease the moment the service answered again would move the role for no fault of its
 * holder. But a lost message is not an outage: what a failed call holds back depends on what
 * the answer before it showed of the role's lease, being renewed (within
 * RENEWING_WITHIN_INTERVALS·I) or not (older, revoked, or no lease at all).
 *
 * - Lost contact: two failed calls in a row after an answer that showed the lease being
 *   renewed (its holder was renewing, so an outage that began stops it too), or any failed
 *   call before the first answer (nothing says the service was ever up). No takeover before
 *
 *       max(sentAt of the last failed call + T,  its next answer + 2·I)
 *
 *   The first term is at most "T after the return": the failed call was sent while the
 *   service was out, so a holder that died meanwhile is replaced by then.
 * - Perhaps a short outage: one failed call after an answer that showed the lease being
 *   renewed, or two in a row after one that did not. No takeover before its next answer +
 *   2·I. An outage too short to fail two calls in a row can still end the holder's term (its
 *   renewals are I apart or more), and the holder then takes its role back: at its deadline,
 *   or at its first look after the return. After a lease no longer renewed, two in a row are
 *   for a holder that lost renewals to an outage too short for this standby to meet and
 *   loses the rest to this one.
 * - A lost message: one failed call after an answer that showed the lease not being renewed.
 *   Nothing: its holder had stopped renewing while the service still answered this standby
 *   (it crashed, or was cut off alone), not because of an outage. Under message loss, each
 *   lost poll would otherwise move a crash failover later. A holder whose renewals were lost
 *   to an outage too short for this standby to meet looks the same, and may lose its role
 *   if a second outage ends its term
 *   (docs/design/sticky-recovery.md#what-it-assumes-and-what-it-does-not-cover).
 *
 * The 2·I is the holder's time to find the service: a holder whose term ended for want of
 * answers looks every I·(1 + 0.2·U) while it gets none and takes its own role back at its
 * first answer (a round trip or two later), which this standby's answer cannot precede. Until
 * that next answer comes, nothing is taken (the hold-back has no end yet). A call that fails
 * while a hold-back is on (the poll a takeover at its end awaits, say), or within I after it
 * ended once the last answer let the role be taken (the takeover that ends it), is no lost
 * message whatever that answer showed: it keeps the hold-back on until 2·I after the next
 * answer, as the service may be out again before the holder found it.
 *
 * A standby that never lost contact is not held back: a holder cut off alone (a partition,
 * a paused process) is replaced at its lease's expiry, as always. Pure bookkeeping, on the
 * elector's clock; the elector decides which roles it applies to.
 */
export class ContactHoldBack {
  /** I and T as the latest answer gave them; undefined before the first answer. */
  #timing: LeaseTiming | undefined;
  /** Whether the latest answer showed the role's lease being renewed (see RENEWING_WITHIN_INTERVALS). */
  #renewing = false;
  /** When the latest answer came; undefined before the first. */
  #answeredAt: number | undefined;
  /** From when the latest answer let the role be taken: its lease's expiry, or that answer if it showed none. */
  #takeableAt = Number.POSITIVE_INFINITY;
  /** Calls sent since the latest answer (since the start, before the first) that met an outage. */
  #unanswered = 0;
  /** When the latest call that lost contact was sent: the T term; undefined while none has. */
  #lostSentAt: number | undefined;
  /** When the latest call that holds back was sent; undefined while none has. */
  #heldSentAt: number | undefined;
  /** The first answer after #heldSentAt; undefined until one comes. */
  #regainedAt: number | undefined;

  /**
   * A call sent at `sentAt` met an outage (see isOutage). One sent before the answer that
   * ended the last loss (a call that hung, cut off late) moves the failure, not that answer.
   */
  failed(sentAt: number): void {
    if (this.#answeredAt === undefined || sentAt >= this.#answeredAt) this.#unanswered += 1;
    const kind = this.#kindOf(sentAt);
    if (kind === "lost message") return;
    if (kind === "lost contact" && (this.#lostSentAt === undefined || sentAt > this.#lostSentAt)) this.#lostSentAt = sentAt;
    if (this.#heldSentAt !== undefined && sentAt < this.#heldSentAt) return;
    this.#heldSentAt = sentAt;
    if (this.#regainedAt !== undefined && sentAt > this.#regainedAt) this.#regainedAt = undefined;
  }

  /** What a failed call sent at `sentAt` tells, by the answer before it (see the class comment). */
  #kindOf(sentAt: number): "lost contact" | "short outage" | "lost message" {
    const timing = this.#timing;
    if (timing === undefined) return "lost contact";
    const inARow = this.#unanswered >= 2;
    if (inARow && this.#renewing) return "lost contact";
    const end = this.#regainedAt === undefined ? Number.POSITIVE_INFINITY : this.#end(timing);
    const holding = this.#heldSentAt !== undefined && (sentAt < end || (sentAt >= this.#takeableAt && sentAt < end + timing.intervalMs));
    return inARow || this.#renewing || holding ? "short outage" : "lost message";
  }

  /** The service answered (anything, a refusal included) at `at`, showing `view`. */
  answered(at: number, view: LeaseView): void {
    this.#timing = { intervalMs: view.intervalMs, timeoutMs: view.timeoutMs };
    const primary = view.primary;
    this.#renewing = primary !== null && !primary.revoked && view.timeoutMs - primary.expiresInMs <= RENEWING_WITHIN_INTERVALS * view.intervalMs;
    this.#answeredAt = at;
    this.#takeableAt = primary === null ? at : at + primary.expiresInMs;
    this.#unanswered = 0;
    if (this.#heldSentAt !== undefined && this.#regainedAt === undefined) this.#regainedAt = at;
  }

  /**
   * The time before which a role a holder may come back to must not be taken: −∞ when
   * contact was never lost, +∞ while it is still lost (no answer since the last failure).
   */
  until(timing: LeaseTiming): number {
    if (this.#heldSentAt === undefined) return Number.NEGATIVE_INFINITY;
    if (this.#regainedAt === undefined) return Number.POSITIVE_INFINITY;
    return this.#end(timing);
  }

  #end(timing: LeaseTiming): number {
    const regained = this.#regainedAt === undefined ? Number.POSITIVE_INFINITY : this.#regainedAt + 2 * timing.intervalMs;
    return this.#lostSentAt === undefined ? regained : Math.max(this.#lostSentAt + timing.timeoutMs, regained);
  }
}

/**
 * A lease renewed within this many I is being renewed: its holder renews every I, the age
 * the service reports may be off by the skew between its instances (less than I,
 * docs/protocol.md#the-assumptions), and the renewal travels for up to a round trip (well
 * under I/4).
 */
const RENEWING_WITHIN_INTERVALS = 2.25;

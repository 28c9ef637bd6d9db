import type { LeaseTiming } from "../../contract/timing.js";

/**
 * How long a standby that lost contact with the service holds back before it takes a role
 * whose holder may come back (docs/protocol.md#sticky-recovery). When the service is out
 * for everyone, no holder can renew, so every lease runs out meanwhile; a standby that
 * took an expired lease the moment the service answered again would move the role for no
 * fault of its holder. So after a call of its own got no answer, a timeout or a 5xx (an
 * outage, not a refusal), a standby takes no such role before
 *
 *     max(sentAt of that failed call + T,  its next answer + 2·I)
 *
 * The first term is "T after the return": the failed call was sent while the service was
 * out, so a holder that died meanwhile is replaced at most T after the service returned.
 * The second gives the holder time to find the service: a holder whose term ended for want
 * of answers looks every I·(1 + 0.2·U) while it gets none and takes its own role back at
 * its first answer (one round trip later), which this standby's answer cannot precede. Until
 * that next answer comes, nothing is taken (the hold-back has no end yet).
 *
 * A standby that never lost contact is not held back: a holder cut off alone (a partition,
 * a paused process) is replaced at its lease's expiry, as always. Pure bookkeeping, on the
 * elector's clock; the elector decides which roles it applies to.
 */
export class ContactHoldBack {
  /** When the latest call that met an outage was sent; undefined while none has. */
  #failedSentAt: number | undefined;
  /** The first answer after that failure; undefined until one comes. */
  #regainedAt: number | undefined;

  /**
   * A call sent at `sentAt` met an outage (see isOutage). One sent before the answer that
   * ended the last loss (a call that hung, cut off late) moves the failure, not that answer.
   */
  failed(sentAt: number): void {
    if (this.#failedSentAt !== undefined && sentAt < this.#failedSentAt) return;
    this.#failedSentAt = sentAt;
    if (this.#regainedAt !== undefined && sentAt > this.#regainedAt) this.#regainedAt = undefined;
  }

  /** The service answered (anything, a refusal included) at `at`. */
  answered(at: number): void {
    if (this.#failedSentAt !== undefined && this.#regainedAt === undefined) this.#regainedAt = at;
  }

  /**
   * The time before which a role a holder may come back to must not be taken: −∞ when
   * contact was never lost, +∞ while it is still lost (no answer since the last failure).
   */
  until(timing: LeaseTiming): number {
    if (this.#failedSentAt === undefined) return Number.NEGATIVE_INFINITY;
    if (this.#regainedAt === undefined) return Number.POSITIVE_INFINITY;
    return Math.max(this.#failedSentAt + timing.timeoutMs, this.#regainedAt + 2 * timing.intervalMs);
  }
}

import type { DemotionReason } from "./elector-events.js";

/**
 * The reason an `elected` payload's `signal` is aborted with: the term (uuid, epoch) is
 * over, for `reason`. Work started for that term should stop; `signal.throwIfAborted()`
 * throws this.
 */
export class TermEndedError extends Error {
  /** Always "TermEndedError". */
  override readonly name = "TermEndedError";

  constructor(
    /** Why the term ended: the demotion's reason. */
    readonly reason: DemotionReason,
    /** The uuid that held the term. */
    readonly uuid: string,
    /** The term's epoch. */
    readonly epoch: number,
  ) {
    super(`The term of ${uuid} at epoch ${epoch} ended (${reason}).`);
  }
}

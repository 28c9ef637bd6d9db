import type { DemotionReason } from "./elector-events.js";

/**
 * The reason an `elected` payload's `signal` is aborted with: the term (uuid, epoch) is
 * over, for `reason`. Work started for that term should stop; `signal.throwIfAborted()`
 * throws this.
 */
export class TermEndedError extends Error {
  override readonly name = "TermEndedError";

  constructor(
    readonly reason: DemotionReason,
    readonly uuid: string,
    readonly epoch: number,
  ) {
    super(`The term of ${uuid} at epoch ${epoch} ended (${reason}).`);
  }
}

/**
 * Refused fenced writes (docs/fencing.md). A `FencedOutError` means a newer term already
 * wrote the resource: the caller is no longer the primary that may write it and should stop
 * the old term's work. A `FencedWriteContendedError` means the write lost its ETag race on
 * every attempt to writers at the same or a lower epoch; nothing was written, and trying
 * again later is safe.
 */
export class FencedOutError extends Error {
  /** Always "FencedOutError". */
  override readonly name = "FencedOutError";

  constructor(
    /** What was written, e.g. `table entity (jobs, 42) in table "state"`. */
    readonly resource: string,
    /** The epoch this write carried. */
    readonly epoch: number,
    /** The highest epoch that has written the resource, above `epoch`. */
    readonly storedEpoch: number,
  ) {
    super(
      `The write to ${resource} at epoch ${epoch} was refused: epoch ${storedEpoch} has written it, so a newer term holds the role. ` +
        "Stop the work of the term that carried this epoch.",
    );
  }
}

/** A fenced write that lost its ETag race on every attempt: nothing was written, and no newer epoch fenced it out (see above). */
export class FencedWriteContendedError extends Error {
  /** Always "FencedWriteContendedError". */
  override readonly name = "FencedWriteContendedError";

  constructor(
    /** What was written, as in FencedOutError. */
    readonly resource: string,
    /** The epoch this write carried. */
    readonly epoch: number,
    /** How many read-check-write rounds were tried, each lost to a concurrent write. */
    readonly attempts: number,
  ) {
    super(
      `The write to ${resource} at epoch ${epoch} lost the race to a concurrent write on each of ${attempts} attempts and was not made. ` +
        "Nothing newer fenced it out; write again, or raise `maxAttempts`.",
    );
  }
}

/**
 * The cadence of a participant that holds several parts (docs/sdk.md#one-request-per-participant):
 * every part wakes on one grid, anchor + k·I, so that their calls leave together and
 * travel as one participant heartbeat.
 */
export interface AlignInput {
  /** When the part would wake on its own. */
  readonly at: number;
  /** Now, on the same clock. */
  readonly now: number;
  /** The participant's grid: its points are anchor + k·intervalMs. */
  readonly anchor: number;
  readonly intervalMs: number;
  /** A poll may wake a little later than planned; a renewal or a member heartbeat may not. */
  readonly mayDelay: boolean;
  /**
   * A renewal planned I after the last accepted one: it may go now, much earlier than due,
   * when the grid point before `at` has just passed (a retry after a failure, or a fast
   * poll, must not be sent again at once, and may not).
   */
  readonly mayAdvance?: boolean;
}

/** How far under a whole number of intervals still counts as that number (floating point). */
const GRID_TOLERANCE = 1e-9;

/**
 * The time a part wakes instead of `at`:
 * - the largest grid point at or before `at` that is still in the future: waking earlier
 *   than due is always safe (a renewal sent earlier only renews earlier, and its deadline is
 *   measured from when it was sent);
 * - else, for a part that may advance (a renewal after an accepted one), now if that grid
 *   point passed at most I/4 ago;
 * - else, for a part that may be delayed, the next grid point if it is within I/4 of `at`;
 * - else `at` unchanged.
 * A takeover time (the holder's expiry) is never passed through here.
 */
export function align({ at, now, anchor, intervalMs, mayDelay, mayAdvance = false }: AlignInput): number {
  if (!(intervalMs > 0) || !Number.isFinite(at)) return at;
  // A time I after a grid point is a grid point, though (at − anchor) / I may come out a hair
  // under the whole number in floating point: without the tolerance, a renewal sent on the
  // grid would align to the point it was sent at, and go again at once, for ever.
  const before = Math.min(at, anchor + Math.floor((at - anchor) / intervalMs + GRID_TOLERANCE) * intervalMs);
  if (before > now) return before;
  // The grid point before it has just passed (the last answer came after it): a renewal goes
  // now, with or just after that point's request, rather than off the grid. Sent δ before
  // each grid point with a round trip longer than δ, it would never get back on it, and
  // would go alone every I.
  if (mayAdvance && now - before <= intervalMs / 4) return now;
  const after = before + intervalMs;
  if (mayDelay && after - at <= intervalMs / 4) return after;
  return at;
}

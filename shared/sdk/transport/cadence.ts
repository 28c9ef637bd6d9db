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
  /** A poll may wake up to I/4 later than planned; a renewal or a member heartbeat at most earlyWakeMs. */
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
 * How early a timer may fire and its part still count as woken at the grid point it was set
 * for: Node's timers run on the event loop's coarse time, cached for a whole loop turn, and
 * fire up to a few milliseconds early on performance.now(), more on a busy loop. Never more
 * than I/20.
 */
export function earlyWakeMs(intervalMs: number): number {
  return Math.min(20, intervalMs / 20);
}

/**
 * The time a part wakes instead of `at`:
 * - the grid point just after `at` when `at` is at most earlyWakeMs before it (a part
 *   whose timer fired that early planned I from then);
 * - else the largest grid point at or before `at` that is still in the future, by more than
 *   earlyWakeMs (a point nearer is the one a part woken early is at): waking earlier
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
  const after = before + intervalMs;
  // A part whose timer fired a little before its grid point is at that point: planned from
  // there, it wakes at the next one, not at the one it woke for (it would wake again at once
  // and call twice), and that one is not ahead of it.
  const earlyMs = earlyWakeMs(intervalMs);
  if (after - at <= earlyMs) return after;
  if (before > now + earlyMs) return before;
  // The grid point before it has just passed (the last answer came after it): a renewal goes
  // now, with or just after that point's request, rather than off the grid. Sent δ before
  // each grid point with a round trip longer than δ, it would never get back on it, and
  // would go alone every I.
  if (mayAdvance && now - before <= intervalMs / 4) return now;
  if (mayDelay && after - at <= intervalMs / 4) return after;
  return at;
}

/**
 * Where a poll's next plan counts from: the plan of the poll just made, when the grid woke it
 * earlier than planned (by less than `withinMs`), else when it woke. A poll on a
 * participant's grid wakes at the grid point before its plan; counted from that early wake,
 * it would poll every I where alone it polls at its own cadence, and a participant's store
 * operations are what its parts cost alone.
 */
export function planFrom(planned: number | undefined, wokeAt: number, withinMs: number): number {
  return planned !== undefined && planned >= wokeAt && planned - wokeAt < withinMs ? planned : wokeAt;
}

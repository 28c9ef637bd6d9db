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
}

/**
 * The time a part wakes instead of `at`:
 * - the largest grid point at or before `at` that is still in the future: waking earlier
 *   than due is always safe (a renewal sent earlier only renews earlier, and its deadline is
 *   measured from when it was sent);
 * - else, for a part that may be delayed, the next grid point if it is within I/4 of `at`;
 * - else `at` unchanged.
 * A takeover time (the holder's expiry) is never passed through here.
 */
export function align({ at, now, anchor, intervalMs, mayDelay }: AlignInput): number {
  if (!(intervalMs > 0) || !Number.isFinite(at)) return at;
  const before = anchor + Math.floor((at - anchor) / intervalMs) * intervalMs;
  if (before > now) return before;
  const after = before + intervalMs;
  if (mayDelay && after - at <= intervalMs / 4) return after;
  return at;
}

/** How many recent heartbeat round trips the percentiles are taken over. */
const WINDOW = 1024;

/** The last WINDOW round trips in a ring, for p50/p99 without unbounded memory. */
export class RoundTripWindow {
  readonly #samples: number[] = [];
  #next = 0;

  add(ms: number): void {
    if (this.#samples.length < WINDOW) {
      this.#samples.push(ms);
    } else {
      this.#samples[this.#next] = ms;
    }
    this.#next = (this.#next + 1) % WINDOW;
  }

  get count(): number {
    return this.#samples.length;
  }

  /** The nearest-rank percentile (0 < p ≤ 100), or undefined before any sample. */
  percentile(p: number): number | undefined {
    return nearestRank([...this.#samples].sort((a, b) => a - b), p);
  }
}

/**
 * The nearest-rank percentile of ascending `sorted` (0 < p ≤ 100): the smallest sample
 * that at least p % of the samples do not exceed; undefined when there are none. The one
 * definition of the project: the elector's stats and the benchmarks report it alike.
 */
export function nearestRank(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

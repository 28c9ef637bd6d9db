/** A sample summarised for the chaos summary: count, min, median, p99 and max. */
export interface Distribution {
  readonly count: number;
  readonly min: number;
  readonly median: number;
  readonly p99: number;
  readonly max: number;
}

/** Nearest-rank percentiles; undefined for an empty sample. */
export function distribution(values: readonly number[]): Distribution | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
  return { count: sorted.length, min: sorted[0]!, median: rank(0.5), p99: rank(0.99), max: sorted[sorted.length - 1]! };
}

/** ns → ms, keeping 0.1 ms. */
export function nsToMs(ns: bigint): number {
  return Number(ns / 100_000n) / 10;
}

export function msToNs(ms: number): bigint {
  return BigInt(Math.round(ms * 1e6));
}

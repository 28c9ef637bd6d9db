import type { LogLine } from "./log-line.js";

/**
 * One worker process in one term: the lines of one (pid, epoch). Its span is
 * [firstNs, lastNs], the instants at which it is known to have been running code.
 */
export interface Writer {
  readonly key: string;
  readonly pid: number;
  readonly epoch: number;
  readonly participant: string;
  readonly firstNs: bigint;
  readonly lastNs: bigint;
  readonly lines: number;
}

export function writerKey(line: Pick<LogLine, "pid" | "epoch">): string {
  return `${line.pid}/${line.epoch}`;
}

/** The writers of a log, ordered by their first line. */
export function collectWriters(lines: readonly LogLine[]): Writer[] {
  const byKey = new Map<string, { pid: number; epoch: number; participant: string; firstNs: bigint; lastNs: bigint; lines: number }>();
  for (const line of lines) {
    const key = writerKey(line);
    const writer = byKey.get(key);
    if (writer === undefined) {
      byKey.set(key, { pid: line.pid, epoch: line.epoch, participant: line.participant, firstNs: line.atNs, lastNs: line.atNs, lines: 1 });
    } else {
      if (line.atNs < writer.firstNs) writer.firstNs = line.atNs;
      if (line.atNs > writer.lastNs) writer.lastNs = line.atNs;
      writer.lines += 1;
    }
  }
  return [...byKey.entries()]
    .map(([key, writer]) => ({ key, ...writer }))
    .sort((a, b) => (a.firstNs < b.firstNs ? -1 : a.firstNs > b.firstNs ? 1 : 0));
}

/** Lines in the order of their timestamps (file order can differ by a preempted write). */
export function byTime(lines: readonly LogLine[]): LogLine[] {
  return [...lines].sort((a, b) => (a.atNs < b.atNs ? -1 : a.atNs > b.atNs ? 1 : 0));
}

/** Index of the first line strictly after `ns` in time-ordered lines (lines.length if none). */
export function firstAfter(sorted: readonly LogLine[], ns: bigint): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid]!.atNs <= ns) low = mid + 1;
    else high = mid;
  }
  return low;
}

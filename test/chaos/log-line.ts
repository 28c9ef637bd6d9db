/**
 * The shared log of a chaos run: every worker appends one line every few milliseconds
 * while it runs,
 *
 *     <epoch> <pid> <ns> <participant>\n
 *
 * where `ns` is the host's monotonic clock (process.hrtime.bigint(), CLOCK_MONOTONIC on
 * Linux) read just before the write. Every process on the machine reads that one clock,
 * so lines of different workers compare exactly, with no skew to allow for. A line is
 * written with one write(2) on a file opened O_APPEND, so lines never interleave.
 */
export interface LogLine {
  /** HA_EPOCH of the worker's term. */
  readonly epoch: number;
  /** The worker's own pid (under `sh -c`, not the shell's). */
  readonly pid: number;
  /** When the worker wrote it, in ns of the host's monotonic clock. */
  readonly atNs: bigint;
  /** Which participant's `run` started the worker (p0, p1, …). */
  readonly participant: string;
}

export function formatLogLine(line: LogLine): string {
  return `${line.epoch} ${line.pid} ${line.atNs} ${line.participant}\n`;
}

const LINE = /^([0-9]+) ([0-9]+) ([0-9]+) ([A-Za-z0-9_-]+)$/;

/** One line's text (no newline), or undefined when it is not a log line. */
export function parseLogLine(text: string): LogLine | undefined {
  const match = LINE.exec(text);
  if (match === null) return undefined;
  const epoch = Number(match[1]);
  const pid = Number(match[2]);
  if (!Number.isSafeInteger(epoch) || !Number.isSafeInteger(pid)) return undefined;
  return { epoch, pid, atNs: BigInt(match[3]!), participant: match[4]! };
}

export interface ParsedLog {
  /** In file order, which is the order the writes reached the file. */
  readonly lines: readonly LogLine[];
  /** Lines that do not parse (1-based line numbers): a torn or foreign write. */
  readonly malformed: ReadonlyArray<{ readonly lineNumber: number; readonly text: string }>;
}

/** A whole log; a last line without its newline is still being written and is left out. */
export function parseLog(text: string): ParsedLog {
  const lines: LogLine[] = [];
  const malformed: Array<{ lineNumber: number; text: string }> = [];
  const parts = text.split("\n");
  parts.pop(); // "" after the last newline, or a line still being written
  parts.forEach((part, index) => {
    const line = parseLogLine(part);
    if (line === undefined) malformed.push({ lineNumber: index + 1, text: part.slice(0, 80) });
    else lines.push(line);
  });
  return { lines, malformed };
}

import { closeSync, openSync, readSync } from "node:fs";
import { parseLogLine, type LogLine } from "./log-line.js";
import { writerKey } from "./writers.js";

/**
 * The harness's live view of the shared log, read as it grows: who wrote last (the
 * primary, if the line is fresh) and waiting for a line that meets a condition. The judge
 * reads the whole file afterwards; this only steers the run.
 */
export class LogTail {
  #fd: number;
  #offset = 0;
  #rest = "";
  #last: LogLine | undefined;
  readonly #waiters = new Set<(line: LogLine) => boolean>();
  readonly #timer: NodeJS.Timeout;

  constructor(path: string, pollMs = 10) {
    this.#fd = openSync(path, "r");
    this.#timer = setInterval(() => this.poll(), pollMs);
  }

  get last(): LogLine | undefined {
    return this.#last;
  }

  /** The writer of the last line if it wrote within `freshMs`: the worker running now. */
  current(freshMs: number): LogLine | undefined {
    this.poll();
    const last = this.#last;
    if (last === undefined) return undefined;
    return process.hrtime.bigint() - last.atNs <= BigInt(freshMs) * 1_000_000n ? last : undefined;
  }

  /** The first line from now on that satisfies `match`, or undefined after `timeoutMs`. */
  waitFor(match: (line: LogLine) => boolean, timeoutMs: number): Promise<LogLine | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        resolve(undefined);
      }, timeoutMs);
      const check = (line: LogLine): boolean => {
        if (!match(line)) return false;
        clearTimeout(timer);
        resolve(line);
        return true;
      };
      this.#waiters.add(check);
      // A line already read may match (the condition names a time in the past).
      if (this.#last !== undefined && check(this.#last)) this.#waiters.delete(check);
    });
  }

  /** A line written after `ns` by a worker other than `except` (a writerKey). */
  lineAfter(ns: bigint, except: string | undefined, timeoutMs: number): Promise<LogLine | undefined> {
    return this.waitFor((line) => line.atNs > ns && writerKey(line) !== except, timeoutMs);
  }

  poll(): void {
    const buffer = Buffer.alloc(65_536);
    for (;;) {
      const read = readSync(this.#fd, buffer, 0, buffer.length, this.#offset);
      if (read === 0) return;
      this.#offset += read;
      const lines = (this.#rest + buffer.toString("utf8", 0, read)).split("\n");
      this.#rest = lines.pop() ?? "";
      for (const text of lines) {
        const line = parseLogLine(text);
        if (line === undefined) continue;
        this.#last = line;
        for (const waiter of [...this.#waiters]) if (waiter(line)) this.#waiters.delete(waiter);
      }
    }
  }

  close(): void {
    clearInterval(this.#timer);
    closeSync(this.#fd);
  }
}

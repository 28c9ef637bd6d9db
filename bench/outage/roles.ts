import { closeSync, openSync, readSync, statSync } from "node:fs";
import { addLine, parseWorkLines, primariesAt, spansOf, type RoleEvent, type Span, type SpanMap } from "./figures.js";

/**
 * One role as the outage benchmarks watch it: its work log, read as it grows (only the new
 * bytes each time, kept as runs of the work: one per participant and term), and its
 * participants' own events.
 */
export class WatchedRole {
  readonly events: RoleEvent[] = [];
  readonly #spans: SpanMap = new Map();
  #offset = 0;
  #rest = "";

  constructor(
    /** The group (algorithm) and the role's utype, for messages. */
    readonly utype: string,
    /** The work log the role's commands append to. */
    readonly log: string,
  ) {}

  /** Reads what the log gained since the last call. */
  refresh(): void {
    let size: number;
    try {
      size = statSync(this.log).size;
    } catch {
      return; // no work yet
    }
    if (size <= this.#offset) return;
    const fd = openSync(this.log, "r");
    try {
      const buffer = Buffer.alloc(size - this.#offset);
      const read = readSync(fd, buffer, 0, buffer.length, this.#offset);
      this.#offset += read;
      const parts = (this.#rest + buffer.subarray(0, read).toString("utf8")).split("\n");
      this.#rest = parts.pop() ?? "";
      for (const line of parseWorkLines(parts.join("\n"))) addLine(this.#spans, line);
    } finally {
      closeSync(fd);
    }
  }

  /** Every run of the work so far, by start. */
  spans(): Span[] {
    return spansOf(this.#spans);
  }

  /**
   * Whether the role is settled at `now`: one primary by the events, its work written within
   * `freshMs`, and no election in the last `stableMs`.
   */
  settled(now: number, freshMs: number, stableMs: number): boolean {
    this.refresh();
    const primaries = primariesAt(this.events, now);
    if (primaries.length !== 1) return false;
    if (this.events.some((event) => event.event === "elected" && event.at > now - stableMs)) return false;
    return [...this.#spans.values()].some((span) => span.participant === primaries[0] && span.to >= now - freshMs);
  }
}

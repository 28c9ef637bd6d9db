/**
 * The outage benchmarks' figures, from what the participants themselves wrote: each role's
 * work lines (`<ms> <participant> <term>`, one every period while its work runs) and each
 * participant's own `elected` and `demoted` events. Pure functions, so that each can be
 * shown to catch what it is for (test/bench/outage-figures.test.ts).
 */

/** One line of a role's work: when, whose, and under which term (an epoch, or a uuid). */
export interface WorkLine {
  readonly at: number;
  readonly participant: string;
  readonly term: string;
}

/** A participant's own event about one role (Date.now() ms). */
export interface RoleEvent {
  readonly at: number;
  readonly participant: string;
  readonly event: "elected" | "demoted";
  readonly term: string;
}

/** One run of the work: a participant's lines under one term, first to last. */
export interface Span {
  readonly participant: string;
  readonly term: string;
  readonly from: number;
  readonly to: number;
}

/** The lines of `log` (`<ms> <participant> <term>` each); a torn or foreign line is skipped. */
export function parseWorkLines(log: string): WorkLine[] {
  const lines: WorkLine[] = [];
  for (const text of log.split("\n")) {
    const [at, participant, term, ...rest] = text.split(" ");
    if (rest.length > 0 || participant === undefined || term === undefined || !/^\d+$/.test(at ?? "")) continue;
    lines.push({ at: Number(at), participant, term });
  }
  return lines;
}

/** The work's runs by participant and term, as lines are added to them (addLine). */
export type SpanMap = Map<string, { participant: string; term: string; from: number; to: number }>;

/** Adds one line to the run of its participant and term. */
export function addLine(spans: SpanMap, line: WorkLine): void {
  const key = `${line.participant}\u0000${line.term}`;
  const span = spans.get(key);
  if (span === undefined) spans.set(key, { participant: line.participant, term: line.term, from: line.at, to: line.at });
  else {
    span.from = Math.min(span.from, line.at);
    span.to = Math.max(span.to, line.at);
  }
}

/** The runs of `spans` (or of `lines`), by start: one per (participant, term), from its first line to its last. */
export function spansOf(lines: readonly WorkLine[] | SpanMap): Span[] {
  let spans: SpanMap;
  if (lines instanceof Map) spans = lines;
  else {
    spans = new Map();
    for (const line of lines) addLine(spans, line);
  }
  return [...spans.values()].map((span) => ({ ...span })).sort((a, b) => a.from - b.from);
}

/**
 * Pairs of runs of one role that overlap in time: two primaries working at once. Without
 * ride-through there must be none (docs/protocol.md): each run's lines were written while
 * its participant held the lease, and a lease has one holder at a time.
 */
export function overlaps(spans: readonly Span[]): [Span, Span][] {
  const found: [Span, Span][] = [];
  const sorted = [...spans].sort((a, b) => a.from - b.from);
  for (let i = 0; i < sorted.length; i += 1) {
    for (let j = i + 1; j < sorted.length && sorted[j]!.from <= sorted[i]!.to; j += 1) found.push([sorted[i]!, sorted[j]!]);
  }
  return found;
}

/**
 * Milliseconds of [from, to) in which no run of the role's work ran. A run covers its
 * lines' time and one period after its last line (the work wrote every `periodMs`).
 */
export function workLostMs(spans: readonly Span[], from: number, to: number, periodMs: number): number {
  const covered = spans
    .map((span) => [Math.max(from, span.from), Math.min(to, span.to + periodMs)] as const)
    .filter(([start, end]) => end > start)
    .sort((a, b) => a[0] - b[0]);
  let lost = 0;
  let reached = from;
  for (const [start, end] of covered) {
    if (start > reached) lost += start - reached;
    reached = Math.max(reached, end);
  }
  return lost + Math.max(0, to - reached);
}

/**
 * From `at` until a run of the work is under way: 0 when one covers `at` (its last line
 * within a period of `at`, or later), undefined when none starts by `until`.
 */
export function untilWork(spans: readonly Span[], at: number, until: number, periodMs: number): number | undefined {
  if (spans.some((span) => span.from <= at && span.to + periodMs >= at)) return 0;
  const next = spans.filter((span) => span.from > at && span.from <= until).map((span) => span.from);
  return next.length === 0 ? undefined : Math.min(...next) - at;
}

/** Who is primary at `at` by the participants' own events: whoever's last event by then is `elected`. */
export function primariesAt(events: readonly RoleEvent[], at: number): string[] {
  const last = new Map<string, RoleEvent>();
  for (const event of events) if (event.at <= at) last.set(event.participant, event);
  return [...last.values()].filter((event) => event.event === "elected").map((event) => event.participant);
}

/**
 * From `at` until the role has a primary by the participants' own events: 0 when one is
 * primary at `at` (never demoted, or riding through), else the next `elected` after it;
 * undefined when none comes by `until`.
 */
export function untilPrimary(events: readonly RoleEvent[], at: number, until: number): number | undefined {
  if (primariesAt(events, at).length > 0) return 0;
  const next = events.find((event) => event.event === "elected" && event.at > at && event.at <= until);
  return next === undefined ? undefined : next.at - at;
}

/**
 * The role's holder changes in (from, to], by its participants' own `elected` events: each
 * election of another participant than the one that held the role before is one move. The
 * holder before is the participant of the last election up to `from`.
 */
export function roleMoves(events: readonly RoleEvent[], from: number, to: number): { moves: number; elections: number; holderBefore: string | undefined } {
  const elections = events.filter((event) => event.event === "elected");
  let holder = elections.filter((event) => event.at <= from).at(-1)?.participant;
  const holderBefore = holder;
  let moves = 0;
  let count = 0;
  for (const event of elections) {
    if (event.at <= from || event.at > to) continue;
    count += 1;
    if (holder !== undefined && event.participant !== holder) moves += 1;
    holder = event.participant;
  }
  return { moves, elections: count, holderBefore };
}

import { distribution, msToNs, nsToMs, type Distribution } from "./distribution.js";
import { failoverClass, type FaultKind } from "./fault-plan.js";
import type { LogLine, ParsedLog } from "./log-line.js";
import { byTime, collectWriters, firstAfter, writerKey, type Writer } from "./writers.js";

/** A fault as the harness carried it out, on the same monotonic clock as the log. */
export interface JudgedFault {
  readonly cycle: number;
  readonly kind: FaultKind;
  /** The participant hit, for participant faults. */
  readonly target: string | undefined;
  readonly holdMs: number;
  /** When the first signal was sent. */
  readonly atNs: bigint;
  /** When the fault was healed: SIGCONT sent, or the killed process started (serving) again. */
  readonly healedAtNs: bigint;
}

/** A process that was still running after every `run` had exited. */
export interface Leftover {
  readonly pid: number;
  readonly what: string;
}

/**
 * Something the harness saw happen to a process: `crash` — a `run`, the service or the
 * store exited when nothing had ended it; `stuck` — a `run` sent SIGTERM did not exit in
 * time, or a service did not come back.
 */
export interface Incident {
  readonly kind: "crash" | "stuck";
  readonly what: string;
}

export interface JudgeInput {
  readonly log: ParsedLog;
  readonly faults: readonly JudgedFault[];
  readonly intervalMs: number;
  readonly timeoutMs: number;
  /** Room for process start-up and a loaded machine in the failover and liveness bounds; never in the safety checks. */
  readonly slackMs: number;
  /** When the harness stopped watching, with every fault healed (before it stopped anything). */
  readonly observedUntilNs: bigint;
  readonly leftovers: readonly Leftover[];
  readonly incidents: readonly Incident[];
}

export type ViolationKind =
  | "malformed-line"
  | "no-worker"
  | "epoch-backwards"
  | "overlap"
  | "epoch-reused"
  | "failover-missing"
  | "failover-late"
  | "recovery-late"
  | "not-running-at-end"
  | "orphan"
  | "process-crash"
  | "process-stuck";

export interface Violation {
  readonly kind: ViolationKind;
  readonly message: string;
  readonly cycle?: number;
}

/** What one fault led to. */
export interface FaultOutcome {
  readonly cycle: number;
  readonly kind: FaultKind;
  /** The worker that was running when the fault hit, if it was the target's. */
  readonly hitPrimary: boolean;
  /** Fault → first line of another worker, when the primary was hit and one came before the next fault. */
  readonly failoverMs: number | undefined;
  /** Heal → first line of a worker the fault did not end. */
  readonly recoveryMs: number | undefined;
  /** run SIGKILLed alone: fault → its worker's last line (what the lifeline let through). */
  readonly lifelineMs: number | undefined;
}

export interface Verdict {
  readonly violations: readonly Violation[];
  /** How many violations of each kind there were (the list keeps the first few of each). */
  readonly violationCounts: Partial<Record<ViolationKind, number>>;
  readonly lines: number;
  readonly writers: readonly Writer[];
  readonly spansMs: Distribution | undefined;
  /** Between one worker's last line and the next one's first, over all changes of worker. */
  readonly handoffGapsMs: Distribution | undefined;
  readonly maxGapMs: { readonly ms: number; readonly afterCycle: number | undefined } | undefined;
  readonly outcomes: readonly FaultOutcome[];
  readonly failoverMs: { readonly crash?: Distribution; readonly graceful?: Distribution; readonly pause?: Distribution };
  readonly recoveryMs: Distribution | undefined;
  readonly lifelineMs: Distribution | undefined;
  readonly bounds: { readonly crashMs: number; readonly gracefulMs: number; readonly recoveryMs: number };
}

const KEEP_PER_KIND = 10;

/**
 * A worker writes every few ms: one whose last line before a fault is at most this old was
 * the primary's worker, running when the fault hit (the harness aims with the same rule).
 */
export const FRESH_MS = 250;

/**
 * The judge of a chaos run, outside the system under test: it reads only the workers' log,
 * the fault record and the processes left over. Safety is checked with no slack at all:
 *
 * (a) epochs never go backwards: no line of a lower epoch after a line of a higher one (file order);
 * (b) no two workers in one span: the [first, last] spans of different (pid, epoch) writers
 *     never overlap, not even by a nanosecond;
 * (f) one epoch, one worker: no two worker processes ever write under the same epoch, not
 *     even one after the other (a fencing target could not refuse the first one's late write);
 * (e) no worker or watchdog outlives its `run`; no `run`, service or store exits unasked,
 *     and every `run` stops when asked.
 *
 * Liveness is checked against the protocol's bounds plus `slackMs`:
 *
 * (c) after the primary's group or `run` is killed, another worker starts within T + I;
 *     after a SIGTERM within I; after a pause within T + I if a failover happens, and one
 *     must when the pause lasted T or more;
 * (d) after every heal, and so at the end, a worker runs within T + 2·I; and one is still
 *     running when the run ends.
 */
export function judge(input: JudgeInput): Verdict {
  const { log, intervalMs: I, timeoutMs: T, slackMs } = input;
  const found: Violation[] = [];
  const counts: Partial<Record<ViolationKind, number>> = {};
  const report = (violation: Violation): void => {
    counts[violation.kind] = (counts[violation.kind] ?? 0) + 1;
    if (counts[violation.kind]! <= KEEP_PER_KIND) found.push(violation);
  };
  const bounds = { crashMs: T + I + slackMs, gracefulMs: I + slackMs, recoveryMs: T + 2 * I + slackMs };

  for (const bad of log.malformed) report({ kind: "malformed-line", message: `line ${bad.lineNumber} is not "<epoch> <pid> <ns> <participant>": ${JSON.stringify(bad.text)}` });
  if (log.lines.length === 0) report({ kind: "no-worker", message: "no worker ever wrote a line: nobody was elected" });
  checkEpochOrder(log.lines, report);
  const writers = collectWriters(log.lines);
  const handoffGaps = checkOverlaps(writers, report);
  checkOneWorkerPerEpoch(writers, report);
  for (const leftover of input.leftovers) {
    report({ kind: "orphan", message: `${leftover.what} (pid ${leftover.pid}) was still running after every run had exited` });
  }

  for (const incident of input.incidents) {
    report({ kind: incident.kind === "crash" ? "process-crash" : "process-stuck", message: incident.what });
  }

  const sorted = byTime(log.lines);
  const faults = [...input.faults].sort((a, b) => (a.atNs < b.atNs ? -1 : 1));
  const outcomes = faults.map((fault, index) =>
    judgeFault(fault, faults[index + 1]?.atNs ?? input.observedUntilNs, sorted, writers, bounds, T, report),
  );

  const last = sorted[sorted.length - 1];
  if (last !== undefined && input.observedUntilNs - last.atNs > msToNs(I + slackMs)) {
    report({ kind: "not-running-at-end", message: `no worker wrote in the last ${Math.round(nsToMs(input.observedUntilNs - last.atNs))} ms of the run (allowed: I + slack = ${I + slackMs} ms)` });
  }

  const byClass = (wanted: string): Distribution | undefined =>
    distribution(outcomes.filter((o) => failoverClass(o.kind) === wanted && o.failoverMs !== undefined).map((o) => o.failoverMs!));
  const failoverMs: { -readonly [K in keyof Verdict["failoverMs"]]: Distribution } = {};
  for (const name of ["crash", "graceful", "pause"] as const) {
    const d = byClass(name);
    if (d !== undefined) failoverMs[name] = d;
  }
  return {
    violations: found,
    violationCounts: counts,
    lines: log.lines.length,
    writers,
    spansMs: distribution(writers.map((w) => nsToMs(w.lastNs - w.firstNs))),
    handoffGapsMs: distribution(handoffGaps),
    maxGapMs: maxGap(sorted, faults),
    outcomes,
    failoverMs,
    recoveryMs: distribution(outcomes.filter((o) => o.recoveryMs !== undefined).map((o) => o.recoveryMs!)),
    lifelineMs: distribution(outcomes.filter((o) => o.lifelineMs !== undefined).map((o) => o.lifelineMs!)),
    bounds,
  };
}

/**
 * (a), in file order: the order in which the writes reached the file. One violation per
 * writer that wrote below the highest epoch already written, with how many such lines.
 */
function checkEpochOrder(lines: readonly LogLine[], report: (v: Violation) => void): void {
  let highest: { line: LogLine; index: number } | undefined;
  const stale = new Map<string, { line: LogLine; index: number; above: { line: LogLine; index: number }; count: number }>();
  lines.forEach((line, index) => {
    if (highest !== undefined && line.epoch < highest.line.epoch) {
      const key = writerKey(line);
      const seen = stale.get(key);
      if (seen === undefined) stale.set(key, { line, index, above: highest, count: 1 });
      else seen.count += 1;
    }
    if (highest === undefined || line.epoch > highest.line.epoch) highest = { line, index };
  });
  for (const { line, index, above, count } of stale.values()) {
    report({
      kind: "epoch-backwards",
      message:
        `line ${index + 1} (epoch ${line.epoch}, pid ${line.pid}, ${line.participant}) comes after line ${above.index + 1} of epoch ${above.line.epoch} ` +
        `(pid ${above.line.pid}, ${above.line.participant})${count > 1 ? `, and ${count - 1} more lines of that worker` : ""}`,
    });
  }
}

/** (b): each writer must start strictly after every earlier writer's last line. Returns the hand-off gaps (ms). */
function checkOverlaps(writers: readonly Writer[], report: (v: Violation) => void): number[] {
  const gaps: number[] = [];
  let latest: Writer | undefined; // the earlier writer that ran longest
  for (const writer of writers) {
    if (latest !== undefined) {
      if (writer.firstNs <= latest.lastNs) {
        const end = writer.lastNs < latest.lastNs ? writer.lastNs : latest.lastNs;
        report({
          kind: "overlap",
          message:
            `split brain: ${describe(writer)} started while ${describe(latest)} was still running; ` +
            `both wrote for ${nsToMs(end - writer.firstNs)} ms`,
        });
      } else {
        gaps.push(nsToMs(writer.firstNs - latest.lastNs));
      }
    }
    if (latest === undefined || writer.lastNs > latest.lastNs) latest = writer;
  }
  return gaps;
}

/** (f): every epoch is written by one worker process only. One violation per epoch, naming its workers in order. */
function checkOneWorkerPerEpoch(writers: readonly Writer[], report: (v: Violation) => void): void {
  const byEpoch = new Map<number, Writer[]>();
  for (const writer of writers) byEpoch.set(writer.epoch, [...(byEpoch.get(writer.epoch) ?? []), writer]);
  for (const [epoch, sharing] of byEpoch) {
    if (sharing.length < 2) continue;
    report({
      kind: "epoch-reused",
      message: `epoch ${epoch} names ${sharing.length} worker processes, one after the other: ${sharing.map((w) => `${w.participant}'s pid ${w.pid}`).join(", ")}`,
    });
  }
}

function describe(writer: Writer): string {
  return `${writer.participant}'s worker pid ${writer.pid} (epoch ${writer.epoch})`;
}

/** (c) and (d) for one fault; `until` is when the next fault began. */
function judgeFault(
  fault: JudgedFault,
  until: bigint,
  sorted: readonly LogLine[],
  writers: readonly Writer[],
  bounds: Verdict["bounds"],
  T: number,
  report: (v: Violation) => void,
): FaultOutcome {
  const before = sorted[firstAfter(sorted, fault.atNs) - 1];
  const running = before !== undefined && fault.atNs - before.atNs <= msToNs(FRESH_MS) ? writers.find((w) => w.key === writerKey(before)) : undefined;
  const active = running?.participant === fault.target ? running : undefined;
  const kind = failoverClass(fault.kind);
  const name = `cycle ${fault.cycle} (${fault.kind}${fault.target === undefined ? "" : ` of ${fault.target}`})`;
  let failoverMs: number | undefined;
  if (active !== undefined && kind !== undefined) {
    const next = firstLineOfAnother(sorted, fault.atNs, until, active.key);
    failoverMs = next === undefined ? undefined : nsToMs(next.atNs - fault.atNs);
    const bound = kind === "graceful" ? bounds.gracefulMs : bounds.crashMs;
    const must = kind !== "pause" || fault.holdMs >= T;
    if (failoverMs === undefined && must) {
      report({ kind: "failover-missing", cycle: fault.cycle, message: `${name}: the primary was hit, and no other worker started before the next fault` });
    } else if (failoverMs !== undefined && failoverMs > bound) {
      report({ kind: "failover-late", cycle: fault.cycle, message: `${name}: the next worker started ${failoverMs} ms after the fault (bound ${bound} ms)` });
    }
  }
  // A worker this fault ended does not count as recovery, even if it wrote once more after the heal.
  const ended = active !== undefined && (kind === "crash" || kind === "graceful") ? active.key : undefined;
  const recovered = firstLineOfAnother(sorted, fault.healedAtNs, until, ended);
  const recoveryMs = recovered === undefined ? undefined : nsToMs(recovered.atNs - fault.healedAtNs);
  if (recoveryMs === undefined || recoveryMs > bounds.recoveryMs) {
    report({
      kind: "recovery-late",
      cycle: fault.cycle,
      message: `${name}: ${recoveryMs === undefined ? "no worker ran after the heal before the next fault" : `the first worker after the heal wrote ${recoveryMs} ms after it`} (bound T + 2·I + slack = ${bounds.recoveryMs} ms)`,
    });
  }
  const lifelineMs = fault.kind === "run-kill" && active !== undefined ? nsToMs(active.lastNs - fault.atNs) : undefined;
  return { cycle: fault.cycle, kind: fault.kind, hitPrimary: active !== undefined, failoverMs, recoveryMs, lifelineMs };
}

/** The first line in (from, until) whose writer is not `except`. */
function firstLineOfAnother(sorted: readonly LogLine[], from: bigint, until: bigint, except: string | undefined): LogLine | undefined {
  for (let i = firstAfter(sorted, from); i < sorted.length && sorted[i]!.atNs < until; i += 1) {
    if (writerKey(sorted[i]!) !== except) return sorted[i];
  }
  return undefined;
}

/** The longest time with no line at all, and the cycle whose fault came last before it. */
function maxGap(sorted: readonly LogLine[], faults: readonly JudgedFault[]): Verdict["maxGapMs"] {
  let best: { ms: number; startNs: bigint } | undefined;
  for (let i = 1; i < sorted.length; i += 1) {
    const gap = sorted[i]!.atNs - sorted[i - 1]!.atNs;
    if (best === undefined || nsToMs(gap) > best.ms) best = { ms: nsToMs(gap), startNs: sorted[i - 1]!.atNs };
  }
  if (best === undefined) return undefined;
  const { ms, startNs } = best;
  const before = faults.filter((f) => f.atNs <= startNs + msToNs(ms)).pop();
  return { ms, afterCycle: before?.cycle };
}

import type { Distribution } from "./distribution.js";
import type { ChaosRecord } from "./harness.js";
import type { Verdict } from "./judge.js";
import type { ChaosOptions } from "./options.js";

/** The command line that replays a run's fault schedule. */
export function replayCommand(options: ChaosOptions): string {
  const args = [
    `--seed ${options.seed}`,
    `--cycles ${options.cycles}`,
    `--participants ${options.participants}`,
    `--interval-ms ${options.intervalMs}`,
    `--timeout-ms ${options.timeoutMs}`,
    `--slack-ms ${options.slackMs}`,
    `--store ${options.store}`,
    `--faults ${options.faults.join(",")}`,
    ...(options.plant === undefined ? [] : [`--plant ${options.plant}`]),
  ];
  return `npm run chaos -- ${args.join(" ")}`;
}

function figures(d: Distribution | undefined): string {
  if (d === undefined) return "none measured";
  return `n=${d.count}  min ${d.min}  median ${d.median}  p99 ${d.p99}  max ${d.max} ms`;
}

/** What `npm run chaos` prints at the end. */
export function formatSummary(options: ChaosOptions, record: ChaosRecord, verdict: Verdict): string {
  const { intervalMs: I, timeoutMs: T, slackMs } = options;
  const byKind = new Map<string, number>();
  for (const fault of record.faults) byKind.set(fault.kind, (byKind.get(fault.kind) ?? 0) + 1);
  const hit = record.faults.filter((f) => verdict.outcomes.find((o) => o.cycle === f.cycle)?.hitPrimary).length;
  const lines = [
    "",
    `== chaos summary (seed ${options.seed}${record.interrupted ? ", interrupted" : ""}) ==`,
    `I = ${I} ms, T = ${T} ms, slack ${slackMs} ms; ${options.participants} participants; store: ${options.store}${options.plant === undefined ? "" : `; PLANTED BUG: ${options.plant}`}`,
    `clock: process.hrtime.bigint() (CLOCK_MONOTONIC, one clock for every process); smallest step seen ${record.clock.smallestStepNs} ns, a read takes ~${record.clock.medianReadNs} ns; spans compared with no slack`,
    `cycles: ${record.faults.length} (${hit} hit the primary)   faults: ${[...byKind].map(([kind, n]) => `${kind} ${n}`).join(", ") || "none"}`,
    `first worker: ${record.firstWorkerMs === undefined ? "never" : `${record.firstWorkerMs} ms after the participants started`}`,
    `workers: ${verdict.writers.length} (pid, epoch) spans, ${verdict.lines} lines; span lengths: ${figures(verdict.spansMs)}`,
    `failover after a crash (SIGKILL; bound T + I + slack = ${verdict.bounds.crashMs} ms): ${figures(verdict.failoverMs.crash)}`,
    `failover after SIGTERM (bound I + slack = ${verdict.bounds.gracefulMs} ms): ${figures(verdict.failoverMs.graceful)}`,
    `failover after a pause (SIGSTOP; bound T + I + slack = ${verdict.bounds.crashMs} ms): ${figures(verdict.failoverMs.pause)}`,
    `recovery, heal → a worker runs (bound T + 2·I + slack = ${verdict.bounds.recoveryMs} ms): ${figures(verdict.recoveryMs)}`,
    `lifeline, run SIGKILLed → its worker's last line: ${figures(verdict.lifelineMs)}`,
    `hand-off gap, one worker's last line → the next one's first: ${figures(verdict.handoffGapsMs)}`,
    `max gap without a worker: ${verdict.maxGapMs === undefined ? "n/a" : `${verdict.maxGapMs.ms} ms${verdict.maxGapMs.afterCycle === undefined ? "" : ` (cycle ${verdict.maxGapMs.afterCycle})`}`}`,
  ];
  const total = Object.values(verdict.violationCounts).reduce((sum, n) => sum + n, 0);
  if (total === 0) {
    lines.push("violations: none");
  } else {
    lines.push(`VIOLATIONS: ${total} (${Object.entries(verdict.violationCounts).map(([kind, n]) => `${kind} ${n}`).join(", ")})`);
    for (const violation of verdict.violations) lines.push(`  - [${violation.kind}] ${violation.message}`);
  }
  lines.push(`replay: ${replayCommand(options)}`);
  return lines.join("\n");
}

import { describe, expect, it } from "vitest";
import { FRESH_MS, judge, type JudgeInput, type JudgedFault } from "./judge.js";
import { formatLogLine, parseLog, type LogLine } from "./log-line.js";

/**
 * The judge on synthetic logs: it must pass a clean history and flag each kind of
 * violation it exists for (an overlap of one nanosecond, an epoch going backwards, a
 * missing or late failover, a late recovery, an orphan), or a chaos run that passes
 * proves nothing.
 */
const I = 200;
const T = 2000;
const SLACK = 500;
const MS = 1_000_000n;
const BASE = 5_000_000_000_000n; // an arbitrary monotonic origin, as on a machine up for a while

const at = (ms: number): bigint => BASE + BigInt(Math.round(ms * 1e6));

/** A worker's lines every 3 ms from `fromMs` to `toMs` inclusive. */
function worker(participant: string, pid: number, epoch: number, fromMs: number, toMs: number): LogLine[] {
  const lines: LogLine[] = [];
  for (let ms = fromMs; ms < toMs; ms += 3) lines.push({ epoch, pid, atNs: at(ms), participant });
  lines.push({ epoch, pid, atNs: at(toMs), participant });
  return lines;
}

/** The file the workers would have written: their lines interleaved in time order. */
function fileOf(...workers: LogLine[][]): string {
  return workers
    .flat()
    .sort((a, b) => (a.atNs < b.atNs ? -1 : a.atNs > b.atNs ? 1 : 0))
    .map(formatLogLine)
    .join("");
}

function fault(cycle: number, kind: JudgedFault["kind"], target: string | undefined, atMs: number, healedMs: number, holdMs = healedMs - atMs): JudgedFault {
  return { cycle, kind, target, holdMs, atNs: at(atMs), healedAtNs: at(healedMs) };
}

function run(text: string, faults: JudgedFault[], untilMs: number, extra: Partial<JudgeInput> = {}): ReturnType<typeof judge> {
  return judge({ log: parseLog(text), faults, intervalMs: I, timeoutMs: T, slackMs: SLACK, observedUntilNs: at(untilMs), leftovers: [], incidents: [], ...extra });
}

const kinds = (verdict: ReturnType<typeof judge>): string[] => verdict.violations.map((v) => v.kind);

describe("the chaos judge", () => {
  it("passes a crash failover within T + I and reports its figures", () => {
    // The worker's last line came 2 ms before the SIGKILL: it was the primary's.
    const text = fileOf(worker("p0", 100, 1, 0, 998), worker("p1", 200, 2, 2500, 6000));
    const verdict = run(text, [fault(1, "group-kill", "p0", 1000, 1100)], 6000);
    expect(verdict.violations).toEqual([]);
    expect(verdict.outcomes).toEqual([{ cycle: 1, kind: "group-kill", hitPrimary: true, failoverMs: 1500, recoveryMs: 1400, lifelineMs: undefined }]);
    expect(verdict.failoverMs.crash).toMatchObject({ count: 1, min: 1500, max: 1500 });
    expect(verdict.handoffGapsMs).toMatchObject({ count: 1, min: 1502 });
    expect(verdict.maxGapMs).toEqual({ ms: 1502, afterCycle: 1 });
    expect(verdict.writers.map((w) => [w.participant, w.epoch])).toEqual([["p0", 1], ["p1", 2]]);
  });

  it("flags two successive workers under one epoch, however far apart: one epoch, one worker", () => {
    // p0's command was stopped, and started again in the same term (no overlap, no epoch backwards).
    const text = fileOf(worker("p0", 100, 1, 0, 900), worker("p0", 130, 1, 1500, 3000), worker("p1", 200, 2, 3500, 6000));
    const verdict = run(text, [], 6000);
    expect(kinds(verdict)).toEqual(["epoch-reused"]);
    expect(verdict.violations[0]!.message).toBe("epoch 1 names 2 worker processes, one after the other: p0's pid 100, p0's pid 130");
    // The same history with a new epoch for the second worker passes.
    expect(run(fileOf(worker("p0", 100, 1, 0, 900), worker("p0", 130, 2, 1500, 3000), worker("p1", 200, 3, 3500, 6000)), [], 6000).violations).toEqual([]);
  });

  it("flags two workers writing at the same nanosecond, and passes one a nanosecond later", () => {
    const p0 = worker("p0", 100, 1, 0, 1000);
    const touching = { epoch: 2, pid: 200, atNs: at(1000), participant: "p1" };
    const clash = run(fileOf(p0, [touching], worker("p1", 200, 2, 1003, 2000)), [], 2000);
    expect(kinds(clash)).toEqual(["overlap"]);
    expect(clash.violations[0]!.message).toMatch(/p1's worker pid 200 \(epoch 2\) started while p0's worker pid 100 \(epoch 1\) was still running/);

    const after = { ...touching, atNs: at(1000) + 1n };
    expect(run(fileOf(p0, [after], worker("p1", 200, 2, 1003, 2000)), [], 2000).violations).toEqual([]);
  });

  it("flags a stale worker that writes inside a newer one's span", () => {
    const text = fileOf(worker("p0", 100, 1, 0, 3000), worker("p1", 200, 2, 2000, 5000));
    const verdict = run(text, [], 5000);
    expect(kinds(verdict)).toContain("overlap");
    expect(kinds(verdict)).toContain("epoch-backwards");
    expect(verdict.violations.find((v) => v.kind === "overlap")!.message).toMatch(/both wrote for 1000 ms/);
  });

  it("flags an epoch going backwards in the file even when the spans do not overlap", () => {
    // A line of epoch 2 appended after the lines of epoch 3 (a restored store handing out an old epoch).
    const text = fileOf(worker("p1", 200, 3, 0, 100)) + fileOf(worker("p0", 100, 2, 200, 300));
    const verdict = run(text, [], 300);
    expect(kinds(verdict)).toEqual(["epoch-backwards"]);
    expect(verdict.violations[0]!.message).toMatch(/epoch 2, pid 100, p0\) comes after line \d+ of epoch 3 \(pid 200, p1\), and 34 more lines of that worker/);
  });

  it("flags a crash of the primary that no other worker followed", () => {
    const text = fileOf(worker("p0", 100, 1, 0, 1000), worker("p0", 101, 2, 9700, 12_000));
    const verdict = run(text, [fault(1, "run-kill", "p0", 1000, 1000), fault(2, "serve-stop", undefined, 9500, 9600)], 12_000);
    expect(kinds(verdict)).toEqual(["failover-missing", "recovery-late"]);
    expect(verdict.outcomes[0]).toMatchObject({ hitPrimary: true, failoverMs: undefined, recoveryMs: undefined, lifelineMs: 0 });
  });

  it("flags a failover later than T + I + slack after a crash, and later than I + slack after a SIGTERM", () => {
    const crashBound = T + I + SLACK;
    const late = fileOf(worker("p0", 100, 1, 0, 1000), worker("p1", 200, 2, 1000 + crashBound + 1, 6000));
    expect(kinds(run(late, [fault(1, "group-kill", "p0", 1000, 1000)], 6000))).toEqual(["failover-late"]);
    const inTime = fileOf(worker("p0", 100, 1, 0, 1000), worker("p1", 200, 2, 1000 + crashBound, 6000));
    expect(run(inTime, [fault(1, "group-kill", "p0", 1000, 1000)], 6000).violations).toEqual([]);

    const gracefulBound = I + SLACK;
    const slow = fileOf(worker("p0", 100, 1, 0, 1000), worker("p1", 200, 2, 1000 + gracefulBound + 1, 3000));
    const verdict = run(slow, [fault(1, "run-term", "p0", 1000, 1000)], 3000);
    expect(kinds(verdict)).toEqual(["failover-late"]);
    expect(verdict.violations[0]!.message).toMatch(/cycle 1 \(run-term of p0\): the next worker started 701 ms after the fault \(bound 700 ms\)/);
  });

  it("requires a failover after a pause of T or more, not after a shorter one", () => {
    const text = fileOf(worker("p0", 100, 1, 0, 9000));
    expect(run(text, [fault(1, "group-stop", "p0", 1000, 1000 + T - 1)], 9000).violations).toEqual([]);
    // The worker writing on after a pause of T is itself the split brain the pause makes possible.
    const verdict = run(text, [fault(1, "run-stop", "p0", 1000, 1000 + T)], 9000);
    expect(kinds(verdict)).toEqual(["failover-missing"]);
  });

  it("does not expect a failover when the fault hit a standby, or when no worker had written for FRESH_MS", () => {
    const text = fileOf(worker("p0", 100, 1, 0, 6000));
    const verdict = run(text, [fault(1, "group-kill", "p1", 1000, 1200)], 6000);
    expect(verdict.violations).toEqual([]);
    expect(verdict.outcomes[0]).toMatchObject({ hitPrimary: false, failoverMs: undefined });
    expect(verdict.outcomes[0]!.recoveryMs).toBeLessThan(5);

    const quiet = fileOf(worker("p0", 100, 1, 0, 1000 - FRESH_MS - 1), worker("p1", 200, 2, 9000, 12_000));
    expect(run(quiet, [fault(1, "group-kill", "p0", 1000, 1000), fault(2, "serve-stop", undefined, 8000, 8500)], 12_000).outcomes[0]).toMatchObject({ hitPrimary: false });
  });

  it("does not count a killed worker's last line after the heal as recovery", () => {
    // run SIGKILLed and restarted at once; its worker wrote once more 30 ms later.
    const text = fileOf(worker("p0", 100, 1, 0, 1030), worker("p1", 200, 2, 3000, 6000));
    const verdict = run(text, [fault(1, "run-kill", "p0", 1000, 1000)], 6000);
    expect(verdict.violations).toEqual([]);
    expect(verdict.outcomes[0]).toMatchObject({ failoverMs: 2000, recoveryMs: 2000, lifelineMs: 30 });
  });

  it("flags a recovery later than T + 2·I + slack after the heal", () => {
    const bound = T + 2 * I + SLACK;
    const text = fileOf(worker("p0", 100, 1, 0, 1000), worker("p0", 101, 2, 5000 + bound + 1, 12_000));
    const verdict = run(text, [fault(1, "serve-kill", undefined, 1000, 5000)], 12_000);
    expect(kinds(verdict)).toEqual(["recovery-late"]);
  });

  it("flags a run that ends with nobody working, orphans, crashed or stuck processes, unreadable lines, and an empty log", () => {
    const text = fileOf(worker("p0", 100, 1, 0, 1000)) + "12 34\n";
    const verdict = run(text, [], 1000 + I + SLACK + 1, {
      leftovers: [{ pid: 4242, what: "p0's worker" }],
      incidents: [
        { kind: "crash", what: "serve exited (code 1) when nothing had stopped it" },
        { kind: "stuck", what: "p1 run #2 did not exit within 15000 ms of SIGTERM" },
      ],
    });
    expect(kinds(verdict).sort()).toEqual(["malformed-line", "not-running-at-end", "orphan", "process-crash", "process-stuck"]);
    expect(verdict.violations.find((v) => v.kind === "orphan")!.message).toBe("p0's worker (pid 4242) was still running after every run had exited");
    expect(kinds(run("", [], 1000))).toEqual(["no-worker"]);
  });

  it("keeps ten violations of a kind and counts them all", () => {
    const text = Array.from({ length: 25 }, (_, i) => [
      { epoch: 5, pid: 1, atNs: at(i * 10), participant: "p0" },
      { epoch: 4, pid: 100 + i, atNs: at(i * 10 + 5), participant: "p1" },
    ])
      .flat()
      .map(formatLogLine)
      .join("");
    const verdict = run(text, [], 250);
    expect(verdict.violationCounts["epoch-backwards"]).toBe(25);
    expect(verdict.violations.filter((v) => v.kind === "epoch-backwards")).toHaveLength(10);
  });
});

describe("the chaos log", () => {
  it("leaves out a last line still being written, and reports lines that do not parse", () => {
    const parsed = parseLog(`1 10 ${BASE} p0\nbad line\n2 11 ${BASE + MS} p1\n3 12 ${BASE}`);
    expect(parsed.lines).toEqual([
      { epoch: 1, pid: 10, atNs: BASE, participant: "p0" },
      { epoch: 2, pid: 11, atNs: BASE + MS, participant: "p1" },
    ]);
    expect(parsed.malformed).toEqual([{ lineNumber: 2, text: "bad line" }]);
  });
});

import { describe, expect, it } from "vitest";
import type { CommandExit, StartRequest } from "../../shared/cli/supervise/child-supervisor.js";
import type { CommandSlot } from "../../shared/cli/supervise/lease-bound-command.js";
import { healthChecked, HealthMonitor, type CheckOutcome, type HealthSettings, type Probe, type ProbeResult } from "../../shared/cli/supervise/health-check.js";
import { FakeClock } from "../helpers/fake-clock.js";

/**
 * The health check's schedule and counting (Docker's HEALTHCHECK rules) on a fake clock,
 * with a scripted probe: each run of the check is answered (or left hanging) by the test.
 */
type Step = ProbeResult | "hang" | "hang-then-pass" | "stubborn";

interface Run {
  readonly startedAt: number;
  readonly signal: AbortSignal;
  endedAt: number | undefined;
  answer(result: ProbeResult): void;
}

function setup(settings: Partial<HealthSettings> = {}) {
  const clock = new FakeClock(0);
  const monitor = new HealthMonitor({ intervalMs: 1000, timeoutMs: 500, retries: 3, startPeriodMs: 0, ...settings }, clock);
  const runs: Run[] = [];
  /**
   * Every run answers at once with the next of `script` (then the last one again). "hang"
   * answers only when killed (exit 137, as SIGKILL), "hang-then-pass" answers 0 when killed
   * (it finished in the same instant), "stubborn" not even then: the test answers it.
   */
  let script: Step[] = [{ exitCode: 0, output: "" }];
  const probe: Probe = (signal) =>
    new Promise<ProbeResult>((resolve) => {
      const run: Run = {
        startedAt: clock.now(),
        signal,
        endedAt: undefined,
        answer: (result) => {
          run.endedAt ??= clock.now();
          resolve(result);
        },
      };
      runs.push(run);
      const next = script.length > 1 ? script.shift()! : script[0]!;
      // Killing it ends it, as SIGKILL to its group does.
      if (next === "hang") signal.addEventListener("abort", () => run.answer({ exitCode: 137, output: "killed" }), { once: true });
      else if (next === "hang-then-pass") signal.addEventListener("abort", () => run.answer(PASS), { once: true });
      else if (next !== "stubborn") run.answer(next);
    });
  const checked: CheckOutcome[] = [];
  const unhealthy: CheckOutcome[] = [];
  const begin = (): void => monitor.begin(probe, { checked: (o) => void checked.push(o), unhealthy: (o) => void unhealthy.push(o) });
  return {
    clock,
    monitor,
    runs,
    checked,
    unhealthy,
    begin,
    script: (next: Step[]) => (script = next),
  };
}
const FAIL = { exitCode: 1, output: "  disk full \n" };
const PASS = { exitCode: 0, output: "ok" };

describe("HealthMonitor: Docker's HEALTHCHECK rules on an injected clock", () => {
  it("runs the first check one interval after the command started, then one interval after each check ends", async () => {
    const { clock, runs, begin } = setup();
    begin();
    await clock.advance(999);
    expect(runs).toHaveLength(0);
    await clock.advance(1);
    expect(runs.map((r) => r.startedAt)).toEqual([1000]);
    await clock.advance(2000);
    expect(runs.map((r) => r.startedAt)).toEqual([1000, 2000, 3000]);
  });

  it("counts consecutive failures: unhealthy at `retries`, with the last check's output trimmed and exit code, and no check after that", async () => {
    const { clock, runs, checked, unhealthy, begin, script, monitor } = setup();
    script([FAIL]);
    begin();
    await clock.advance(2000);
    expect(checked.map((o) => o.failures)).toEqual([1, 2]);
    expect(unhealthy).toEqual([]);
    await clock.advance(1000);
    expect(unhealthy).toEqual([{ healthy: false, exitCode: 1, timedOut: false, output: "disk full", failures: 3, counted: true }]);
    expect(monitor.watching).toBe(false);
    await clock.advance(10_000);
    expect(runs).toHaveLength(3);
  });

  it("a pass resets the count: failures that are not consecutive never make it unhealthy", async () => {
    const { clock, checked, unhealthy, begin, script } = setup();
    script([FAIL, FAIL, PASS, FAIL, FAIL, PASS, FAIL, FAIL, PASS]);
    begin();
    await clock.advance(9000);
    expect(checked.map((o) => o.failures)).toEqual([1, 2, 0, 1, 2, 0, 1, 2, 0]);
    expect(unhealthy).toEqual([]);
  });

  it("a check still running at the timeout is killed and counts as a failure, keeping what it wrote", async () => {
    const { clock, runs, checked, unhealthy, begin, script } = setup({ retries: 2 });
    script(["hang"]);
    begin();
    await clock.advance(1000);
    expect(runs[0]!.signal.aborted).toBe(false);
    await clock.advance(499);
    expect(runs[0]!.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(runs[0]!.signal.aborted).toBe(true);
    expect(checked[0]).toEqual({ healthy: false, exitCode: undefined, timedOut: true, output: "killed", failures: 1, counted: true });
    // The next one interval after the killed one ended.
    await clock.advance(1000);
    expect(runs.map((r) => r.startedAt)).toEqual([1000, 2500]);
    await clock.advance(500);
    expect(unhealthy).toMatchObject([{ timedOut: true, failures: 2 }]);
  });

  it("a check that exits 0 but only after the timeout is a failure", async () => {
    const { clock, runs, checked, begin, script } = setup();
    script(["hang-then-pass"]);
    begin();
    await clock.advance(1500);
    expect(runs[0]!.signal.aborted).toBe(true);
    expect(checked[0]).toMatchObject({ healthy: false, timedOut: true, exitCode: undefined, failures: 1 });
  });

  it("failures of checks started inside the start period do not count, those after it do", async () => {
    const { clock, checked, unhealthy, begin, script } = setup({ startPeriodMs: 2500 });
    script([FAIL]);
    begin();
    await clock.advance(2000);
    // Started at 1000 and 2000: inside the start period.
    expect(checked.map((o) => [o.counted, o.failures])).toEqual([
      [false, 0],
      [false, 0],
    ]);
    await clock.advance(3000);
    expect(checked.map((o) => o.failures)).toEqual([0, 0, 1, 2, 3]);
    expect(unhealthy).toHaveLength(1);
  });

  it("inside the start period, failures count once a check has passed (Docker: the command has started)", async () => {
    const { clock, checked, begin, script } = setup({ startPeriodMs: 60_000 });
    script([FAIL, PASS, FAIL, FAIL]);
    begin();
    await clock.advance(4000);
    expect(checked.map((o) => [o.counted, o.failures])).toEqual([
      [false, 0],
      [false, 0],
      [true, 1],
      [true, 2],
    ]);
  });

  it("never overlaps: a check longer than the interval delays the next one until it ends", async () => {
    const { clock, runs, begin, script } = setup({ intervalMs: 100, timeoutMs: 10_000 });
    script(["hang"]);
    begin();
    await clock.advance(100);
    await clock.advance(5000);
    expect(runs).toHaveLength(1);
    runs[0]!.answer(PASS);
    await clock.advance(100);
    expect(runs.map((r) => r.startedAt)).toEqual([100, 5200]);
    expect(runs[0]!.endedAt).toBe(5100);
  });

  it("end() stops at once: the running check is killed, no check follows, and its result counts for nothing", async () => {
    const { clock, runs, checked, unhealthy, begin, script, monitor } = setup({ retries: 1 });
    script(["hang"]);
    begin();
    await clock.advance(1000);
    monitor.end();
    expect(runs[0]!.signal.aborted).toBe(true);
    await monitor.whenIdle();
    await clock.advance(10_000);
    expect(runs).toHaveLength(1);
    expect(checked).toEqual([]);
    expect(unhealthy).toEqual([]);
  });

  it("end() before the first check: no check runs at all", async () => {
    const { clock, runs, begin, monitor } = setup();
    begin();
    await clock.advance(500);
    monitor.end();
    await clock.advance(10_000);
    expect(runs).toEqual([]);
  });

  it("a new watch (the next term's command) never overlaps a check of the last one that is still dying, and counts afresh", async () => {
    const { clock, runs, checked, begin, script, monitor } = setup({ intervalMs: 100, timeoutMs: 10_000 });
    script([FAIL, "stubborn"]);
    begin();
    await clock.advance(200);
    expect(runs).toHaveLength(2);
    monitor.end();
    expect(runs[1]!.signal.aborted).toBe(true);
    script([FAIL]);
    begin();
    // Its first check is due at 300, but the killed one has not died yet.
    await clock.advance(500);
    expect(runs).toHaveLength(2);
    runs[1]!.answer(PASS);
    await clock.advance(0);
    expect(runs.map((r) => r.startedAt)).toEqual([100, 200, 700]);
    // The dead watch's late pass counted for nothing; the new watch counts from zero.
    expect(checked.map((o) => o.failures)).toEqual([1, 1]);
  });
});

/** A command slot that only records: running from start() until the test ends it. */
function fakeSlot(onExit: (exit: CommandExit) => void) {
  const slot = {
    state: "idle" as "idle" | "running" | "stopping",
    term: undefined as string | undefined,
    start(request: StartRequest) {
      slot.state = "running";
      slot.term = request.term;
    },
    keepUntil: () => undefined,
    stop() {
      slot.state = "stopping";
    },
    whenIdle: () => Promise.resolve(),
    exits() {
      slot.state = "idle";
      onExit({ pid: 1, code: 0, signal: null, exitCode: 0, requested: false });
    },
  };
  return slot;
}

describe("healthChecked: the check watches exactly while a command runs", () => {
  const request: StartRequest = { env: { HA_EPOCH: "3" }, term: "u#3", epoch: 3, killBy: 10_000 };

  function wrapped() {
    const { monitor } = setup();
    let inner: ReturnType<typeof fakeSlot> | undefined;
    const exits: CommandExit[] = [];
    const requests: StartRequest[] = [];
    const slot: CommandSlot = healthChecked(
      (onExit) => (inner = fakeSlot(onExit)),
      monitor,
      (started) => {
        requests.push(started);
        return { probe: () => Promise.resolve({ exitCode: 0, output: "" }), listener: { unhealthy: () => undefined } };
      },
    )((exit) => void exits.push(exit));
    return { monitor, slot, inner: () => inner!, exits, requests };
  }

  it("begins when the command starts, with that term's request (its environment)", () => {
    const { monitor, slot, requests } = wrapped();
    expect(monitor.watching).toBe(false);
    slot.start(request);
    expect(monitor.watching).toBe(true);
    expect(requests).toEqual([request]);
  });

  it("ends as soon as the command is asked to stop, whatever the reason", () => {
    const { monitor, slot, inner } = wrapped();
    slot.start(request);
    slot.stop(0, "the lease term it ran for is over");
    expect(monitor.watching).toBe(false);
    expect(inner().state).toBe("stopping");
  });

  it("ends when the command's group is gone on its own, and passes the exit on", () => {
    const { monitor, slot, inner, exits } = wrapped();
    slot.start(request);
    inner().exits();
    expect(monitor.watching).toBe(false);
    expect(exits).toHaveLength(1);
  });
});

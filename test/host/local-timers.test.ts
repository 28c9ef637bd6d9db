import { describe, expect, it } from "vitest";
import { startLocalTimers } from "../../shared/host/local-timers.js";
import type { Runtime } from "../../shared/http/runtime.js";
import type { TimerOperation } from "../../shared/http/timer.js";
import { FakeClock } from "../helpers/fake-clock.js";

const runtime = {} as Runtime;

describe("the local host's timers (what Azure does for the sweepMembers timer trigger)", () => {
  it("runs a timer at once and then every period, on the injected clock", async () => {
    const clock = new FakeClock(0);
    const runs: number[] = [];
    const timer: TimerOperation = { name: "t", handler: async () => void runs.push(clock.now()) };
    const timers = startLocalTimers({ timers: [timer], runtime: async () => runtime, periodMs: 500, log: () => undefined, clock });
    await clock.advance(1600);
    expect(runs).toEqual([0, 500, 1000, 1500]);
    await timers.close();
    await clock.advance(2000);
    expect(runs).toHaveLength(4);
  });

  it("never overlaps two runs of one timer: a run still going makes the next one skip, and close() waits for it", async () => {
    const clock = new FakeClock(0);
    let started = 0;
    let release: () => void = () => undefined;
    const timer: TimerOperation = {
      name: "slow",
      handler: () => {
        started += 1;
        return new Promise<void>((resolve) => (release = resolve));
      },
    };
    const timers = startLocalTimers({ timers: [timer], runtime: async () => runtime, periodMs: 100, log: () => undefined, clock });
    await clock.advance(450);
    expect(started).toBe(1);
    release();
    await clock.advance(100);
    expect(started).toBe(2);
    let closed = false;
    const closing = timers.close().then(() => (closed = true));
    await clock.advance(0);
    expect(closed).toBe(false);
    release();
    await closing;
    expect(closed).toBe(true);
  });

  it("logs a failed run and keeps the timer going", async () => {
    const clock = new FakeClock(0);
    const logged: string[] = [];
    let runs = 0;
    const timer: TimerOperation = {
      name: "sweepMembers",
      handler: async () => {
        runs += 1;
        throw new Error("Could not list every group in Azure Table Storage (HTTP 503).");
      },
    };
    const timers = startLocalTimers({ timers: [timer], runtime: async () => runtime, periodMs: 100, log: (level, message) => logged.push(`${level}: ${message}`), clock });
    await clock.advance(250);
    await timers.close();
    expect(runs).toBe(3);
    expect(logged[0]).toBe("warn: sweepMembers: Could not list every group in Azure Table Storage (HTTP 503).");
  });
});

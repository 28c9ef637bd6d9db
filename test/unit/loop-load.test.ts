import { describe, expect, it } from "vitest";
import { LoopLoad } from "../../shared/service/loop-load.js";
import { AdmissionGate, LOAD_SHED_MIN_AT_HAND } from "../../shared/service/admission.js";
import { OverloadedError } from "../../shared/service/overloaded-error.js";
import { FakeClock } from "../helpers/fake-clock.js";

/**
 * LoopLoad samples, every period, the event loop's cumulative active time (utilization: wall
 * time, descheduled time included) and the process's cumulative CPU time (all threads, only
 * time it ran); a sample is busy for the smaller of the two deltas, and busyFraction() is
 * busy ÷ elapsed over the last window. Here both sources are the test's to set.
 */
describe("LoopLoad (injected clock, loop active time and CPU time)", () => {
  const setUp = (): { clock: FakeClock; used: { active: number; cpu: number }; load: LoopLoad } => {
    const clock = new FakeClock();
    const used = { active: 0, cpu: 0 };
    const load = new LoopLoad({ clock, periodMs: 100, windowSamples: 5, activeMs: () => used.active, cpuMs: () => used.cpu }).start();
    return { clock, used, load };
  };

  /** Advances `samples` periods with the loop active `active` of each and the process on a CPU `cpu` of each. */
  const run = async (clock: FakeClock, used: { active: number; cpu: number }, samples: number, active: number, cpu = active): Promise<void> => {
    for (let i = 0; i < samples; i += 1) {
      used.active += 100 * active;
      used.cpu += 100 * cpu;
      await clock.advance(100);
    }
  };

  it("knows nothing until a whole window has been sampled, so start-up work is never taken for load", async () => {
    const { clock, used, load } = setUp();
    expect(load.busyFraction()).toBeUndefined();
    await run(clock, used, 4, 1);
    expect(load.busyFraction()).toBeUndefined();
    await run(clock, used, 1, 1);
    expect(load.busyFraction()).toBe(1);
    load.stop();
  });

  it("reads a loop saturated by its own work (active all the time, on a CPU all the time) as busy", async () => {
    const { clock, used, load } = setUp();
    await run(clock, used, 5, 1, 1);
    expect(load.busyFraction()).toBe(1);
    load.stop();
  });

  it("a CPU hog beside: the loop reads 100 % active but ran 40 % of the time, so it was busy 0.4", async () => {
    const { clock, used, load } = setUp();
    await run(clock, used, 5, 1, 0.4);
    expect(load.busyFraction()).toBeCloseTo(0.4, 10);
    load.stop();
  });

  it("helper threads (garbage collection, libuv's pool) lift CPU time above the loop's: the loop's active time bounds it", async () => {
    const { clock, used, load } = setUp();
    await run(clock, used, 5, 0.3, 1.6);
    expect(load.busyFraction()).toBeCloseTo(0.3, 10);
    load.stop();
  });

  it("reads the share of the last window the loop was busy, forgetting older samples", async () => {
    const { clock, used, load } = setUp();
    await run(clock, used, 5, 0.2);
    expect(load.busyFraction()).toBeCloseTo(0.2, 10);
    await run(clock, used, 3, 1);
    expect(load.busyFraction()).toBeCloseTo((2 * 0.2 + 3 * 1) / 5, 10);
    await run(clock, used, 5, 0.95);
    expect(load.busyFraction()).toBeCloseTo(0.95, 10);
    load.stop();
  });

  it("weighs a late sample (a saturated loop fires its timer late) by the time it covers", async () => {
    const { clock, used, load } = setUp();
    await run(clock, used, 5, 0);
    // The loop runs for 400 ms straight; the overdue sample then covers all of it, and the
    // window is four idle periods and those 400 busy ms: 400 of 800.
    clock.pause(400);
    used.active += 400;
    used.cpu += 400;
    await clock.advance(0);
    expect(load.busyFraction()).toBeCloseTo(400 / 800, 10);
    load.stop();
  });

  it("stop() forgets the window and leaves no timer; start() is idempotent", async () => {
    const { clock, used, load } = setUp();
    load.start();
    await run(clock, used, 5, 1);
    load.stop();
    expect(load.busyFraction()).toBeUndefined();
    await run(clock, used, 10, 1);
    expect(load.busyFraction()).toBeUndefined();
  });

  it("refuses a period or window that is not a positive whole number", () => {
    expect(() => new LoopLoad({ periodMs: 0 })).toThrow(/periodMs.*positive integer.*got 0/);
    expect(() => new LoopLoad({ windowSamples: 1.5 })).toThrow(/windowSamples.*got 1.5/);
  });

  it("by default reads this process's real sources: busy is a fraction once a window has passed", async () => {
    const clock = new FakeClock();
    const load = new LoopLoad({ clock, periodMs: 100, windowSamples: 1 }).start();
    await clock.advance(100);
    const busy = load.busyFraction();
    expect(busy).toBeGreaterThanOrEqual(0);
    expect(busy).toBeLessThanOrEqual(1);
    load.stop();
  });
});

describe("the busy rule reads LoopLoad: a CPU hog beside a process that keeps up causes no refusal", () => {
  /** A gate with the busy rule at 90 % (the delay rule off) reading a LoopLoad fed a window of `active` and `cpu`, LOAD_SHED_MIN_AT_HAND polls holding slots. */
  const gateAfter = async (active: number, cpu: number): Promise<{ gate: AdmissionGate; load: LoopLoad }> => {
    const clock = new FakeClock();
    const used = { active: 0, cpu: 0 };
    const load = new LoopLoad({ clock, periodMs: 100, windowSamples: 5, activeMs: () => used.active, cpuMs: () => used.cpu }).start();
    for (let i = 0; i < 5; i += 1) {
      used.active += 100 * active;
      used.cpu += 100 * cpu;
      await clock.advance(100);
    }
    const gate = new AdmissionGate({ maxInFlight: 64, maxQueued: 256, shedBusyFraction: 0.9, shedDelayMs: undefined }, 1, {
      busyFraction: () => load.busyFraction(),
      delayMs: () => undefined,
    });
    for (let i = 0; i < LOAD_SHED_MIN_AT_HAND; i += 1) await gate.enter("other");
    return { gate, load };
  };

  it("loop 100 % active, process on a CPU 40 % of the time (a hog holds the rest): a poll is admitted", async () => {
    const { gate, load } = await gateAfter(1, 0.4);
    await expect(gate.enter("other")).resolves.toBeTypeOf("function");
    load.stop();
  });

  it("loop 100 % active and on a CPU all the time (saturated by its own work): a poll is refused as busy", async () => {
    const { gate, load } = await gateAfter(1, 1);
    await expect(gate.enter("other")).rejects.toThrow(OverloadedError);
    await expect(gate.enter("other")).rejects.toThrow(/busy running its own work 100 % of the last half second; the limit is 90 %/);
    load.stop();
  });
});

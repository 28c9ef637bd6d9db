import { describe, expect, it } from "vitest";
import { LoopLoad } from "../../shared/http/loop-load.js";
import { FakeClock } from "../helpers/fake-clock.js";

/**
 * LoopLoad samples the event loop's cumulative busy time every period; busyFraction() is
 * busy ÷ elapsed over the last window. Here the busy time is the test's to set.
 */
describe("LoopLoad (injected clock and busy time)", () => {
  const setUp = (): { clock: FakeClock; busy: { ms: number }; load: LoopLoad } => {
    const clock = new FakeClock();
    const busy = { ms: 0 };
    const load = new LoopLoad({ clock, periodMs: 100, windowSamples: 5, activeMs: () => busy.ms }).start();
    return { clock, busy, load };
  };

  /** Advances `samples` periods with the loop busy `fraction` of each. */
  const run = async (clock: FakeClock, busy: { ms: number }, samples: number, fraction: number): Promise<void> => {
    for (let i = 0; i < samples; i += 1) {
      busy.ms += 100 * fraction;
      await clock.advance(100);
    }
  };

  it("knows nothing until a whole window has been sampled, so start-up work is never taken for load", async () => {
    const { clock, busy, load } = setUp();
    expect(load.busyFraction()).toBeUndefined();
    await run(clock, busy, 4, 1);
    expect(load.busyFraction()).toBeUndefined();
    await run(clock, busy, 1, 1);
    expect(load.busyFraction()).toBe(1);
    load.stop();
  });

  it("reads the share of the last window the loop was busy, forgetting older samples", async () => {
    const { clock, busy, load } = setUp();
    await run(clock, busy, 5, 0.2);
    expect(load.busyFraction()).toBeCloseTo(0.2, 10);
    await run(clock, busy, 3, 1);
    expect(load.busyFraction()).toBeCloseTo((2 * 0.2 + 3 * 1) / 5, 10);
    await run(clock, busy, 5, 0.95);
    expect(load.busyFraction()).toBeCloseTo(0.95, 10);
    load.stop();
  });

  it("weighs a late sample (a saturated loop fires its timer late) by the time it covers", async () => {
    const { clock, busy, load } = setUp();
    await run(clock, busy, 5, 0);
    // The loop is busy for 400 ms straight; the overdue sample then covers all of it, and
    // the window is four idle periods and those 400 busy ms: 400 of 800.
    clock.pause(400);
    busy.ms += 400;
    await clock.advance(0);
    expect(load.busyFraction()).toBeCloseTo(400 / 800, 10);
    load.stop();
  });

  it("stop() forgets the window and leaves no timer; start() is idempotent", async () => {
    const { clock, busy, load } = setUp();
    load.start();
    await run(clock, busy, 5, 1);
    load.stop();
    expect(load.busyFraction()).toBeUndefined();
    await run(clock, busy, 10, 1);
    expect(load.busyFraction()).toBeUndefined();
  });

  it("refuses a period or window that is not a positive whole number", () => {
    expect(() => new LoopLoad({ periodMs: 0 })).toThrow(/periodMs.*positive integer.*got 0/);
    expect(() => new LoopLoad({ windowSamples: 1.5 })).toThrow(/windowSamples.*got 1.5/);
  });
});

import { describe, expect, it } from "vitest";
import { LoopLag } from "../../shared/service/loop-lag.js";
import { FakeClock } from "../helpers/fake-clock.js";

/**
 * LoopLag arms a timer every period and measures how late it fires; delayMs() is the mean
 * lateness over the last window. On the FakeClock a timer fires on time unless the test
 * pauses the clock first: the pause is the loop running something else for that long.
 */
describe("LoopLag (injected clock)", () => {
  const setUp = (): { clock: FakeClock; lag: LoopLag } => {
    const clock = new FakeClock();
    const lag = new LoopLag({ clock, periodMs: 20, windowMs: 500 }).start();
    return { clock, lag };
  };

  /** `turns` loop turns in which the sampling timer is due after 20 ms and fires `lateMs` later. */
  const run = async (clock: FakeClock, turns: number, lateMs: number): Promise<void> => {
    for (let turn = 0; turn < turns; turn += 1) {
      await clock.advance(19);
      clock.pause(1 + lateMs);
      await clock.advance(0);
    }
  };

  it("knows nothing until a whole window has passed, so start-up work is never taken for load", async () => {
    const { clock, lag } = setUp();
    await run(clock, 1, 300);
    expect(lag.delayMs()).toBeUndefined();
    await run(clock, 10, 0);
    expect(lag.delayMs()).toBeGreaterThan(0);
    lag.stop();
  });

  it("reads a loop on time as no delay, however much of its time other processes take (nothing here counts CPU time)", async () => {
    const { clock, lag } = setUp();
    await run(clock, 50, 0);
    expect(lag.delayMs()).toBe(0);
    // A CPU hog beside: the scheduler runs a timer a few milliseconds late.
    await run(clock, 50, 3);
    expect(lag.delayMs()).toBe(3);
    lag.stop();
  });

  it("reads a saturated loop, every turn late, as that delay, and forgets it a window after it ends", async () => {
    const { clock, lag } = setUp();
    await run(clock, 30, 0);
    await run(clock, 5, 280); // turns of 300 ms: 1.5 s
    expect(lag.delayMs()).toBe(280);
    await run(clock, 10, 0); // 200 ms on time: the window still holds late turns
    expect(lag.delayMs()).toBeGreaterThan(0);
    await run(clock, 30, 0);
    expect(lag.delayMs()).toBe(0);
    lag.stop();
  });

  it("reads a lone stall (a garbage collection) among turns on time as a small mean, not as load", async () => {
    const { clock, lag } = setUp();
    await run(clock, 30, 0);
    await run(clock, 1, 150);
    await run(clock, 15, 0);
    const delay = lag.delayMs() ?? Number.NaN;
    expect(delay).toBeGreaterThan(0);
    expect(delay).toBeLessThan(15);
    lag.stop();
  });

  it("counts the turn still running: a long turn is seen before it ends, not only after", async () => {
    const { clock, lag } = setUp();
    await run(clock, 30, 0);
    await clock.advance(19);
    clock.pause(201); // the sample due 1 ms in is 200 ms overdue, and has not fired
    // The window (500 ms back from now, 220 ms after the last sample) holds 15 samples on time, and this one.
    expect(lag.delayMs()).toBeCloseTo(200 / 16, 10);
    lag.stop();
  });

  it("reads a process stopped for seconds as that delay when it resumes, one sample standing for the stall", async () => {
    const { clock, lag } = setUp();
    await run(clock, 30, 0);
    await run(clock, 1, 4_000);
    expect(lag.delayMs()).toBe(4_000);
    lag.stop();
  });

  it("stops sampling on stop(), and starts again afresh", async () => {
    const { clock, lag } = setUp();
    await run(clock, 30, 100);
    lag.stop();
    expect(lag.delayMs()).toBeUndefined();
    lag.start();
    expect(lag.delayMs()).toBeUndefined();
    await run(clock, 30, 0);
    expect(lag.delayMs()).toBe(0);
    lag.stop();
  });

  it("refuses a period or window that is not a positive whole number of milliseconds", () => {
    expect(() => new LoopLag({ periodMs: 0 })).toThrow(/periodMs.*positive integer.*got 0/);
    expect(() => new LoopLag({ windowMs: 1.5 })).toThrow(/windowMs.*got 1.5/);
    expect(() => new LoopLag({ periodMs: 50, windowMs: 20 })).toThrow(/windowMs.*at least periodMs, 50/);
  });
});

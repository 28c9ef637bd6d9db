import { describe, expect, it } from "vitest";
import { clockOn, type Timers } from "../../shared/sdk/elector-clock.js";

/** Timers a test fires by hand, as early or as late as it likes. */
function handTimers(): Timers<number> & { armed: Map<number, { callback: () => void; delayMs: number }>; fire(handle: number): void } {
  let next = 0;
  const armed = new Map<number, { callback: () => void; delayMs: number }>();
  return {
    armed,
    setTimeout: (callback, delayMs) => {
      next += 1;
      armed.set(next, { callback, delayMs });
      return next;
    },
    clearTimeout: (handle) => void armed.delete(handle),
    fire(handle) {
      const timer = armed.get(handle);
      armed.delete(handle);
      timer?.callback();
    },
  };
}

describe("clockOn", () => {
  it("never runs a callback before its delay has passed on now(), though the timer under it fires early", () => {
    let now = 1000.4;
    const timers = handTimers();
    const clock = clockOn(() => now, timers);
    let calls = 0;
    clock.setTimeout(() => (calls += 1), 998.1);
    expect([...timers.armed.values()].map((timer) => timer.delayMs)).toEqual([999]);

    // The event loop's coarse, cached time lets the timer fire 2.3 ms before the delay has passed.
    now = 1996.2;
    timers.fire(1);
    expect(calls).toBe(0);
    expect([...timers.armed.entries()].map(([handle, timer]) => [handle, timer.delayMs])).toEqual([[2, 3]]);

    now = 1998.5;
    timers.fire(2);
    expect(calls).toBe(1);
    expect(timers.armed.size).toBe(0);
  });

  it("runs a timer that fires on time or late at once, arming nothing more", () => {
    let now = 0;
    const timers = handTimers();
    const clock = clockOn(() => now, timers);
    let calls = 0;
    clock.setTimeout(() => (calls += 1), 50);
    now = 57;
    timers.fire(1);
    expect(calls).toBe(1);
    expect(timers.armed.size).toBe(0);
  });

  it("clears the timer armed again for the rest, not only the first", () => {
    let now = 0;
    const timers = handTimers();
    const clock = clockOn(() => now, timers);
    let calls = 0;
    const handle = clock.setTimeout(() => (calls += 1), 100);
    now = 98;
    timers.fire(1);
    expect(timers.armed.size).toBe(1);
    clock.clearTimeout(handle);
    expect(timers.armed.size).toBe(0);
    expect(calls).toBe(0);
  });

  it("takes a negative or fractional delay as the process's timers can", () => {
    const now = 0;
    const timers = handTimers();
    const clock = clockOn(() => now, timers);
    clock.setTimeout(() => undefined, -5);
    clock.setTimeout(() => undefined, 0.2);
    expect([...timers.armed.values()].map((timer) => timer.delayMs)).toEqual([0, 1]);
  });
});

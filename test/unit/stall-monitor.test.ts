import { describe, expect, it } from "vitest";
import { StallMonitor } from "../../shared/service/stall-monitor.js";
import { FakeClock } from "../helpers/fake-clock.js";

/**
 * A frozen process cannot see when its queued requests arrived. The monitor ticks every
 * period on a monotonic clock; a gap much larger than the period means the process was not
 * running, and a request reaching the handlers during or right after it is treated as
 * having arrived when the gap began.
 */
describe("StallMonitor (injected monotonic clock and timers)", () => {
  const start = (): { clock: FakeClock; monitor: StallMonitor } => {
    const clock = new FakeClock();
    return { clock, monitor: new StallMonitor({ clock, periodMs: 100 }).start() };
  };

  it("a request is taken to arrive when it reaches the handlers while the process runs normally", async () => {
    const { clock, monitor } = start();
    await clock.advance(5000);
    expect(monitor.arrivalOf()).toBe(clock.now());
    // A lag of a few periods (a GC, a busy loop) is not a stall.
    clock.pause(250);
    expect(monitor.arrivalOf()).toBe(clock.now());
    monitor.stop();
  });

  it("during a gap the timer has not seen yet (I/O runs first after SIGCONT), arrival is the last tick", async () => {
    const { clock, monitor } = start();
    await clock.advance(1000);
    const lastTick = clock.now();
    clock.pause(3000);
    expect(monitor.arrivalOf()).toBe(lastTick);
    monitor.stop();
  });

  it("right after the timer saw a gap, arrival is the gap's start; after the grace it is the present again", async () => {
    const { clock, monitor } = start();
    await clock.advance(1000);
    const lastTick = clock.now();
    clock.pause(3000);
    await clock.advance(0); // the overdue tick fires on resume and records the gap
    expect(monitor.arrivalOf()).toBe(lastTick);
    await clock.advance(monitor.graceMs);
    expect(monitor.arrivalOf()).toBe(lastTick);
    await clock.advance(1);
    expect(monitor.arrivalOf()).toBe(clock.now());
    monitor.stop();
  });

  it("while the process works off what queued (its ticks still late, as on a busy machine), the grace runs on", async () => {
    const { clock, monitor } = start();
    await clock.advance(1000);
    const lastTick = clock.now();
    clock.pause(3000);
    await clock.advance(0); // the gap is seen
    // Five turns of catching up, each tick 250 ms after the last: together past the grace.
    for (let turn = 0; turn < 5; turn += 1) {
      clock.pause(240);
      expect(monitor.arrivalOf(), `turn ${turn}, before its tick`).toBe(lastTick);
      clock.pause(10);
      await clock.advance(0);
      expect(monitor.arrivalOf(), `turn ${turn}`).toBe(lastTick);
    }
    // On time again: the grace runs out 200 ms after the last late tick.
    await clock.advance(monitor.graceMs);
    expect(monitor.arrivalOf()).toBe(lastTick);
    await clock.advance(1);
    expect(monitor.arrivalOf()).toBe(clock.now());
    monitor.stop();
  });

  it("a loop that stays saturated after a short stall (every tick late) does not backdate its requests further and further", async () => {
    const { clock, monitor } = start();
    await clock.advance(1000);
    clock.pause(400); // a stall of 400 ms
    await clock.advance(0);
    // Then ticks 190 ms apart for 4 s: late, but none a stall of its own.
    for (let turn = 0; turn < 20; turn += 1) {
      clock.pause(190);
      await clock.advance(0);
      // Catching up lasts no longer than the stall did, then the grace: within 1 s it is over.
      if (turn >= 5) expect(monitor.arrivalOf(), `turn ${turn}`).toBe(clock.now());
    }
    monitor.stop();
  });

  it("a monitor that is not running claims nothing; start is idempotent and stop clears its timer", async () => {
    const clock = new FakeClock();
    const monitor = new StallMonitor({ clock, periodMs: 100 });
    clock.pause(10_000);
    expect(monitor.arrivalOf()).toBe(clock.now());
    monitor.start().start();
    monitor.stop();
    clock.pause(10_000);
    expect(monitor.arrivalOf()).toBe(clock.now());
    await clock.advance(1000); // no timer of the monitor is left to fire
  });

  it("defaults to what docs/protocol.md states: a tick every 100 ms, a stall past 300 ms, 200 ms of grace", () => {
    expect(new StallMonitor()).toMatchObject({ periodMs: 100, stallThresholdMs: 300, graceMs: 200 });
  });

  it("refuses a period that is not a positive integer, naming the option", () => {
    expect(() => new StallMonitor({ periodMs: 0 })).toThrow(/`periodMs`/);
    expect(() => new StallMonitor({ periodMs: 2.5 })).toThrow(/`periodMs`/);
  });
});

import { describe, expect, it } from "vitest";
import type { TimerHandle } from "../../shared/sdk/loop/elector-clock.js";
import { DeadlineAlarm } from "../../shared/sdk/election/deadline-alarm.js";
import { FakeClock } from "../helpers/fake-clock.js";

/** Node's whole-millisecond timers can fire a fraction early against performance.now(). */
class EarlyTimersClock extends FakeClock {
  override setTimeout(callback: () => void, delayMs: number): TimerHandle {
    return super.setTimeout(callback, Math.max(1, Math.ceil(delayMs)) - 0.5);
  }
}

describe("DeadlineAlarm: the lead phase's wake-up at the deadline", () => {
  it("aborts at the deadline, not when an early timer fires", async () => {
    const clock = new EarlyTimersClock(0);
    const alarm = new DeadlineAlarm(clock);
    alarm.arm(100);
    await clock.advance(99.9);
    expect(alarm.signal.aborted).toBe(false);
    await clock.advance(0.1);
    expect(alarm.signal.aborted).toBe(true);
  });

  it("a new deadline replaces the old one, and disarm() cancels it", async () => {
    const clock = new FakeClock(0);
    const alarm = new DeadlineAlarm(clock);
    alarm.arm(100);
    alarm.arm(300);
    await clock.advance(299);
    expect(alarm.signal.aborted).toBe(false);
    alarm.disarm();
    await clock.advance(1000);
    expect(alarm.signal.aborted).toBe(false);
  });
});

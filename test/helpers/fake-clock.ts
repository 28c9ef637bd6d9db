import type { ElectorClock, TimerHandle } from "../../shared/sdk/loop/elector-clock.js";

/** Lets every pending promise continuation run; not a sleep: no time passes on any clock. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The one manual clock of the tests: the elector's monotonic clock, the service's wall
 * clock (ha_time) and the request budgets' monotonic timers alike. Timers fire only inside
 * advance(), in time order, with the microtasks they start drained before the next one
 * fires. It starts at `start` (a wall-clock time for handler tests that show renewedAt).
 */
export class FakeClock implements ElectorClock {
  #now: number;
  #seq = 0;
  readonly #timers = new Map<number, { at: number; seq: number; callback: () => void }>();

  constructor(start = 1_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const id = ++this.#seq;
    this.#timers.set(id, { at: this.#now + Math.max(0, delayMs), seq: id, callback });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle as number);
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await settle();
    for (;;) {
      const due = [...this.#timers.entries()]
        .filter(([, timer]) => timer.at <= target)
        .sort(([, a], [, b]) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) break;
      const [id, timer] = due;
      this.#timers.delete(id);
      this.#now = Math.max(this.#now, timer.at);
      timer.callback();
      await settle();
    }
    this.#now = target;
    await settle();
  }

  /**
   * A process pause (SIGSTOP, a long GC): time moves on and no timer fires. The overdue
   * timers fire at the next advance(), as they would when the process resumes.
   */
  pause(ms: number): void {
    this.#now += ms;
  }
}


/**
 * The epoch floor's clock (LeaseServiceDeps.epochClock) for tests of the stored counter
 * alone: it stays at 0, so that new terms count 1, 2, 3 as the store counts them. The floor
 * itself (a new term's epoch never below ha_time) is tested where it is the subject:
 * test/unit/epoch.test.ts, test/unit/decision.test.ts, test/functions/erased-terms.test.ts,
 * the simulation (every run) and the end-to-end rollback.
 */
export const COUNTER_ONLY = { now: (): number => 0 };

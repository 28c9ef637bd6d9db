import type { ElectorClock, TimerHandle } from "../loop/elector-clock.js";

/**
 * Aborts `signal` once the clock reaches the deadline it was last armed with, so that a
 * wait of the lead phase ends at the deadline whatever it waits for (a transport that
 * ignores its timeout included). A timer may fire early against a real clock (whole
 * milliseconds against performance.now()), so it looks at the clock and re-arms rather
 * than trust the timer.
 */
export class DeadlineAlarm {
  readonly #controller = new AbortController();
  #handle: TimerHandle | undefined;

  constructor(private readonly clock: ElectorClock) {}

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Replaces the deadline armed before. */
  arm(deadline: number): void {
    this.disarm();
    this.#handle = this.clock.setTimeout(() => {
      this.#handle = undefined;
      if (this.clock.now() >= deadline) this.#controller.abort();
      else this.arm(deadline);
    }, deadline - this.clock.now());
  }

  disarm(): void {
    if (this.#handle !== undefined) this.clock.clearTimeout(this.#handle);
    this.#handle = undefined;
  }
}

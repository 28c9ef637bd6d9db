import { systemMonotonicClock, type MonotonicTimers } from "./clock.js";

export interface PeriodicMonitorOptions {
  /** Monotonic time and timers; defaults to performance.now() and unref'd process timers. */
  readonly clock?: MonotonicTimers;
  /** How often it samples. */
  readonly periodMs?: number;
}

/**
 * What the process's own monitors (LoopLag, LoopLoad, StallMonitor) share: a period checked
 * where it enters, an injected clock, and start()/stop() around one timer, armed a period
 * ahead and re-armed after every sample for as long as it runs. A subclass says what a
 * start resets (`begin`), what a stop forgets (`forget`) and what a sample measures (`sample`).
 */
export abstract class PeriodicMonitor {
  readonly periodMs: number;
  protected readonly clock: MonotonicTimers;
  #timer: unknown;
  #running = false;
  #dueAt = 0;

  constructor(options: PeriodicMonitorOptions, defaultPeriodMs: number) {
    const periodMs = options.periodMs ?? defaultPeriodMs;
    if (!Number.isSafeInteger(periodMs) || periodMs < 1) {
      throw new RangeError(`Expected \`periodMs\` to be a positive integer number of milliseconds (got ${periodMs}).`);
    }
    this.periodMs = periodMs;
    this.clock = options.clock ?? systemMonotonicClock;
  }

  /** Starts sampling; calling it again does nothing. */
  start(): this {
    if (this.#running) return this;
    this.#running = true;
    this.begin(this.clock.now());
    this.#arm();
    return this;
  }

  stop(): void {
    this.#running = false;
    this.forget();
    if (this.#timer !== undefined) this.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  protected get running(): boolean {
    return this.#running;
  }

  /** When the armed timer is due: a sample taken later than this is late by the difference. */
  protected get dueAt(): number {
    return this.#dueAt;
  }

  /** A start, at `now`: the baseline the first sample measures from. */
  protected abstract begin(now: number): void;

  /** A stop: what was measured is dropped. */
  protected abstract forget(): void;

  /** One sample, at `now`, while running; the next timer is armed after it. */
  protected abstract sample(now: number): void;

  #arm(): void {
    this.#dueAt = this.clock.now() + this.periodMs;
    this.#timer = this.clock.setTimeout(() => {
      if (!this.#running) return;
      this.sample(this.clock.now());
      this.#arm();
    }, this.periodMs);
  }
}

/** The function host's wall clock (ha_time, UTC ms). Injected so that tests control time. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * Monotonic milliseconds (only differences matter) and timers on them: request budgets
 * and the stall monitor measure on this, never on the wall clock, which may be set.
 */
export interface MonotonicClock {
  now(): number;
}

export interface MonotonicTimers extends MonotonicClock {
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** performance.now() and the process's own timers, unref'd: they never keep a process alive. */
export const systemMonotonicClock: MonotonicTimers = {
  now: () => performance.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, Math.max(0, Math.ceil(delayMs))).unref(),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** An opaque timer handle, as the clock's setTimeout returns it. */
export type TimerHandle = unknown;

/**
 * Time as the elector sees it: a monotonic clock and timers on it. Deadlines are
 * measured on `now()` and never compared with the server's wall clock (docs/protocol.md#timing-rules). Tests
 * and the simulation inject a fake one; the default is performance.now() and the
 * process's own timers.
 */
export interface ElectorClock {
  /** Monotonic milliseconds; only differences matter. */
  now(): number;
  /** Calls `callback` once `delayMs` have passed on this clock. */
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  /** Cancels a timer of setTimeout that has not fired. */
  clearTimeout(handle: TimerHandle): void;
}

/** The default clock: performance.now() and the process's own timers. */
export const systemElectorClock: ElectorClock = {
  now: () => performance.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, Math.max(0, Math.ceil(delayMs))),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Waits `ms` on `clock`, or less if `signal` aborts first. It never rejects: the caller
 * looks at its own state after every wait, whatever ended it.
 */
export function sleep(clock: ElectorClock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      resolve();
    };
    const handle = clock.setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

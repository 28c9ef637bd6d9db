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
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The timers a clock is built on: the process's own, or a test's. */
export interface Timers<Handle> {
  setTimeout(callback: () => void, delayMs: number): Handle;
  clearTimeout(handle: Handle): void;
}

/**
 * A clock on `now` whose timers never fire before their delay has passed on `now`.
 * Node's timers run on the event loop's time, which libuv reads from a coarse clock and
 * caches per loop turn: measured on performance.now(), a timer fires up to a few
 * milliseconds early (under load, more). A part woken that early on a participant's grid
 * saw its own grid point still ahead, planned its next call for it, and called twice.
 * Such a timer is armed again for what is left.
 */
export function clockOn<Handle>(now: () => number, timers: Timers<Handle>): ElectorClock {
  return {
    now,
    setTimeout: (callback, delayMs) => {
      const dueAt = now() + Math.max(0, delayMs);
      const timer: { handle?: Handle } = {};
      const arm = (ms: number): void => {
        timer.handle = timers.setTimeout(fire, Math.max(0, Math.ceil(ms)));
      };
      const fire = (): void => {
        const leftMs = dueAt - now();
        if (leftMs > 0) arm(leftMs);
        else callback();
      };
      arm(delayMs);
      return timer;
    },
    clearTimeout: (handle) => {
      const current = (handle as { handle?: Handle } | undefined)?.handle;
      if (current !== undefined) timers.clearTimeout(current);
    },
  };
}

/** The process's own timers. */
export const processTimers: Timers<ReturnType<typeof setTimeout>> = {
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle),
};

export const systemElectorClock: ElectorClock = clockOn(() => performance.now(), processTimers);

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

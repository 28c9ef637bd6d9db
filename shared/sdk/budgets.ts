import type { LeaseTiming } from "../contract/timing.js";

/**
 * How long each of the elector's calls may take. Until the service has answered once,
 * `timing` is undefined and the retry delay stands in for I.
 */

/** A poll answered after I is overtaken by the next one, so I bounds it: a lost call must not stall the loop. */
export function pollBudgetMs(timing: LeaseTiming | undefined, retryDelayMs: number): number {
  return timing?.intervalMs ?? retryDelayMs;
}

/**
 * A heartbeat's answer is worth something until sentAt + (T − I). Half that margin, but at
 * least I, bounds it: one lost call leaves time for another before the deadline, and a
 * slow start of the service (seconds) is still waited for.
 */
export function heartbeatBudgetMs(timing: LeaseTiming | undefined, retryDelayMs: number): number {
  if (timing === undefined) return retryDelayMs;
  return Math.max(timing.intervalMs, (timing.timeoutMs - timing.intervalMs) / 2);
}

/** A renewal is bounded by the time left before its deadline too: a later answer proves nothing. */
export function renewalBudgetMs(timing: LeaseTiming, deadline: number, now: number): number {
  return Math.min(deadline - now, heartbeatBudgetMs(timing, timing.intervalMs));
}

/** Releases are not racing anything; T − I bounds them. */
export function releaseBudgetMs(timing: LeaseTiming | undefined, retryDelayMs: number): number {
  return timing === undefined ? retryDelayMs : timing.timeoutMs - timing.intervalMs;
}

import type { LeaseTiming } from "../../contract/timing.js";

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
 * slow start of the service (seconds) is still waited for. An acquire's budget; a
 * renewal's ceiling (renewalBudgetMs).
 */
export function heartbeatBudgetMs(timing: LeaseTiming | undefined, retryDelayMs: number): number {
  if (timing === undefined) return retryDelayMs;
  return renewalCeilingMs(timing);
}

/** max(I, (T − I)/2): the longest a renewal goes unanswered before a copy is sent again (renewal-timer.ts). */
export function renewalCeilingMs(timing: LeaseTiming): number {
  return Math.max(timing.intervalMs, (timing.timeoutMs - timing.intervalMs) / 2);
}

/**
 * (T − 2I)/8: the shortest a renewal goes unanswered before a copy is sent again. The first
 * renewal goes I after the last accepted one and the deadline is T − I after it, so T − 2I
 * is the time to renew in; with budgets F, 2F, 4F (doubling after each loss) a fourth copy
 * still has F left.
 */
export function renewalFloorMs(timing: LeaseTiming): number {
  return (timing.timeoutMs - 2 * timing.intervalMs) / 8;
}

/** Releases are not racing anything; T − I bounds them. */
export function releaseBudgetMs(timing: LeaseTiming | undefined, retryDelayMs: number): number {
  return timing === undefined ? retryDelayMs : timing.timeoutMs - timing.intervalMs;
}

import { PeriodicMonitor, type PeriodicMonitorOptions } from "./periodic-monitor.js";

export interface LoopLagOptions extends PeriodicMonitorOptions {
  /** How often it samples. Default 20 ms. */
  readonly periodMs?: number;
  /** How far back delayMs() looks. Default 500 ms. */
  readonly windowMs?: number;
}

/**
 * How late this process's event loop has been running what is due, over the last half
 * second: the delay every request arriving now waits before its handler starts. The
 * AdmissionGate sheds polls and acquisitions while it is over budget (docs/protocol.md,
 * "Overload"; its budget, measured: docs/design/overload-shedding.md#a-saturated-process-sheds-too).
 *
 * It samples by arming a timer every period and measuring how late it fires. A process
 * saturated by its own work (Node parsing requests, the store client, a store in the same
 * process) runs each loop turn longer than the last, and every timer and every request
 * waits that long: its queue is in the kernel, where no bound on store calls can see it.
 * A process that merely shares its CPUs with other work (another build, a CPU hog) is
 * scheduled promptly whenever it has something to do, and its lag stays at the
 * scheduler's few milliseconds; a measure of busy time (event-loop utilization) counts
 * the time it waited for a CPU as busy and refuses modest load there.
 */
export class LoopLag extends PeriodicMonitor {
  readonly windowMs: number;
  /** [when it fired, how late in ms] per sample, oldest first. */
  readonly #samples: [number, number][] = [];
  #startedAt = 0;

  constructor(options: LoopLagOptions = {}) {
    super(options, 20);
    const windowMs = options.windowMs ?? 500;
    if (!Number.isSafeInteger(windowMs) || windowMs < this.periodMs) {
      throw new RangeError(`Expected \`windowMs\` to be a whole number of milliseconds of at least periodMs, ${this.periodMs} (got ${windowMs}).`);
    }
    this.windowMs = windowMs;
  }

  /**
   * The mean lateness, in ms, of the samples taken in the last window and of the one now
   * overdue, if any; undefined until a whole window has passed since start(), so that
   * start-up work (loading modules, starting a store) is never taken for load. A lone
   * stall (a garbage collection) shows as one late sample among many on time; a
   * saturated loop makes every one late.
   */
  delayMs(): number | undefined {
    if (!this.running) return undefined;
    const now = this.clock.now();
    if (now - this.#startedAt < this.windowMs) return undefined;
    this.#dropOld(now);
    // The turn running now counts as well: in a saturated loop the sample now due is
    // already late, and a long turn must not wait for its own end to be seen.
    const overdue = Math.max(0, now - this.dueAt);
    let total = overdue;
    for (const [, lag] of this.#samples) total += lag;
    const count = this.#samples.length + (overdue > 0 ? 1 : 0);
    return count === 0 ? undefined : total / count;
  }

  protected begin(now: number): void {
    this.#startedAt = now;
  }

  protected forget(): void {
    this.#samples.length = 0;
  }

  protected sample(now: number): void {
    this.#samples.push([now, Math.max(0, now - this.dueAt)]);
    this.#dropOld(now);
  }

  /** Drops the samples older than the window, but never the newest: a long stall is one sample. */
  #dropOld(now: number): void {
    while (this.#samples.length > 1 && (this.#samples[0] as [number, number])[0] < now - this.windowMs) this.#samples.shift();
  }
}

/** The one lag monitor of this process, started by createRuntime when shedding is on. */
export const processLoopLag = new LoopLag();

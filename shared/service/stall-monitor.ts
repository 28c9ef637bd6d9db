import { PeriodicMonitor, type PeriodicMonitorOptions } from "./periodic-monitor.js";

export interface StallMonitorOptions extends PeriodicMonitorOptions {
  /** How often it ticks. Default 100 ms. */
  readonly periodMs?: number;
}

const DEFAULT_PERIOD_MS = 100;
/** A stall: when it began, when its tick saw it, and the last tick of its catching up. */
interface Stall {
  readonly startedAt: number;
  readonly endedAt: number;
  readonly seenAt: number;
}

/** A tick later than this many periods after the last one is still catching up. */
const CATCHING_UP = 1.5;

/**
 * Notices when this process was not running (SIGSTOP, a VM freeze, a blocked event loop),
 * so that requests that queued up meanwhile are not taken to have just arrived.
 *
 * A frozen process cannot see when its queued requests arrived: after SIGCONT they reach
 * the handlers looking fresh. The monitor ticks every period; a gap between ticks of more
 * than `stallThresholdMs` means the process did not run. A request that reaches the
 * handlers during such a gap (I/O can run before the overdue tick) or within `graceMs`
 * after the tick that saw it (and of every late tick after it while the process works
 * off what queued, for at most as long as the gap) is treated as having arrived when
 * the gap began: the last
 * tick, the last moment the process is known to have run. That is the earliest it can
 * have arrived, which is the safe side for a time budget.
 *
 * A gap below the threshold goes unseen, so a request's budget can be overrun by at most
 * the threshold. A false alarm (a long GC) only shortens budgets by the length of the gap.
 */
export class StallMonitor extends PeriodicMonitor {
  /** A gap between ticks longer than this is a stall: 3 periods. */
  readonly stallThresholdMs: number;
  /** How long after the tick that saw a stall requests are still backdated: 2 periods. */
  readonly graceMs: number;
  #lastTick = 0;
  #stall: Stall | undefined;

  constructor(options: StallMonitorOptions = {}) {
    super(options, DEFAULT_PERIOD_MS);
    this.stallThresholdMs = 3 * this.periodMs;
    this.graceMs = 2 * this.periodMs;
  }

  /** When a request reaching the handlers now is taken to have arrived. */
  arrivalOf(now: number = this.clock.now()): number {
    if (!this.running) return now;
    if (now - this.#lastTick > this.stallThresholdMs) return this.#lastTick;
    const stall = this.#stall;
    if (stall === undefined) return now;
    if (now - stall.seenAt <= this.graceMs) return stall.startedAt;
    // Between two ticks of the catching up: the tick now due is late already.
    if (this.#withinCatchUp(stall, now, now - this.#lastTick)) return stall.startedAt;
    return now;
  }

  /** The last stall seen, for logs: when it began and how long it lasted. */
  get lastStall(): { readonly startedAt: number; readonly durationMs: number } | undefined {
    return this.#stall === undefined ? undefined : { startedAt: this.#stall.startedAt, durationMs: this.#stall.endedAt - this.#stall.startedAt };
  }

  /**
   * Still working off what queued during the last stall: the tick `gap` after the last
   * one late too (the queued requests take their time, more on a busy machine), and for
   * no longer than the stall itself lasted. The grace then runs from when the loop
   * is on time again, so a request that queued during the freeze is not taken for a fresh
   * one; the bound keeps a loop that is merely saturated (every tick late) from backdating
   * its requests further and further.
   */
  #withinCatchUp(stall: Stall, now: number, gap: number): boolean {
    return gap > CATCHING_UP * this.periodMs && now - stall.endedAt <= stall.endedAt - stall.startedAt;
  }

  protected begin(now: number): void {
    this.#lastTick = now;
  }

  protected forget(): void {
    this.#stall = undefined;
  }

  /** A tick. */
  protected sample(now: number): void {
    const gap = now - this.#lastTick;
    if (gap > this.stallThresholdMs) this.#stall = { startedAt: this.#lastTick, endedAt: now, seenAt: now };
    else if (this.#stall !== undefined && this.#withinCatchUp(this.#stall, now, gap)) this.#stall = { ...this.#stall, seenAt: now };
    this.#lastTick = now;
  }
}

/**
 * The one monitor of this process: the route dispatcher reads it for every request. It is
 * started by createRuntime and by the first request, whichever comes first.
 */
export const processStallMonitor = new StallMonitor();

import { performance } from "node:perf_hooks";
import { systemMonotonicClock, type MonotonicTimers } from "../lease/clock.js";

export interface LoopLoadOptions {
  /** Monotonic time and timers; defaults to performance.now() and unref'd process timers. */
  readonly clock?: MonotonicTimers;
  /** How often it samples. Default 100 ms. */
  readonly periodMs?: number;
  /** How many samples make the window busyFraction() looks at. Default 5 (0.5 s). */
  readonly windowSamples?: number;
  /**
   * The milliseconds this process's event loop has spent busy since it started, ever
   * growing; defaults to performance.eventLoopUtilization().active.
   */
  readonly activeMs?: () => number;
}

/**
 * How busy this process's event loop has been over the last half second: the overload
 * signal no bound on store calls can give. A process saturated by its own HTTP work (Node
 * parsing requests, the store client, a store in the same process) answers every request
 * late while its store calls look few and quick; its queue is in the kernel, where nothing
 * can see it, and past a point the kernel's accept queue overflows, so a caller whose
 * connection was dropped cannot get back in at all. The AdmissionGate sheds polls and
 * acquisitions while this reads high (docs/protocol.md, "Overload").
 */
export class LoopLoad {
  readonly periodMs: number;
  readonly windowSamples: number;
  readonly #clock: MonotonicTimers;
  readonly #activeMs: () => number;
  /** [elapsed ms, busy ms] per sample, newest last. */
  readonly #samples: [number, number][] = [];
  #timer: unknown;
  #running = false;
  #lastAt = 0;
  #lastActive = 0;

  constructor(options: LoopLoadOptions = {}) {
    const periodMs = options.periodMs ?? 100;
    const windowSamples = options.windowSamples ?? 5;
    if (!Number.isSafeInteger(periodMs) || periodMs < 1) {
      throw new RangeError(`Expected \`periodMs\` to be a positive integer number of milliseconds (got ${periodMs}).`);
    }
    if (!Number.isSafeInteger(windowSamples) || windowSamples < 1) {
      throw new RangeError(`Expected \`windowSamples\` to be a positive integer (got ${windowSamples}).`);
    }
    this.periodMs = periodMs;
    this.windowSamples = windowSamples;
    this.#clock = options.clock ?? systemMonotonicClock;
    this.#activeMs = options.activeMs ?? (() => performance.eventLoopUtilization().active);
  }

  /** Starts sampling; calling it again does nothing. */
  start(): this {
    if (this.#running) return this;
    this.#running = true;
    this.#lastAt = this.#clock.now();
    this.#lastActive = this.#activeMs();
    this.#arm();
    return this;
  }

  stop(): void {
    this.#running = false;
    this.#samples.length = 0;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /**
   * The fraction (0–1) of the last window the loop was busy; undefined until a whole
   * window has been sampled, so that start-up work (loading modules, starting a store) is
   * never taken for load.
   */
  busyFraction(): number | undefined {
    if (this.#samples.length < this.windowSamples) return undefined;
    let elapsed = 0;
    let busy = 0;
    for (const [sampleElapsed, sampleBusy] of this.#samples) {
      elapsed += sampleElapsed;
      busy += sampleBusy;
    }
    return elapsed <= 0 ? undefined : Math.min(1, busy / elapsed);
  }

  #arm(): void {
    this.#timer = this.#clock.setTimeout(() => this.#sample(), this.periodMs);
  }

  #sample(): void {
    if (!this.#running) return;
    const now = this.#clock.now();
    const active = this.#activeMs();
    this.#samples.push([now - this.#lastAt, Math.max(0, active - this.#lastActive)]);
    if (this.#samples.length > this.windowSamples) this.#samples.shift();
    this.#lastAt = now;
    this.#lastActive = active;
    this.#arm();
  }
}

/** The one load monitor of this process, started by createRuntime when shedding is on. */
export const processLoopLoad = new LoopLoad();

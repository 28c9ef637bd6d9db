import { performance } from "node:perf_hooks";
import { PeriodicMonitor, type PeriodicMonitorOptions } from "./periodic-monitor.js";

export interface LoopLoadOptions extends PeriodicMonitorOptions {
  /** How often it samples. Default 100 ms. */
  readonly periodMs?: number;
  /** How many samples make the window busyFraction() looks at. Default 5 (0.5 s). */
  readonly windowSamples?: number;
  /**
   * The milliseconds this process's event loop has spent busy (not waiting for I/O) since it
   * started, ever growing; defaults to performance.eventLoopUtilization().active. It is wall
   * time: a turn descheduled while another process held the CPU counts in full.
   */
  readonly activeMs?: () => number;
  /**
   * The milliseconds of CPU this process has been given since it started (user + system, all
   * its threads), ever growing; defaults to process.cpuUsage(). Time it waited for a CPU is
   * not in it; time of its helper threads (garbage collection, libuv's pool) is.
   */
  readonly cpuMs?: () => number;
}

/** process.cpuUsage() in milliseconds (it counts microseconds). */
export function processCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/**
 * How much of the last half second this process's event loop was busy running its own
 * work: the overload signal no bound on store calls can give. A process saturated by its
 * own HTTP work (Node parsing requests, the store client, a store in the same process)
 * answers every request late while its store calls look few and quick; its queue is in the
 * kernel, where nothing can see it, and past a point the kernel's accept queue overflows,
 * so a caller whose connection was dropped cannot get back in at all. The AdmissionGate
 * sheds polls and acquisitions while this reads high (docs/protocol.md, "Overload"; why the
 * smaller of loop time and CPU time: docs/design/overload-shedding.md#a-saturated-process-sheds-too).
 *
 * Each sample's busy time is the smaller of two measures, each inflated by something the
 * other does not count:
 * - the event loop's active time (utilization) is wall time, so it also counts the time
 *   the loop waited for a CPU another process held: beside a CPU hog a loop that keeps up
 *   reads nearly 100 %;
 * - the process's CPU time counts only time it ran, but on every thread, so garbage
 *   collection and libuv's pool can lift it above what the loop did.
 * Another process can inflate only the first, the process's own helper threads only the
 * second; the smaller of the two is inflated by neither.
 */
export class LoopLoad extends PeriodicMonitor {
  readonly windowSamples: number;
  readonly #activeMs: () => number;
  readonly #cpuMs: () => number;
  /** [elapsed ms, busy ms] per sample, newest last. */
  readonly #samples: [number, number][] = [];
  #lastAt = 0;
  #lastActive = 0;
  #lastCpu = 0;

  constructor(options: LoopLoadOptions = {}) {
    super(options, 100);
    const windowSamples = options.windowSamples ?? 5;
    if (!Number.isSafeInteger(windowSamples) || windowSamples < 1) {
      throw new RangeError(`Expected \`windowSamples\` to be a positive integer (got ${windowSamples}).`);
    }
    this.windowSamples = windowSamples;
    this.#activeMs = options.activeMs ?? (() => performance.eventLoopUtilization().active);
    this.#cpuMs = options.cpuMs ?? processCpuMs;
  }

  /**
   * The fraction (0–1) of the last window the loop was busy running (see the class);
   * undefined until a whole window has been sampled, so that start-up work (loading
   * modules, starting a store) is never taken for load.
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

  protected begin(now: number): void {
    this.#lastAt = now;
    this.#lastActive = this.#activeMs();
    this.#lastCpu = this.#cpuMs();
  }

  protected forget(): void {
    this.#samples.length = 0;
  }

  protected sample(now: number): void {
    const active = this.#activeMs();
    const cpu = this.#cpuMs();
    const busy = Math.min(active - this.#lastActive, cpu - this.#lastCpu);
    this.#samples.push([now - this.#lastAt, Math.max(0, busy)]);
    if (this.#samples.length > this.windowSamples) this.#samples.shift();
    this.#lastAt = now;
    this.#lastActive = active;
    this.#lastCpu = cpu;
  }
}

/** The one busy-time monitor of this process, started by createRuntime when its rule is on. */
export const processLoopLoad = new LoopLoad();

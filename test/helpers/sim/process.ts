import type { ElectorClock, TimerHandle } from "../../../shared/sdk/loop/elector-clock.js";
import type { SimWorld } from "./world.js";

/**
 * One process (an elector's, or a function instance's): its own monotonic clock (offset
 * and rate error) and timers. While paused nothing inside it runs; its due timers and
 * arrived messages wait, in order, and run the moment it resumes, as after SIGSTOP and
 * SIGCONT. A killed process never runs anything again.
 */
export class SimProcess implements ElectorClock {
  #paused = false;
  #pausedOnce = false;
  #killed = false;
  readonly #waiting: Array<() => void> = [];

  constructor(
    private readonly world: SimWorld,
    /** Local clock = offset + rate × simulated time. */
    readonly rate: number,
    readonly offset: number,
    /** Its timers only keep books (a function instance's stall monitor): see SimWorld.schedule. */
    private readonly quietTimers = false,
  ) {}

  now(): number {
    return this.offset + this.rate * this.world.now;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const timer = { cancelled: false };
    this.world.schedule(
      this.world.now + Math.max(0, delayMs) / this.rate,
      () =>
        this.post(() => {
          if (!timer.cancelled) callback();
        }),
      this.quietTimers,
      () => timer.cancelled,
    );
    return timer;
  }

  clearTimeout(handle: TimerHandle): void {
    (handle as { cancelled: boolean }).cancelled = true;
  }

  /** Runs `run` inside this process now, or the moment it resumes; never once killed. */
  post(run: () => void): void {
    if (this.#killed) return;
    if (this.#paused) {
      this.#waiting.push(run);
    } else {
      run();
    }
  }

  get paused(): boolean {
    return this.#paused;
  }

  /** Whether it was ever paused: its timers then fired late once. */
  get pausedOnce(): boolean {
    return this.#pausedOnce;
  }

  get killed(): boolean {
    return this.#killed;
  }

  pause(): void {
    this.#paused = true;
    this.#pausedOnce = true;
  }

  /** What waited runs in order, each as its own event, so promises settle in between. */
  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    for (const run of this.#waiting.splice(0)) this.world.schedule(this.world.now, () => this.post(run));
  }

  /** SIGKILL: nothing of it runs again, and nothing it would have sent is sent. */
  kill(): void {
    this.#killed = true;
    this.#waiting.length = 0;
  }
}

import { OverloadedError } from "./overloaded-error.js";

/**
 * Which requests shed first. `holder`: a renewal that carries its lease token (or a
 * release with it): the one request that keeps a primary primary. `other`: GetPrimary
 * polls, acquisitions, takeovers and lists, which lose nothing by waiting a second.
 */
export type AdmissionPriority = "holder" | "other";

export interface AdmissionLimits {
  /** Requests that may be at the store at once (HA_MAX_IN_FLIGHT). */
  readonly maxInFlight: number;
  /** Requests that may wait for a slot (HA_MAX_QUEUED); `other` ones may fill only half of it. */
  readonly maxQueued: number;
  /**
   * Past this fraction (0–1) of the last half second spent running the process's own work
   * (busyFraction), `other` requests are refused at once (HA_SHED_BUSY_PERCENT / 100);
   * undefined: never for that reason.
   */
  readonly shedBusyFraction?: number | undefined;
  /**
   * Past this many milliseconds of delay (the process's event loop running what is due
   * this late, on average over the last half second), `other` requests are refused at
   * once (HA_SHED_DELAY_MS); undefined: never for that reason.
   */
  readonly shedDelayMs?: number | undefined;
}

/**
 * Why a request was refused: too many waiting for the store (`queue`), the process busy
 * running its own work (`busy`), or every request delayed past its budget (`delay`).
 */
export type ShedReason = "queue" | "busy" | "delay";

/**
 * How loaded the process is, as the gate reads it; each undefined while it does not know
 * yet. busyFraction: the share (0–1) of the last half second its event loop spent running
 * (LoopLoad: the smaller of loop utilization and the process's CPU time, so that neither
 * another process nor its own helper threads inflate it). delayMs: how late its loop runs
 * what is due (LoopLag).
 */
export interface ProcessLoad {
  busyFraction(): number | undefined;
  delayMs(): number | undefined;
}

/** A load that never knows: no refusal for busy time or delay. */
export const UNKNOWN_LOAD: ProcessLoad = { busyFraction: () => undefined, delayMs: () => undefined };

/**
 * A busy or delayed process with fewer requests than this at hand (at the store or
 * waiting) is slowed by something else (a garbage collection, a test harness): refusing
 * its few callers would free nothing, and would slow a lone standby's takeover.
 */
export const LOAD_SHED_MIN_AT_HAND = 4;

interface Waiter {
  readonly priority: AdmissionPriority;
  readonly admit: (leave: () => void) => void;
  readonly shed: (error: OverloadedError) => void;
}

/**
 * Bounds the store calls a process has in flight, so that past capacity the store does not
 * fall behind: what is accepted finishes inside its budget, and the excess is refused at
 * once (OverloadedError → 503 Overloaded with Retry-After) instead of timing out after
 * taking its share of the work.
 *
 * Guarantees:
 * - at most `maxInFlight` callers hold a slot; at most `maxQueued` wait for one;
 * - holders go first: they are admitted before any waiting `other`, may use the whole
 *   queue while `other`s may use only half, and a holder arriving at a full queue takes the
 *   place of the newest waiting `other`, which is shed;
 * - while the process itself is saturated and has at least LOAD_SHED_MIN_AT_HAND requests
 *   at hand, an `other` request is refused at once: past that point every request waits
 *   in the kernel before any bound here sees it, so the cheap refusal is what leaves time
 *   for the renewals. Saturated is either of two rules: its event loop spent at least
 *   `shedBusyFraction` of the last half second running its own work (busy), or ran what
 *   is due more than `shedDelayMs` late on average over it (delay). Neither counts time
 *   the process waited for a CPU another process held: busy time is bounded by the CPU
 *   time the process was given, and a process with work to do is scheduled within
 *   milliseconds. A holder is never refused for these reasons;
 * - a shed request has not touched the store: nothing was written.
 */
export class AdmissionGate {
  #inFlight = 0;
  readonly #holders: Waiter[] = [];
  readonly #others: Waiter[] = [];

  constructor(
    private readonly limits: AdmissionLimits,
    /** Seconds a shed caller is told to wait (Retry-After). */
    private readonly retryAfterSeconds: number,
    private readonly load: ProcessLoad = UNKNOWN_LOAD,
    /** Told of every refusal (the service's `ha.requests.shed` counter). */
    private readonly onShed: (reason: ShedReason) => void = () => undefined,
  ) {}

  get inFlight(): number {
    return this.#inFlight;
  }

  get queued(): number {
    return this.#holders.length + this.#others.length;
  }

  /** Waits for a slot; resolves to the function that gives it back (call it exactly once). */
  enter(priority: AdmissionPriority): Promise<() => void> {
    if (priority === "other" && this.#inFlight + this.queued >= LOAD_SHED_MIN_AT_HAND) {
      const refusal = this.#saturated();
      if (refusal !== undefined) return Promise.reject(refusal);
    }
    if (this.#inFlight < this.limits.maxInFlight && this.queued === 0) {
      this.#inFlight += 1;
      return Promise.resolve(this.#leaver());
    }
    const room = priority === "holder" ? this.limits.maxQueued : Math.floor(this.limits.maxQueued / 2);
    if (this.queued >= room) {
      const evicted = priority === "holder" ? this.#others.pop() : undefined;
      const refusal = this.#refusal("queue", `${this.limits.maxInFlight} requests at the store, ${this.queued} waiting`);
      if (evicted === undefined) return Promise.reject(refusal);
      evicted.shed(refusal);
    }
    return new Promise((admit, shed) => {
      (priority === "holder" ? this.#holders : this.#others).push({ priority, admit, shed });
    });
  }

  /** Runs `work` inside a slot. */
  async run<T>(priority: AdmissionPriority, work: () => Promise<T>): Promise<T> {
    const leave = await this.enter(priority);
    try {
      return await work();
    } finally {
      leave();
    }
  }

  /** The refusal for a saturated process (busy first, then delay), else undefined. */
  #saturated(): OverloadedError | undefined {
    const busyLimit = this.limits.shedBusyFraction;
    const busy = busyLimit === undefined ? undefined : this.load.busyFraction();
    if (busyLimit !== undefined && busy !== undefined && busy >= busyLimit) {
      return this.#refusal(
        "busy",
        `its process was busy running its own work ${Math.round(busy * 100)} % of the last half second; the limit is ${Math.round(busyLimit * 100)} %`,
      );
    }
    const budget = this.limits.shedDelayMs;
    const delay = budget === undefined ? undefined : this.load.delayMs();
    if (budget !== undefined && delay !== undefined && delay > budget) {
      return this.#refusal("delay", `its requests waited ${Math.round(delay)} ms on average over the last half second to be served; the budget is ${budget} ms`);
    }
    return undefined;
  }

  #leaver(): () => void {
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = this.#holders.shift() ?? this.#others.shift();
      // The slot passes straight to the next waiter, so #inFlight does not change.
      if (next === undefined) this.#inFlight -= 1;
      else next.admit(this.#leaver());
    };
  }

  /** One refusal, counted: the 503 Overloaded a shed caller gets. */
  #refusal(reason: ShedReason, state: string): OverloadedError {
    this.onShed(reason);
    return new OverloadedError(`The service is at capacity (${state}); retry after ${this.retryAfterSeconds} s.`, this.retryAfterSeconds);
  }
}

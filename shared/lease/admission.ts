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
   * Past this many milliseconds of delay (the process's event loop running what is due
   * this late, on average over the last half second), `other` requests are refused at
   * once (HA_SHED_DELAY_MS); undefined: never for that reason.
   */
  readonly shedDelayMs?: number | undefined;
}

/** Why a request was refused: too many waiting for the store, or every request delayed past its budget. */
export type ShedReason = "queue" | "delay";

/** How late the process runs what is due (LoopLag); undefined while it does not know yet. */
export interface ProcessLoad {
  delayMs(): number | undefined;
}

/**
 * A delayed process with fewer requests than this at hand (at the store or waiting) is
 * slowed by something else (a garbage collection, a test harness): refusing its few
 * callers would free nothing, and would slow a lone standby's takeover.
 */
export const DELAY_SHED_MIN_AT_HAND = 4;

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
 * - while the process itself is saturated (its event loop running what is due more than
 *   `shedDelayMs` late, on average over the last half second) and has at least
 *   DELAY_SHED_MIN_AT_HAND requests at hand, an `other` request is refused at once: past
 *   that point every request waits in the kernel before any bound here sees it, so the
 *   cheap refusal is what leaves time for the renewals. A holder is never refused for
 *   this reason. Time the process waited for a CPU that other processes held is not
 *   delay: a process with work to do is scheduled within milliseconds;
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
    private readonly load: ProcessLoad = { delayMs: () => undefined },
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
    if (priority === "other" && this.#inFlight + this.queued >= DELAY_SHED_MIN_AT_HAND) {
      const delay = this.#delayPast();
      if (delay !== undefined) {
        return Promise.reject(this.#refusal("delay", `its requests waited ${Math.round(delay)} ms on average over the last half second to be served; the budget is ${this.limits.shedDelayMs} ms`));
      }
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

  /** The delay when it is past the budget, else undefined. */
  #delayPast(): number | undefined {
    const budget = this.limits.shedDelayMs;
    if (budget === undefined) return undefined;
    const delay = this.load.delayMs();
    return delay !== undefined && delay > budget ? delay : undefined;
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

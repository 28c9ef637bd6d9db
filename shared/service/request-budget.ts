import { setMaxListeners } from "node:events";
import type { MonotonicClock } from "./clock.js";
import type { StoreCallOptions } from "./store-call.js";
import { StoreUnavailableError } from "./store-unavailable-error.js";

/** When a request arrived, in milliseconds on the process's monotonic clock. */
export interface RequestArrival {
  readonly arrivedAt: number;
}

/**
 * One request's time budget for its store calls (HA_STORE_TIMEOUT_MS), counted from when
 * the request arrived rather than from when a handler got round to it.
 *
 * Guarantee: no store call, and in particular no write, is started once the budget is
 * spent; such a request is answered 503 with nothing changed. A write started in time may
 * still land up to one store round trip later (its abort signal only stops the waiting).
 * This is what keeps a heartbeat that sat in a frozen process's queue from being applied
 * long after its sender gave up on it.
 */
export class RequestBudget {
  constructor(
    private readonly clock: MonotonicClock,
    private readonly arrivedAt: number,
    private readonly budgetMs: number,
  ) {}

  remainingMs(): number {
    return this.arrivedAt + this.budgetMs - this.clock.now();
  }

  /**
   * Options for the next store call: an abort signal for what is left of the budget, in
   * whole milliseconds (AbortSignal.timeout refuses fractions). Throws StoreUnavailableError
   * instead when less than a millisecond is left.
   */
  forStoreCall(what: "read" | "write"): StoreCallOptions {
    const remaining = Math.floor(this.remainingMs());
    if (remaining < 1) {
      throw new StoreUnavailableError(
        `The request's time budget (HA_STORE_TIMEOUT_MS = ${this.budgetMs} ms, counted from its arrival) ran out before its ${what}; nothing was written.`,
      );
    }
    return { abortSignal: deadlineSignal(this.arrivedAt + this.budgetMs, remaining) };
  }
}

/** The signal made last, and the deadline it fires at. */
let last: { readonly deadline: number; readonly signal: AbortSignal } | undefined;

/**
 * One abort signal per deadline: the parts of one request (a participant heartbeat's
 * renewals, reads and member heartbeat) share its arrival and so its deadline, and their
 * store calls share one timer. Each AbortSignal.timeout is a timer that fires, making a
 * DOMException, even after its call has succeeded; one per store call was about 2 % of the
 * service's busy CPU. Remembering only the last one is enough: a request's parts ask for
 * theirs together.
 */
function deadlineSignal(deadline: number, remainingMs: number): AbortSignal {
  if (last?.deadline !== deadline) {
    const signal = AbortSignal.timeout(remainingMs);
    // Each store call in flight listens on it (removing its listener when done), and a
    // request of many parts has more than the 10 Node warns at.
    setMaxListeners(0, signal);
    last = { deadline, signal };
  }
  return last.signal;
}

import { callWithin } from "../loop/bounded-call.js";
import type { ElectorClock, TimerHandle } from "../loop/elector-clock.js";
import type { CallOptions } from "../transport/lease-transport.js";

export interface HedgedRenewal<T> {
  readonly clock: ElectorClock;
  /** Every copy ends here: a later answer proves nothing. */
  readonly deadline: number;
  /** Cuts every copy off (the term ended, stop(), resign()); no failure. */
  readonly signal: AbortSignal;
  /**
   * The renewal budget now (renewal-timer.ts): how long a copy goes unanswered before the
   * next is sent, after `unanswered` copies of this renewal went unanswered, `leftMs` before
   * the deadline.
   */
  budgetMs(unanswered: number, leftMs: number): number;
  send(options: Required<CallOptions>): Promise<T>;
  /** A copy went unanswered for `budgetMs` (its budget, read again when it passed): reported as a timeout (the next copy's budget doubles). */
  onUnanswered(budgetMs: number): void;
  /** A copy failed before its budget ran out (a 503, a refused connection, a corrupted answer). */
  onFailure(error: unknown): void;
}

/**
 * One renewal, sent again each time the renewal budget passes without an answer, as TCP
 * retransmits, each copy's budget double the one before: this renewal's own count, never
 * another's (the roles of one participant heartbeat go unanswered together, and each keeps
 * the copies a lone elector would send). A budget is read again when it passes, so a copy
 * waits as long as the budget says then. A copy that is late is not cut off, so whichever
 * copy is answered first counts (with its own sentAt), and a slow service's answer is not
 * thrown away for a copy that would wait in the same queue. Resolves to the first answer,
 * or to undefined when the signal ends it or when the newest copy fails before its budget
 * (then the elector keeps its cadence). Once it resolves, every other copy is cut off.
 */
export function renewHedged<T>(renewal: HedgedRenewal<T>): Promise<{ readonly value: T; readonly sentAt: number } | undefined> {
  const { clock, deadline } = renewal;
  const copies = new AbortController();
  const signal = AbortSignal.any([renewal.signal, copies.signal]);
  return new Promise((resolve) => {
    let settled = false;
    let timer: TimerHandle | undefined;
    let newest = 0;
    /** Copies of this renewal whose budget passed without an answer. */
    let unanswered = 0;
    const finish = (answer: { value: T; sentAt: number } | undefined): void => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(answer);
      copies.abort();
    };
    const onAbort = (): void => finish(undefined);
    const sendCopy = (): void => {
      const sentAt = clock.now();
      const copy = ++newest;
      const leftMs = deadline - sentAt;
      let overdue = false;
      const dueAt = (): number => sentAt + Math.min(renewal.budgetMs(unanswered, leftMs), leftMs);
      const wait = (): void => {
        timer = clock.setTimeout(() => {
          // The budget as it stands when it passes: an answer over the floor that came
          // meanwhile (another elector's, on the same transport) says the service is
          // queueing, and the next copy waits for the ceiling instead of joining the queue.
          if (clock.now() < dueAt()) return wait();
          timer = undefined;
          overdue = true;
          unanswered += 1;
          renewal.onUnanswered(clock.now() - sentAt);
          if (settled) return;
          // At the deadline every copy is over (each is cut off then): nothing more to wait for.
          if (clock.now() < deadline) sendCopy();
          else finish(undefined);
        }, dueAt() - clock.now());
      };
      wait();
      void callWithin(deadline - sentAt, signal, (options) => renewal.send(options), (error) => {
        // An overdue copy was reported already; its end changes nothing.
        if (!overdue) renewal.onFailure(error);
      }).then((value) => {
        if (value !== undefined) finish({ value, sentAt });
        else if (copy === newest && !overdue) finish(undefined);
      });
    };
    if (signal.aborted) return finish(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    sendCopy();
  });
}

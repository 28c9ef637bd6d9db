import type { LeaseView } from "../../contract/lease-view.js";

/**
 * A standby's side of preemption (docs/protocol.md#priorities-and-preemption): how long it
 * has stood by continuously, and whether its announcement now asks the service to preempt
 * the holder. Pure bookkeeping on the elector's monotonic clock; the follow phase asks it and
 * tells it what happened.
 *
 * - **Standing by** starts at the first answer that shows another live holder, for the
 *   elector's uuid then. It ends (and a later answer starts it anew) on any failed call, on a
 *   new uuid, and when the elector holds a term: so after an outage for everyone (every call
 *   failing) the hold-down starts again from the return, after sticky recovery.
 * - **Due** once it has stood by `preemptAfterMs`, while the live, unrevoked holder has a
 *   lower priority and no operator's handover is pending (and none names this uuid already).
 * - **An operator's handover is not undone**: an elector the operator moved the role away
 *   from (`movedAwayByOperator`) never preempts again in this process, until it observes a
 *   later operator's handover of the role (another request time).
 */
export class HoldDown {
  /** Standing by since (monotonic ms) as `#uuid`; undefined: not standing by. */
  #since: number | undefined;
  #uuid: string | undefined;
  /** The request time of the operator's handover that moved the role away from this elector; undefined: none. */
  #movedAwayAt: string | undefined;

  constructor(
    private readonly priority: number,
    /** undefined: never preempt ("off"). */
    private readonly preemptAfterMs: number | undefined,
  ) {}

  /** Whether this elector can ever preempt: a hold-down is set (a priority of 0 may still outrank a negative one). */
  get enabled(): boolean {
    return this.preemptAfterMs !== undefined;
  }

  /** An answer as `uuid` at `now` showed `view`. */
  observe(view: LeaseView, uuid: string, now: number): void {
    const handover = view.handover;
    // A later operator's handover of the role (to anyone): the operator moves the role again, so may this elector.
    if (this.#movedAwayAt !== undefined && handover !== null && handover.reason === undefined && handover.requestedAt !== this.#movedAwayAt) this.#movedAwayAt = undefined;
    const other = view.primary !== null && view.primary.uuid !== uuid;
    if (!other) return;
    if (this.#since === undefined || this.#uuid !== uuid) {
      this.#since = now;
      this.#uuid = uuid;
    }
  }

  /** A call failed (no answer, a timeout, a 5xx, a refusal of the caller): it did not stand by continuously. */
  interrupt(): void {
    this.#since = undefined;
    this.#uuid = undefined;
  }

  /** The elector's term ended by an operator's handover requested at `requestedAt` (the view's ISO time). */
  movedAwayByOperator(requestedAt: string): void {
    this.#movedAwayAt = requestedAt;
    this.interrupt();
  }

  /** Whether an operator's move of the role away from this elector stands (it does not preempt). */
  get movedAway(): boolean {
    return this.#movedAwayAt !== undefined;
  }

  /** When the hold-down of the current standing ends (monotonic ms); undefined when not standing by or off. */
  dueAt(): number | undefined {
    if (this.preemptAfterMs === undefined || this.#since === undefined) return undefined;
    return this.#since + this.preemptAfterMs;
  }

  /**
   * Whether the next announcement as `uuid` asks to preempt the holder `view` shows: the
   * hold-down has passed at `now` and the holder is preemptible by this priority.
   */
  wants(view: LeaseView | undefined, uuid: string, now: number): boolean {
    const due = this.dueAt();
    if (view === undefined || due === undefined || now < due || this.#uuid !== uuid || this.#movedAwayAt !== undefined) return false;
    return this.outranks(view, uuid);
  }

  /** Whether `view`'s holder is one this elector would preempt, hold-down aside. */
  outranks(view: LeaseView, uuid: string): boolean {
    const { primary, handover } = view;
    if (primary === null || primary.uuid === uuid || primary.revoked) return false;
    if (this.priority <= (primary.priority ?? 0)) return false;
    // An operator's handover pending is never undone; one to this uuid needs nothing more.
    if (handover !== null && handover.phase === "pending" && (handover.reason === undefined || handover.to === uuid)) return false;
    return true;
  }
}

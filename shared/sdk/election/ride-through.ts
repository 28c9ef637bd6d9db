import type { LeaseTiming } from "../../contract/timing.js";
import type { ElectorClock, TimerHandle } from "../loop/elector-clock.js";
import { isOutage } from "../loop/poll-delays.js";
import type { Term } from "./elector-role.js";

/**
 * Ride-through (docs/protocol.md#ride-through): with `rideThroughMs`, a term whose deadline
 * passed while its renewals got no answer, a timeout or a 5xx only stays primary that much
 * longer, and each renewal meanwhile is bounded as after an accepted one. The rules of one
 * elector, on its clock: when a term ends (endOf), what a renewal may take (renewalBounds),
 * what ends or restores the right to ride (refused, renewed), and the moment the ride begins
 * (watch: `ridingThrough`, once per ride). The term's own `rides` and `ridingSince` are its
 * state; the timer of the lead phase under way is this object's. 0 ms: off, and the deadline
 * ends the term as always.
 */
export class RideThrough {
  readonly #ms: number;
  readonly #clock: ElectorClock;
  /** Whether the term is still the one led (a term stop() or a new epoch replaced does not ride). */
  readonly #leads: (term: Term) => boolean;
  /** The ride began: `leftMs` until it ends unless an answer comes first. */
  readonly #began: (term: Term, leftMs: number) => void;
  /** With ride-through the deadline itself wakes nothing: this timer only says that the ride began. */
  #timer: TimerHandle | undefined;

  constructor(ms: number, clock: ElectorClock, leads: (term: Term) => boolean, began: (term: Term, leftMs: number) => void) {
    this.#ms = ms;
    this.#clock = clock;
    this.#leads = leads;
    this.#began = began;
  }

  /**
   * When the term stops being primary unless a renewal is accepted first: its deadline, or
   * with `rideThroughMs`, that much later while the term may ride through.
   */
  endOf(term: Term): number {
    return term.deadline + (term.rides ? this.#ms : 0);
  }

  /**
   * Looks again at when the term's ride begins: at its deadline, unless a renewal is
   * accepted first (renewed, then watch again). Replaces the watch set before.
   */
  watch(term: Term): void {
    this.unwatch();
    if (this.#ms === 0 || !term.rides || term.ridingSince !== undefined) return;
    const now = this.#clock.now();
    if (now < term.deadline) this.#timer = this.#clock.setTimeout(() => this.watch(term), term.deadline - now);
    else this.#begin(term, now);
  }

  /** The lead phase ended: nothing more to watch. */
  unwatch(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /**
   * A renewal of the term failed with `error`. A refusal, not an outage: no ride-through for
   * this term until a renewal is accepted. True when that moved the term's end (endOf) closer.
   */
  refused(term: Term, error: unknown): boolean {
    if (this.#ms === 0 || isOutage(error) || !term.rides) return false;
    term.rides = false;
    return true;
  }

  /** A renewal was accepted and the term's deadline moved on: it may ride through again, and a ride the deadline ended is over. */
  renewed(term: Term): void {
    term.rides = true;
    if (this.#clock.now() < term.deadline) term.ridingSince = undefined;
  }

  /**
   * What one renewal of the term may take, sent now: before the deadline every copy ends
   * there, as always. Riding through, each renewal gets what a renewal gets after an accepted
   * one, T − I, within what is left of the ride, and a copy goes at least every I (`capMs`):
   * the rider must find the service within about I of its return, before a standby's
   * hold-back ends (docs/protocol.md#sticky-recovery).
   */
  renewalBounds(term: Term, timing: LeaseTiming): { readonly deadline: number; readonly capMs: number } {
    const now = this.#clock.now();
    if (now < term.deadline) return { deadline: term.deadline, capMs: Number.POSITIVE_INFINITY };
    return { deadline: Math.min(this.endOf(term), now + (timing.timeoutMs - timing.intervalMs)), capMs: timing.intervalMs };
  }

  /** The deadline passed with no answer, and the term rides through: `ridingThrough`, once per ride. */
  #begin(term: Term, now: number): void {
    if (!this.#leads(term) || now >= this.endOf(term)) return;
    term.ridingSince = now;
    this.#began(term, this.endOf(term) - now);
  }
}

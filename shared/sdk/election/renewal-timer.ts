import type { LeaseTiming } from "../../contract/timing.js";
import { renewalCeilingMs, renewalFloorMs } from "../loop/budgets.js";

/** Jacobson/Karels gains (RFC 6298 §2): SRTT follows 1/8 of each error, RTTVAR 1/4. */
const ALPHA = 1 / 8;
const BETA = 1 / 4;
/** RTO = SRTT + K·RTTVAR. */
const K = 4;
/** Beyond 2^16 the budget is the ceiling anyway; the cap keeps the product finite. */
const MAX_DOUBLINGS = 16;
/** One estimate per transport (see RenewalTimer.of). */
const SHARED = new WeakMap<object, RenewalTimer>();

/**
 * How long a copy of a primary's renewal goes unanswered before the next copy is sent, the
 * earlier copies still awaited (hedged-renewal.ts, docs/protocol.md#timing-rules; why each
 * bound: docs/design/renewal-budget.md#why-these-bounds): TCP's
 * retransmission timeout, its estimate kept for the electors of one transport (see of()).
 * Fed the round trips of answered heartbeats; pure and clock-free (the elector measures,
 * this only keeps the numbers).
 *
 * budget = min(ceil, max(floor, SRTT + 4·RTTVAR) · 2^n), n = copies of this renewal that
 * went unanswered before it, floor = (T − 2I)/8, ceil = max(I, (T − I)/2); but ceil itself
 * for T after any round trip that took longer than the floor (a slow service is queueing,
 * and copies would feed the queue). Before the first answer, the ceiling. With a fast
 * service a lost renewal is sent again after the floor, so four copies (after F, 2F, 4F,
 * then what is left: F) fit between the first renewal (I after the last accepted one) and
 * the deadline (T − I after it); a service that stops answering sees the copies spaced by
 * doubling budgets, at most four per lease. Whatever the round trips, the first copy
 * leaves room for a second one inside the window (see budgetMs).
 */
export class RenewalTimer {
  /**
   * The estimate of one service as seen through one transport: every elector on one
   * HaClient shares it, as TCP keeps its round-trip estimate per destination. Hundreds of
   * primaries then follow the service's round trip within a second (each answer is a sample
   * for all), where each alone would take its own renewals, one per I, to notice a service
   * slowing down near its capacity, and send copies meanwhile. The doubling is not shared:
   * it is each renewal's own (budgetMs' `unanswered`), so that the roles a participant
   * heartbeat carries together, all unanswered when it is lost, each keep the copies a lone
   * elector would send, instead of doubling one another's budget in turn.
   */
  static of(transport: object): RenewalTimer {
    let timer = SHARED.get(transport);
    if (timer === undefined) {
      timer = new RenewalTimer();
      SHARED.set(transport, timer);
    }
    return timer;
  }

  #smoothedMs: number | undefined;
  #variationMs = 0;
  /**
   * When the latest round trip longer than the floor was answered: the budget is the ceiling
   * for T after it, however many fast answers came since. A time, not a count of samples:
   * 400 primaries on one transport answer 256 round trips in under a second, and a window
   * of 256 let the budget fall to the estimate between two slow answers of one queue.
   * A queue lasts while it is being fed; a slow answer more than T ago (a cold service's
   * first acquisition) says nothing about now.
   */
  #slowAnsweredAt: number | undefined;
  /** Whether a renewal has been answered: until then the samples are acquisitions', provisional. */
  #renewalSeen = false;

  /**
   * An answer (accepted or refused) after `roundTripMs`, answered at `at` (the elector's
   * clock): a sample. The first renewal's answer replaces what the acquisitions before it
   * gave: the first acquisitions open the connection (TCP and TLS handshakes), may take a
   * lease over (two store operations) and come when a whole fleet starts, so their round
   * trips say little about a renewal's; left in, they held the budget near its ceiling for
   * half a minute. `timing` is the answering elector's (electors on one transport ask one
   * service, so they share it): its floor tells a slow answer.
   */
  answered(roundTripMs: number, at: number, call: "renewal" | "acquisition", timing: LeaseTiming): void {
    if (call === "renewal" && !this.#renewalSeen) {
      this.#renewalSeen = true;
      this.#smoothedMs = undefined;
      this.#slowAnsweredAt = undefined;
    }
    const sample = Math.max(0, roundTripMs);
    if (this.#smoothedMs === undefined) {
      this.#smoothedMs = sample;
      this.#variationMs = sample / 2;
    } else {
      this.#variationMs = (1 - BETA) * this.#variationMs + BETA * Math.abs(this.#smoothedMs - sample);
      this.#smoothedMs = (1 - ALPHA) * this.#smoothedMs + ALPHA * sample;
    }
    if (sample > renewalFloorMs(timing)) this.#slowAnsweredAt = Math.max(at, this.#slowAnsweredAt ?? at);
  }

  /**
   * How long the copy of a renewal sent at `now` under `timing` waits for an answer before the
   * next copy is sent: `unanswered` copies of this renewal went unanswered before it (each
   * doubles the budget), and `leftMs` are left to the deadline, which bounds it.
   *
   * The first copy always leaves room for a second inside the renewal window. When its
   * budget would send no second copy before the deadline (at T = 3·I the ceiling I is the
   * whole window T − 2I, so after one slow answer one lost request lost the lease), the
   * second copy goes at the deadline less R = SRTT + 4·RTTVAR, so that it is answered in
   * time; or R after the first, if that is later, so that it never goes before the first is
   * overdue; and the floor before the deadline at the latest. Where the ceiling leaves room
   * (T = 5·I and more), nothing changes: copies sent earlier into a queueing service only
   * lengthened the queue (capacity runs at 400 roles × 2).
   */
  budgetMs(timing: LeaseTiming, now: number, unanswered: number, leftMs: number): number {
    const budget = Math.min(this.#backedOffMs(timing, now, unanswered), leftMs);
    const floor = renewalFloorMs(timing);
    if (unanswered > 0 || this.#smoothedMs === undefined || budget < leftMs || leftMs <= 2 * floor) return budget;
    const answerWithinMs = this.#smoothedMs + K * this.#variationMs;
    return Math.min(leftMs - floor, Math.max(floor, leftMs - answerWithinMs, answerWithinMs));
  }

  #backedOffMs(timing: LeaseTiming, now: number, unanswered: number): number {
    const ceiling = renewalCeilingMs(timing);
    if (this.#smoothedMs === undefined) return ceiling;
    // Copies sent at the estimate are for a service that answers within the floor, where a
    // missing answer means a lost message (four copies then fit before the deadline). One
    // that has lately taken longer is queueing: its tail outruns any estimate kept from a
    // few samples a second, and copies sent into it lengthened the queue until leases
    // expired (capacity runs at 400 roles × 2, which the ceiling alone held). Wait the ceiling.
    if (this.#slowAnsweredAt !== undefined && this.#slowAnsweredAt > now - timing.timeoutMs) return ceiling;
    const doublings = Math.min(MAX_DOUBLINGS, Math.max(0, unanswered));
    return Math.min(ceiling, Math.max(renewalFloorMs(timing), this.#smoothedMs + K * this.#variationMs) * 2 ** doublings);
  }
}

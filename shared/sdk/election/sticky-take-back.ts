import type { LeaseView } from "../../contract/lease-view.js";
import type { ReleaseResult } from "../../contract/outcomes.js";
import { isOutage } from "../loop/poll-delays.js";
import { ContactHoldBack } from "./contact-hold-back.js";
import { handoverFavours, type LeadEnd, type Term } from "./elector-role.js";

/**
 * Sticky recovery, both sides (docs/protocol.md#sticky-recovery): after an outage the role
 * is its holder's to take back. A term that ended for want of answers (the service or its
 * store out, for everyone or for this process alone), or was given up by resign() with no
 * cool-down, is kept here (ended): while no answer shows another term since, this elector takes it
 * back at once, under a new uuid and so a new epoch, and no standby's hold-back stands in
 * its way. As a standby, this elector holds back its takeovers of a role whose holder may
 * come back (contact-hold-back.ts decides how long) and here, which roles that applies to.
 * Bookkeeping on the elector's clock; the elector decides when to look, release and acquire.
 */
export class StickyTakeBack {
  /** Lost contact with the service holds back takeovers of a role its holder may come back to (holdBackUntil). */
  readonly #contact = new ContactHoldBack();
  /** The latest answer's view: the role the takeover planned from it is about. */
  #lastView: LeaseView | undefined;
  /** This elector's last term, still its own to take back; undefined when there is none. */
  #last: { readonly uuid: string; readonly epoch: number; readonly lease: string } | undefined;

  /**
   * Whether a last term is this elector's to take back: it then looks every I, off the
   * participant's grid and with no failure backoff, to find the service within about I of its
   * return, before a standby's hold-back ends.
   */
  get pending(): boolean {
    return this.#last !== undefined;
  }

  /**
   * A term this elector led ended for `reason` (`failing`: its last call got no answer;
   * `resignCooldownMs`: the last resign()'s). True when it ended for want of answers: the
   * deadline passed because the renewals got no answer, the service down or past its
   * capacity. A release would most likely go unanswered too and only add to its load, and
   * releasing to compete again at once is the release-and-reacquire churn of a retry storm.
   * So nothing is to be released then, and the role is still this elector's to take back: the
   * new incarnation looks every I (no backoff, a look rather than a write) until it gets an
   * answer, and takes the role back at once if that answer shows no other term since
   * (standbys that lost contact too hold back meanwhile); under its new uuid, so the next
   * term has a new epoch and the work stopped at the deadline never resumes under the old one.
   *
   * Resigned with no cool-down (`run` after it had to stop its command: the lease ran low in
   * an outage, or the watchdog fired), a new epoch is all it asks for, not another holder: the
   * role is kept to take back too, as after an outage (its release may well go unanswered, and
   * a standby that lost contact too holds back for it), but released as any resignation (false).
   */
  ended(term: Term, reason: LeadEnd["reason"], failing: boolean, resignCooldownMs: number): boolean {
    const unanswered = reason === "lease-expired" && failing;
    if (unanswered || (reason === "resigned" && resignCooldownMs === 0)) this.#last = { uuid: term.uuid, epoch: term.epoch, lease: term.lease };
    return unanswered;
  }

  /** A term began: nothing left to take back. */
  elected(): void {
    this.#last = undefined;
  }

  /** The service answered at `at`, showing `view`. Another term began (or the service forgot the role): nothing left to take back. */
  answered(at: number, view: LeaseView): void {
    this.#contact.answered(at, view);
    this.#lastView = view;
    if (this.#last !== undefined && view.epoch !== this.#last.epoch) this.#last = undefined;
  }

  /** A call sent at `sentAt` failed with `error`: an outage may hold back takeovers (contact-hold-back.ts). */
  failed(error: unknown, sentAt: number): void {
    if (isOutage(error)) this.#contact.failed(sentAt);
  }

  /**
   * Before when this elector (as `uuid`) may take the role the last answer showed, by the
   * hold-back of lost contact (contact-hold-back.ts), −∞ when nothing holds it back. A role
   * nobody ever held, one this elector's uuid holds, this elector's own last term (shows),
   * and a planned handover to it or to any are not held back: no holder is on its way back
   * to them, or the holder itself handed over.
   */
  holdBackUntil(uuid: string): number {
    const view = this.#lastView;
    if (view === undefined || view.epoch === 0 || view.primary?.uuid === uuid || this.shows(view) || handoverFavours(view, uuid)) return Number.NEGATIVE_INFINITY;
    return this.#contact.until(view);
  }

  /** The view shows this elector's last term as the role's last: live under its old uuid, or vacant since. */
  shows(view: LeaseView): boolean {
    const own = this.#last;
    if (own === undefined || view.epoch !== own.epoch) return false;
    return view.primary === null || view.primary.uuid === own.uuid;
  }

  /**
   * A proven release of the last term, whose lease is still live (no answer since showed
   * another term): `send` releases that uuid with that token (undefined when unanswered).
   * True when the answer shows the role vacant at that term's epoch, so that the new
   * incarnation may acquire it at once (a new epoch). Safe as any proven release: the work
   * of that term stopped at its deadline.
   */
  async release(send: (uuid: string, lease: string) => Promise<ReleaseResult | undefined>): Promise<boolean> {
    const own = this.#last;
    if (own === undefined) return false;
    const released = await send(own.uuid, own.lease);
    return released !== undefined && released.outcome === "released" && released.view.primary === null && released.view.epoch === own.epoch;
  }
}

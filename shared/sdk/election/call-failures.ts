import type { LeaseTiming } from "../../contract/timing.js";
import { backoffMs, failureBackoffMs, isRefusal, retryAfterOf } from "../loop/poll-delays.js";

/** A call that was answered or failed: a read (GetPrimary) or a write (renewals, acquires, releases). */
export type CallKind = "read" | "write";

/**
 * The elector's failed calls in a row, and what they hold a follower's next call back by
 * (docs/protocol.md#the-clients-side): the backoff after calls that got no answer, after
 * calls no retry can fix (refusals), and the service's Retry-After. Renewals ignore all of
 * it. Bookkeeping on the elector's clock and random draws (the jitter of failureBackoffMs
 * draws one only when it applies, as before).
 */
export class CallFailures {
  readonly #retryDelayMs: number;
  readonly #random: () => number;
  /**
   * Calls in a row that no retry can fix (see isRefusal), reads and writes apart: a read's
   * refusals end with any answer, a write's only with a write's answer (accepted or 409).
   * Grants refuse writes while reads are answered (403), and an answered read must not end
   * the backoff of the writes it leads to (see afterRefusal).
   */
  #refusals = { read: 0, write: 0 };
  /** Failed calls in a row of any kind (timeouts, 503s, refusals); any answer resets it. */
  #failures = 0;
  /** No follower call before this time: the service's last Retry-After. */
  #notBefore = Number.NEGATIVE_INFINITY;

  constructor(retryDelayMs: number, random: () => number) {
    this.#retryDelayMs = retryDelayMs;
    this.#random = random;
  }

  /** Whether the last call failed (no answer since). */
  get failing(): boolean {
    return this.#failures > 0;
  }

  /** Whether the last write was refused (a grant the caller lacks): no write has been answered since. */
  get writesRefused(): boolean {
    return this.#refusals.write > 0;
  }

  /** No follower call before this time (monotonic): the service's last Retry-After. */
  get notBefore(): number {
    return this.#notBefore;
  }

  /** The service answered a call of kind `call`; a read's answer does not end the refusals of writes. */
  answered(call: CallKind): void {
    this.#refusals = { read: 0, write: call === "write" ? 0 : this.#refusals.write };
    this.#failures = 0;
  }

  /** A call of kind `call` failed with `error` at `now`. */
  failed(error: unknown, call: CallKind, now: number): void {
    this.#failures += 1;
    if (isRefusal(error)) this.#refusals = { ...this.#refusals, [call]: this.#refusals[call] + 1 };
    const retryAfterMs = retryAfterOf(error);
    if (retryAfterMs !== undefined) this.#notBefore = Math.max(this.#notBefore, now + retryAfterMs);
  }

  /**
   * A follower's next call after one that got no answer: a jittered backoff from when it
   * started (failureBackoffMs), and not before the service's Retry-After. Never earlier
   * than `pollAt`, the time already planned. (A call cut off by the elector itself is no
   * failure and changes nothing.) `looksEveryInterval`: a holder whose term ended for want
   * of answers (sticky-take-back.ts) looks every I, to find the service within about I of
   * its return, unless it was refused.
   */
  afterFailure(pollAt: number, startedAt: number, timing: LeaseTiming | undefined, looksEveryInterval: boolean): number {
    if (this.#failures === 0) return pollAt;
    if (looksEveryInterval && this.#refusals.read === 0 && this.#refusals.write === 0) return Math.max(pollAt, this.#notBefore);
    return Math.max(pollAt, startedAt + failureBackoffMs(this.#failures, timing, this.#retryDelayMs, this.#random), this.#notBefore);
  }

  /**
   * A follower's next call after calls no retry can fix (a wrong key or endpoint, a write
   * outside the caller's grants): I·2^(n−1) after this one started, up to T (backoffMs; n
   * the refusals in a row, reads or writes, whichever are more), stretched as every poll
   * is, and never earlier than `pollAt`. A refused write holds the whole poll back, reads
   * included, however the reads are answered: a worker refused by its grants asks 2·I,
   * 4·I, … up to T apart, not every I for ever.
   */
  afterRefusal(pollAt: number, startedAt: number, stretch: number, timing: LeaseTiming | undefined): number {
    const refusals = Math.max(this.#refusals.read, this.#refusals.write);
    if (refusals === 0) return pollAt;
    return Math.max(pollAt, startedAt + backoffMs(refusals - 1, timing, this.#retryDelayMs) * stretch);
  }
}

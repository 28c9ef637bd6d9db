import type { LeaseTiming } from "../../contract/timing.js";
import { RoundTripWindow } from "./round-trip-stats.js";
import { SlowRoundTripWarning } from "./slow-round-trip-warning.js";

/** An elector's counters since start() (`elector.stats()`), also exported as metrics when the `meter` option is given. */
export interface ElectorStats {
  /** Round trips of answered heartbeats (UpdateHeartBeat), over the last 1024. */
  readonly heartbeatRoundTrip: { readonly count: number; readonly p50Ms: number | undefined; readonly p99Ms: number | undefined };
  /** Calls that failed: timeouts, refusals, unreachable service, corrupted answers. */
  readonly failures: number;
  /**
   * Time since start() during which this elector could not see a live primary: each answer
   * that shows a live lease (its own included) covers the time until that lease's
   * expiresInMs runs out; everything else counts — answers showing none, and failed calls
   * once what the last answer showed has run out. Stops counting at stop().
   */
  readonly withoutPrimaryMs: number;
  /** Terms this elector won. */
  readonly elections: number;
  /** Terms that ended, for any reason. */
  readonly demotions: number;
}

/** Round trips needed before the p99 is trusted enough to warn about. */
const MIN_SAMPLES_FOR_WARNING = 10;

/** The elector's counters, and the one judgement made of them: whether round trips eat the margin. */
export class ElectorStatistics {
  readonly #roundTrips = new RoundTripWindow();
  #slowWarned = false;
  #failures = 0;
  #elections = 0;
  #demotions = 0;
  #withoutPrimaryMs = 0;
  /** Time up to which #withoutPrimaryMs is counted; undefined before start() and after stop(). */
  #countedTo: number | undefined;
  /** Until when the last answer showed a live lease; undefined when it showed none. */
  #seenLiveUntil: number | undefined;

  /**
   * Adds an answered heartbeat's round trip. Returns a warning when the p99 first exceeds a
   * tenth of T − I (once, until it falls back under), else undefined.
   */
  roundTrip(ms: number, timing: LeaseTiming): SlowRoundTripWarning | undefined {
    this.#roundTrips.add(ms);
    if (this.#roundTrips.count < MIN_SAMPLES_FOR_WARNING) return undefined;
    const margin = timing.timeoutMs - timing.intervalMs;
    const p99 = this.#roundTrips.percentile(99) ?? 0;
    if (p99 <= margin / 10) {
      this.#slowWarned = false;
      return undefined;
    }
    if (this.#slowWarned) return undefined;
    this.#slowWarned = true;
    return new SlowRoundTripWarning(p99, margin);
  }

  failed(): void {
    this.#failures += 1;
  }

  elected(): void {
    this.#elections += 1;
  }

  demoted(): void {
    this.#demotions += 1;
  }

  /** start(): the time without a primary is counted from now. */
  startClock(now: number): void {
    this.#countedTo = now;
  }

  /** An answer arrived: a live lease that runs out in `expiresInMs`, or none (undefined). */
  observed(now: number, expiresInMs: number | undefined): void {
    this.#countTo(now);
    this.#seenLiveUntil = expiresInMs === undefined ? undefined : now + Math.max(0, expiresInMs);
  }

  /** stop(): the count ends here. */
  stopClock(now: number): void {
    this.#countTo(now);
    this.#countedTo = undefined;
  }

  #countTo(now: number): void {
    this.#withoutPrimaryMs += this.#uncountedUntil(now);
    if (this.#countedTo !== undefined) this.#countedTo = now;
  }

  /** The part of (countedTo, now] not covered by the last live lease seen. */
  #uncountedUntil(now: number): number {
    if (this.#countedTo === undefined) return 0;
    const from = this.#seenLiveUntil === undefined ? this.#countedTo : Math.max(this.#countedTo, this.#seenLiveUntil);
    return Math.max(0, now - from);
  }

  snapshot(now: number): ElectorStats {
    return {
      heartbeatRoundTrip: {
        count: this.#roundTrips.count,
        p50Ms: this.#roundTrips.percentile(50),
        p99Ms: this.#roundTrips.percentile(99),
      },
      failures: this.#failures,
      withoutPrimaryMs: this.#withoutPrimaryMs + this.#uncountedUntil(now),
      elections: this.#elections,
      demotions: this.#demotions,
    };
  }
}

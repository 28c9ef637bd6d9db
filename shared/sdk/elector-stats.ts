import type { LeaseTiming } from "../contract/timing.js";
import { RoundTripWindow } from "./round-trip-stats.js";
import { SlowRoundTripWarning } from "./slow-round-trip-warning.js";

export interface ElectorStats {
  /** Round trips of answered heartbeats (UpdateHeartBeat), over the last 1024. */
  readonly heartbeatRoundTrip: { readonly count: number; readonly p50Ms: number | undefined; readonly p99Ms: number | undefined };
  /** Calls that failed: timeouts, refusals, unreachable service, corrupted answers. */
  readonly failures: number;
  /** Total time during which this elector's last observation was "no live primary". */
  readonly withoutPrimaryMs: number;
  readonly elections: number;
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
  #withoutPrimarySince: number | undefined;

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

  /** An answer showed a live primary (`true`) or none. */
  observed(now: number, primary: boolean): void {
    if (!primary) {
      this.#withoutPrimarySince ??= now;
    } else {
      this.stopClock(now);
    }
  }

  /** Stops counting time without a primary (an answer showed one, or the elector stopped). */
  stopClock(now: number): void {
    if (this.#withoutPrimarySince === undefined) return;
    this.#withoutPrimaryMs += now - this.#withoutPrimarySince;
    this.#withoutPrimarySince = undefined;
  }

  snapshot(now: number): ElectorStats {
    return {
      heartbeatRoundTrip: {
        count: this.#roundTrips.count,
        p50Ms: this.#roundTrips.percentile(50),
        p99Ms: this.#roundTrips.percentile(99),
      },
      failures: this.#failures,
      withoutPrimaryMs: this.#withoutPrimaryMs + (this.#withoutPrimarySince === undefined ? 0 : now - this.#withoutPrimarySince),
      elections: this.#elections,
      demotions: this.#demotions,
    };
  }
}

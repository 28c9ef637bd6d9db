import type { ElectorStats } from "./elector-stats.js";

/**
 * The part of an OpenTelemetry Meter (`metrics.getMeter(…)` of @opentelemetry/api) the
 * elector uses. Declared here rather than imported so the SDK depends on no OpenTelemetry
 * package: any Meter fits (a test pins that).
 */
export interface ElectorMeter {
  /** Makes an observable counter: the elector's elections, demotions, failures and time without a primary. */
  createObservableCounter(name: string, options?: InstrumentOptions): ElectorObservable;
  /** Makes an observable gauge: the heartbeat round trip's p50 and p99. */
  createObservableGauge(name: string, options?: InstrumentOptions): ElectorObservable;
  /** Registers the callback that observes the elector's instruments at each collection. */
  addBatchObservableCallback(callback: ElectorBatchCallback, observables: ElectorObservable[]): void;
  /** Unregisters it, at stop(). */
  removeBatchObservableCallback(callback: ElectorBatchCallback, observables: ElectorObservable[]): void;
}

/** What the elector tells the meter of each instrument. */
export interface InstrumentOptions {
  /** What the instrument counts or measures, in words. */
  readonly description?: string;
  /** Its unit, e.g. "ms". */
  readonly unit?: string;
}

/** An observable instrument, as the meter made it; the elector only hands it back. */
export type ElectorObservable = object;

/** The callback the elector registers: it reports every instrument's value through `observer`. */
export type ElectorBatchCallback = (observer: { observe(observable: ElectorObservable, value: number, attributes?: Record<string, string>): void }) => void;

/** The role an elector's metrics are labelled with: its utype. */
export const ROLE_ATTRIBUTE = "ha.role";

/** Checks the `meter` option where it enters. */
export function checkOptionalMeter(value: unknown): ElectorMeter | undefined {
  if (value === undefined) return undefined;
  const meter = value as Partial<Record<keyof ElectorMeter, unknown>> | null;
  if (
    typeof meter !== "object" ||
    meter === null ||
    typeof meter.createObservableCounter !== "function" ||
    typeof meter.createObservableGauge !== "function" ||
    typeof meter.addBatchObservableCallback !== "function" ||
    typeof meter.removeBatchObservableCallback !== "function"
  ) {
    throw new TypeError(
      "Expected `meter` to be an OpenTelemetry Meter, such as metrics.getMeter(\"my-app\") from @opentelemetry/api (with createObservableCounter, createObservableGauge and add/removeBatchObservableCallback).",
    );
  }
  return value as ElectorMeter;
}

/**
 * Exposes stats() as observable instruments on `meter`, labelled `ha.role` = utype, read
 * once per collection (one stats() call per export; nothing runs between exports, so no
 * heartbeat pays for it). Returns the function that unregisters them.
 *
 *   ha.elector.elections, ha.elector.demotions, ha.elector.failures   counters
 *   ha.elector.without_primary.time                                   counter, seconds
 *   ha.elector.heartbeat.round_trip.p50, …p99                          gauges, seconds, over the last 1024
 */
export function observeElectorStats(meter: ElectorMeter, utype: string, stats: () => ElectorStats): () => void {
  const elections = meter.createObservableCounter("ha.elector.elections", { description: "Times this elector became primary.", unit: "{election}" });
  const demotions = meter.createObservableCounter("ha.elector.demotions", { description: "Times this elector stopped being primary.", unit: "{demotion}" });
  const failures = meter.createObservableCounter("ha.elector.failures", {
    description: "Calls to the service that failed: timeouts, refusals, unreachable service, corrupted answers.",
    unit: "{call}",
  });
  const withoutPrimary = meter.createObservableCounter("ha.elector.without_primary.time", {
    description: "Time since start() during which this elector saw no live primary.",
    unit: "s",
  });
  const p50 = meter.createObservableGauge("ha.elector.heartbeat.round_trip.p50", { description: "Median heartbeat round trip, over the last 1024.", unit: "s" });
  const p99 = meter.createObservableGauge("ha.elector.heartbeat.round_trip.p99", {
    description: "99th percentile heartbeat round trip, over the last 1024; compare with T − I.",
    unit: "s",
  });
  const attributes = Object.freeze({ [ROLE_ATTRIBUTE]: utype });
  const observables = [elections, demotions, failures, withoutPrimary, p50, p99];
  const callback: ElectorBatchCallback = (observer) => {
    const now = stats();
    observer.observe(elections, now.elections, attributes);
    observer.observe(demotions, now.demotions, attributes);
    observer.observe(failures, now.failures, attributes);
    observer.observe(withoutPrimary, now.withoutPrimaryMs / 1000, attributes);
    // No round trip measured yet: no value, rather than a misleading 0.
    if (now.heartbeatRoundTrip.p50Ms !== undefined) observer.observe(p50, now.heartbeatRoundTrip.p50Ms / 1000, attributes);
    if (now.heartbeatRoundTrip.p99Ms !== undefined) observer.observe(p99, now.heartbeatRoundTrip.p99Ms / 1000, attributes);
  };
  meter.addBatchObservableCallback(callback, observables);
  return () => meter.removeBatchObservableCallback(callback, observables);
}

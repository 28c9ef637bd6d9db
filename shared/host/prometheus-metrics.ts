import { PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import type { Meter } from "@opentelemetry/api";

/** A reader that collects only when asked: the scrape is the only export, with no timer and no server. */
class ScrapeReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

export interface PrometheusMetrics {
  /** The meter the runtime's instruments are made on. */
  readonly meter: Meter;
  /** Everything measured so far in this process (cumulative), as Prometheus text. */
  text(): Promise<string>;
  shutdown(): Promise<void>;
}

/**
 * The local host's metrics: a MeterProvider of its own (not the global one, so two hosts in
 * one process, as in tests, count apart) whose reader is read on each GET /api/metrics and
 * written with the Prometheus exporter's serializer. The exporter's own HTTP server is never
 * started: the metrics are one more route of the host, behind the same API key.
 */
export function createPrometheusMetrics(meterName: string): PrometheusMetrics {
  const reader = new ScrapeReader();
  const provider = new MeterProvider({ readers: [reader] });
  const serializer = new PrometheusSerializer();
  return {
    meter: provider.getMeter(meterName),
    async text() {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw new AggregateError(errors, "Collecting the metrics failed.");
      return serializer.serialize(resourceMetrics);
    },
    shutdown: () => provider.shutdown(),
  };
}

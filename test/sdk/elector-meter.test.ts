import { describe, expect, it } from "vitest";
import { METER_NAME } from "../../shared/http/metric-names.js";
import { createPrometheusMetrics } from "../../shared/host/prometheus-metrics.js";
import type { ElectorMeter } from "../../shared/sdk/index.js";
import { PrimaryElector, type PrimaryElectorOptions } from "../../shared/sdk/election/primary-elector.js";
import { FakeClock, settle } from "../helpers/fake-clock.js";
import { sumOf } from "../helpers/prometheus-text.js";
import { I, leaseView, primaryView, ScriptedTransport, T } from "../helpers/sdk-fakes.js";

const UTYPE = "scheduler";

function elector(options: Partial<PrimaryElectorOptions>) {
  const clock = new FakeClock();
  const transport = new ScriptedTransport(clock);
  const made = new PrimaryElector({ utype: UTYPE, transport, clock, newUuid: () => "uuid-1", random: () => 0, announce: false, ...options });
  /** start() → GetPrimary shows none → the heartbeat is accepted after `roundTripMs`. */
  const becomePrimary = async (roundTripMs: number): Promise<void> => {
    made.start();
    await clock.advance(0);
    transport.take("getPrimary", UTYPE).respond(leaseView(UTYPE, null));
    await settle();
    const put = transport.take("heartbeat", UTYPE);
    await clock.advance(roundTripMs);
    put.respond({ outcome: "accepted", view: leaseView(UTYPE, primaryView({ uuid: "uuid-1", epoch: 1, expiresInMs: T }), { intervalMs: I, timeoutMs: T }), lease: "token-1" });
    await settle();
  };
  const stop = async (): Promise<void> => {
    const stopping = made.stop();
    await settle();
    transport.take("release").respond({ outcome: "released", view: leaseView(UTYPE, null, { intervalMs: I, timeoutMs: T }, 1) });
    await stopping;
  };
  return { clock, made, becomePrimary, stop };
}

describe("PrimaryElector's meter option: stats() as OpenTelemetry metrics", () => {
  it("exports stats() on a real OpenTelemetry Meter, labelled with the role, in seconds", async () => {
    const metrics = createPrometheusMetrics(METER_NAME);
    const meter: ElectorMeter = metrics.meter; // any @opentelemetry/api Meter fits the option's type
    const { made, becomePrimary, stop } = elector({ meter });
    await becomePrimary(40);
    expect(made.isPrimary()).toBe(true);
    const text = await metrics.text();
    const role = { ha_role: UTYPE };
    expect(sumOf(text, "ha_elector_elections_total", role)).toBe(1);
    expect(sumOf(text, "ha_elector_demotions_total", role)).toBe(0);
    expect(sumOf(text, "ha_elector_failures_total", role)).toBe(made.stats().failures);
    expect(sumOf(text, "ha_elector_heartbeat_round_trip_p99", role)).toBe(0.04);
    expect(sumOf(text, "ha_elector_without_primary_time_total", role)).toBeCloseTo(made.stats().withoutPrimaryMs / 1000, 6);
    await stop();
  });

  it("observes only while started: registered at start(), unregistered once stop() ends, and stats() read only on collection", async () => {
    const registered: unknown[] = [];
    const removed: unknown[] = [];
    const fake: ElectorMeter = {
      createObservableCounter: () => ({}),
      createObservableGauge: () => ({}),
      addBatchObservableCallback: (callback) => void registered.push(callback),
      removeBatchObservableCallback: (callback) => void removed.push(callback),
    };
    const { made, becomePrimary, stop } = elector({ meter: fake });
    expect(registered).toHaveLength(0);
    await becomePrimary(10);
    expect(registered).toHaveLength(1);
    expect(made.stats().elections).toBe(1);
    await stop();
    expect(removed).toEqual(registered);
  });

  it("refuses a meter that is not one, naming the option", () => {
    const bad = { createCounter: () => ({}) } as unknown as ElectorMeter;
    expect(() => elector({ meter: bad })).toThrow(/Expected `meter` to be an OpenTelemetry Meter, such as metrics.getMeter/);
    expect(() => elector({ meter: null as unknown as ElectorMeter })).toThrow(TypeError);
  });
});

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ATTRIBUTE, METRIC } from "../../shared/http/metric-names.js";

/**
 * docs/operations.md names the metrics an operator queries (PromQL, KQL, alerts): every name
 * the service emits must be documented, and every ha./db. metric name the page uses must be
 * one the service or the SDK emits, so a rename cannot leave the queries behind.
 */
const doc = readFileSync(new URL("../../docs/operations.md", import.meta.url), "utf8");
const SDK_METRICS = [
  "ha.elector.elections",
  "ha.elector.demotions",
  "ha.elector.failures",
  "ha.elector.without_primary.time",
  "ha.elector.heartbeat.round_trip.p50",
  "ha.elector.heartbeat.round_trip.p99",
];
const prometheus = (name: string): string => name.replaceAll(".", "_");

describe("docs/operations.md", () => {
  it("documents every metric and attribute the service emits, by its OpenTelemetry and Prometheus names", () => {
    for (const name of Object.values(METRIC)) {
      expect(doc, name).toContain(`\`${name}\``);
      expect(doc, prometheus(name)).toContain(prometheus(name));
    }
    for (const name of Object.values(ATTRIBUTE)) expect(doc, name).toContain(name);
  });

  it("queries only metrics that exist: every ha.* or db.* metric name in a KQL query is emitted", () => {
    const known = new Set<string>([...Object.values(METRIC), ...SDK_METRICS]);
    const queried = [...doc.matchAll(/name (?:==|in) \(?((?:"[^"]+"(?:, )?)+)/g)].flatMap((found) => [...found[1]!.matchAll(/"([^"]+)"/g)].map((name) => name[1]!));
    expect(queried.length).toBeGreaterThan(4);
    expect(queried.filter((name) => !known.has(name) && name !== "updateHeartBeat")).toEqual([]);
  });

  it("links the dashboard page and its screenshot", () => {
    expect(doc).toContain("](dashboard.md)");
    expect(doc).toContain("](dashboard.png)");
  });
});

import { beforeEach, describe, expect, it } from "vitest";
import { timers } from "../../functions/timers.js";
import { InvocationContext } from "../../shared/http/azure-functions.js";
import { METER_NAME } from "../../shared/http/metric-names.js";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import { createPrometheusMetrics, type PrometheusMetrics } from "../../shared/host/prometheus-metrics.js";
import type { LeaseStore } from "../../shared/lease/lease-store.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import type { MemberStore } from "../../shared/members/member-store.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { MemoryMemberStore } from "../../shared/store/members-memory-store.js";
import { CountingMemberStore } from "../helpers/counting-member-store.js";
import { CountingStore, failingStore } from "../helpers/counting-store.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { countsBy, sumOf } from "../helpers/prometheus-text.js";
import { send, WALL_START } from "../helpers/route-requests.js";

const I = 200;
const T = 1000;
const SECRET = "a-test-secret-that-is-long-enough-for-hmac";
const MEMBERS = { ttlMs: 3000, retentionMs: 1000, maxPerGroup: 1000, sweepSchedule: "*/1 * * * * *", sweepPeriodMs: 500 };
const sweepMembers = timers.find((timer) => timer.name === "sweepMembers")!;

function build(clock: FakeClock, leases: LeaseStore, members: MemberStore, metrics?: PrometheusMetrics): Runtime {
  return createRuntime({ timing: { intervalMs: I, timeoutMs: T }, storeTimeoutMs: 2000, leaseSecret: SECRET, members: MEMBERS }, { leases, clock, members, telemetry: metrics === undefined ? {} : { meter: metrics.meter, metricsText: () => metrics.text() } });
}

const sweep = (runtime: Runtime): Promise<void> => sweepMembers.handler(runtime, new InvocationContext({ logHandler: () => undefined }));

describe("the service's metrics, on an injected clock", () => {
  let clock: FakeClock;
  let metrics: PrometheusMetrics;
  let runtime: Runtime;

  beforeEach(() => {
    clock = new FakeClock(WALL_START);
    metrics = createPrometheusMetrics(METER_NAME);
    runtime = build(clock, new MemoryLeaseStore(), new MemoryMemberStore(), metrics);
  });

  it("counts each heartbeat by outcome: acquired, renewed (fast and slow), rejected, taken-over, revoked", async () => {
    const first = await send(runtime, "PUT", "/primary/r", { uuid: "a" });
    await send(runtime, "PUT", "/primary/r", { uuid: "a", lease: first.body["lease"] }); // fast path
    await send(runtime, "PUT", "/primary/r", { uuid: "a" }); // slow path
    await send(runtime, "PUT", "/primary/r", { uuid: "b" }); // held by a
    await clock.advance(T + 1);
    await send(runtime, "PUT", "/primary/r", { uuid: "b" }); // a expired: a failover
    await send(runtime, "PUT", "/primary/r", { uuid: "a" }); // a's term ended
    expect(countsBy(await metrics.text(), "ha_lease_heartbeats_total", "ha_outcome")).toEqual({
      acquired: 1,
      renewed: 2,
      rejected: 1,
      "taken-over": 1,
      revoked: 1,
    });
  });

  it("counts a new term after a proven release as acquired, not taken over: only a failover is a takeover", async () => {
    const first = await send(runtime, "PUT", "/primary/r", { uuid: "a" });
    expect((await send(runtime, "DELETE", `/primary/r?uuid=a&lease=${encodeURIComponent(String(first.body["lease"]))}`)).status).toBe(200);
    await send(runtime, "PUT", "/primary/r", { uuid: "b" });
    const text = await metrics.text();
    expect(countsBy(text, "ha_lease_heartbeats_total", "ha_outcome")).toEqual({ acquired: 2 });
    expect(countsBy(text, "ha_lease_releases_total", "ha_outcome")).toEqual({ released: 1 });
  });

  it("counts preemptions per role: once per handover a standby of higher priority asked for", async () => {
    await send(runtime, "PUT", "/primary/r", { uuid: "a" });
    await send(runtime, "PUT", "/primary/r", { uuid: "h", priority: 1, announce: true, preempt: true });
    await send(runtime, "PUT", "/primary/r", { uuid: "h", priority: 1, announce: true, preempt: true }); // already pending: not again
    await send(runtime, "PUT", "/primary/s", { uuid: "c", priority: 2 });
    await send(runtime, "PUT", "/primary/s", { uuid: "d", priority: 1, announce: true, preempt: true }); // lower than the holder
    expect(countsBy(await metrics.text(), "ha_lease_preemptions_total", "ha_utype")).toEqual({ r: 1 });
  });

  it("counts releases by outcome: a revoke without the token, and a release refused to a non-holder", async () => {
    await send(runtime, "PUT", "/primary/r", { uuid: "a" });
    await send(runtime, "DELETE", "/primary/r?uuid=a"); // no token: revoke
    await send(runtime, "PUT", "/primary/s", { uuid: "c" });
    await send(runtime, "DELETE", "/primary/s?uuid=d"); // c holds s: 409 LeaseHeld
    expect(countsBy(await metrics.text(), "ha_lease_releases_total", "ha_outcome")).toEqual({ revoked: 1, held: 1 });
  });

  it("times every store call by store, system, operation and result", async () => {
    await send(runtime, "PUT", "/primary/r", { uuid: "a" }); // read + create
    await send(runtime, "GET", "/primary/r"); // read
    const text = await metrics.text();
    const count = (operation: string, result = "ok"): number =>
      sumOf(text, "db_client_operation_duration_count", { ha_store: "leases", db_operation_name: operation, ha_store_result: result, db_system_name: "memory" });
    expect([count("read"), count("create")]).toEqual([2, 1]);
  });

  it("counts a store failure: the heartbeat as unavailable, the store call as unavailable with error.type", async () => {
    const failing = build(clock, failingStore(new StoreUnavailableError("down")), new MemoryMemberStore(), metrics);
    expect((await send(failing, "PUT", "/primary/r", { uuid: "a" })).status).toBe(503);
    expect((await send(failing, "DELETE", "/primary/r?uuid=a")).status).toBe(503);
    const text = await metrics.text();
    expect(countsBy(text, "ha_lease_heartbeats_total", "ha_outcome")).toEqual({ unavailable: 1 });
    expect(countsBy(text, "ha_lease_releases_total", "ha_outcome")).toEqual({ unavailable: 1 });
    expect(sumOf(text, "db_client_operation_duration_count", { db_operation_name: "read", ha_store_result: "unavailable", error_type: "StoreUnavailable" })).toBe(2);
  });

  it("counts member transitions (joined, rejoined, left, removed) and sweeps", async () => {
    await send(runtime, "PUT", "/members/g/m1", { session: "s1" });
    await send(runtime, "PUT", "/members/g/m2", { session: "s2" });
    await send(runtime, "PUT", "/members/g/m1", { session: "s1" }); // a renewal: no transition
    await send(runtime, "DELETE", "/members/g/m2?session=s2");
    await send(runtime, "PUT", "/members/g/m2", { session: "s3" }); // a new session replaces the leaving one
    await send(runtime, "DELETE", "/members/g/m2?session=s3");
    await clock.advance(MEMBERS.retentionMs + 1);
    await send(runtime, "PUT", "/members/g/m1", { session: "s1" });
    await sweep(runtime);
    const text = await metrics.text();
    expect(countsBy(text, "ha_members_transitions_total", "ha_transition")).toEqual({ joined: 2, rejoined: 1, left: 2, removed: 1 });
    expect(countsBy(text, "ha_members_sweeps_total", "ha_sweep_result")).toEqual({ completed: 1 });
    expect(sumOf(text, "ha_members_sweep_duration_count")).toBe(1);
  });

  it("serves the text at GET /api/metrics as Prometheus exposition, and refuses an unknown query parameter", async () => {
    await send(runtime, "PUT", "/primary/r", { uuid: "a" });
    expect((await send(runtime, "GET", "/metrics")).status).toBe(200);
    expect(sumOf(await scrapeText(runtime), "ha_lease_heartbeats_total", { ha_outcome: "acquired" })).toBe(1);
    expect((await send(runtime, "GET", "/metrics?verbose=1")).body).toMatchObject({ error: { code: "InvalidRequest" } });
  });
});

describe("metrics cost no store call", () => {
  it("makes the same store calls, in the same order, with metrics on as without, over every route and a sweep", async () => {
    const script = async (runtime: Runtime, clock: FakeClock): Promise<void> => {
      const first = await send(runtime, "PUT", "/primary/r", { uuid: "a" });
      await send(runtime, "PUT", "/primary/r", { uuid: "a", lease: first.body["lease"] });
      await send(runtime, "PUT", "/primary/r", { uuid: "b" });
      await send(runtime, "GET", "/primary/r");
      await send(runtime, "GET", "/primary");
      await send(runtime, "GET", "/health");
      await send(runtime, "DELETE", "/primary/r?uuid=a");
      await send(runtime, "PUT", "/members/g/m", { session: "s" });
      await send(runtime, "GET", "/members/g");
      await send(runtime, "GET", "/members");
      await send(runtime, "GET", "/metrics");
      await clock.advance(5000);
      await sweep(runtime);
    };
    const run = async (withMetrics: boolean): Promise<string[]> => {
      const clock = new FakeClock(WALL_START);
      const leases = new CountingStore(new MemoryLeaseStore());
      const members = new CountingMemberStore(new MemoryMemberStore());
      await script(build(clock, leases, members, withMetrics ? createPrometheusMetrics(METER_NAME) : undefined), clock);
      return [...leases.calls.map((call) => `lease:${call}`), ...members.calls.map((call) => `member:${call}`)];
    };
    const without = await run(false);
    expect(without.length).toBeGreaterThan(10);
    expect(await run(true)).toEqual(without);
  });
});

/** The body of GET /api/metrics, through the same dispatcher as every route. */
async function scrapeText(runtime: Runtime): Promise<string> {
  const { handleRoute } = await import("../../shared/http/dispatch.js");
  const { routesOf } = await import("../../shared/http/route.js");
  const { operations } = await import("../../functions/routes.js");
  const { HttpRequest } = await import("../../shared/http/azure-functions.js");
  const route = routesOf(operations).find((found) => found.route === "metrics")!;
  const response = await handleRoute(route, new HttpRequest({ method: "GET", url: "http://localhost/api/metrics" }), new InvocationContext(), async () => runtime);
  expect(response.headers).toMatchObject({ "content-type": "text/plain; version=0.0.4; charset=utf-8" });
  return String(response.body);
}

describe("meteredLeaseStore", () => {
  it("counts a conditional write that lost its race as lost, calling the inner store once and handing its answer back", async () => {
    const metrics = createPrometheusMetrics(METER_NAME);
    const inner = new CountingStore(new MemoryLeaseStore());
    const { meteredLeaseStore } = await import("../../shared/http/metered-stores.js");
    const { createServiceMetrics } = await import("../../shared/http/service-metrics.js");
    const store = meteredLeaseStore(inner, createServiceMetrics(metrics.meter).storeDuration);
    const lease = { utype: "r", uuid: "a", address: null, epoch: 1, renewedAt: 1, revoked: false, endedUuids: [] };
    expect(await store.create(lease)).toMatchObject({ ok: true });
    expect(await store.create(lease)).toEqual({ ok: false, reason: "exists" });
    expect(inner.calls).toEqual(["create", "create"]);
    const text = await metrics.text();
    expect(countsBy(text, "db_client_operation_duration_count", "ha_store_result")).toEqual({ ok: 1, lost: 1 });
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countsBy, sumOf } from "../helpers/prometheus-text.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * GET /api/metrics scraped from `ha-module serve` as a real process over embedded Azurite,
 * after traffic whose every outcome and store call is known: the counts must be exact.
 */
const KEY = "metrics-test-key";

describe("GET /api/metrics on the local host, end to end", () => {
  let service: ServiceProcess;
  const call = async (method: string, path: string, body?: unknown): Promise<Response> =>
    fetch(`${service.url}${path}`, {
      method,
      headers: { "x-functions-key": KEY, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const scrape = async (): Promise<string> => {
    const response = await call("GET", "/metrics");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    return response.text();
  };

  beforeAll(async () => {
    // T is long so that nothing expires on a loaded machine: every outcome below is decided by the traffic alone.
    service = await startServiceProcess({ HA_API_KEY: KEY, HA_INTERVAL_MS: "1000", HA_TIMEOUT_MS: "60000" });
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
  });

  it("counts the heartbeats, releases, member transitions and store calls of known traffic exactly", async () => {
    const acquired = (await (await call("PUT", "/primary/jobs", { uuid: "a" })).json()) as { lease: string };
    let lease = acquired.lease;
    for (let i = 0; i < 3; i += 1) {
      const renewed = await call("PUT", "/primary/jobs", { uuid: "a", lease });
      expect(renewed.status).toBe(200);
      lease = ((await renewed.json()) as { lease: string }).lease;
    }
    for (let i = 0; i < 2; i += 1) expect((await call("PUT", "/primary/jobs", { uuid: "b" })).status).toBe(409);
    expect((await call("DELETE", `/primary/jobs?uuid=a&lease=${encodeURIComponent(lease)}`)).status).toBe(200);
    expect((await call("PUT", "/primary/jobs", { uuid: "b" })).status).toBe(200);
    expect((await call("PUT", "/members/workers/m1", { session: "s1" })).status).toBe(200);
    expect((await call("DELETE", "/members/workers/m1?session=s1")).status).toBe(200);

    const text = await scrape();
    expect(countsBy(text, "ha_lease_heartbeats_total", "ha_outcome")).toEqual({ acquired: 2, renewed: 3, rejected: 2 });
    expect(countsBy(text, "ha_lease_releases_total", "ha_outcome")).toEqual({ released: 1 });
    expect(countsBy(text, "ha_members_transitions_total", "ha_transition")).toEqual({ joined: 1, left: 1 });
    // The lease store: reads for the first acquire, both rejections, the release and the second acquire;
    // one create (with the row marking the role's creation, in one transaction), after a read of the role's history (none);
    // the fast-path renewals; and the release's and the second acquire's replace, the
    // release's one recording the released term in the same transaction (none per renewal).
    const leaseCalls = (operation: string): number =>
      sumOf(text, "db_client_operation_duration_count", { ha_store: "leases", db_system_name: "azure.tables", db_operation_name: operation, ha_store_result: "ok" });
    expect({
      read: leaseCalls("read"),
      readTerms: leaseCalls("readTerms"),
      create: leaseCalls("create"),
      renew: leaseCalls("renew"),
      replace: leaseCalls("replace"),
    }).toEqual({
      read: 5,
      readTerms: 1,
      create: 1,
      renew: 3,
      replace: 2,
    });
    // Besides the requests' calls, only the host's sweepStandbys timer reads the lease store (one listing per run, nothing stale to delete).
    const requestCalls = (scraped: string): number =>
      sumOf(scraped, "db_client_operation_duration_count", { ha_store: "leases" }) - sumOf(scraped, "db_client_operation_duration_count", { ha_store: "leases", db_operation_name: "listStandbys" });
    expect(requestCalls(text)).toBe(12);

    // Cumulative, and the scrape itself costs no store call: one more renewal adds exactly one of each.
    expect((await call("PUT", "/primary/jobs", { uuid: "b" })).status).toBe(200);
    const after = await scrape();
    expect(sumOf(after, "ha_lease_heartbeats_total", { ha_outcome: "renewed" })).toBe(4);
    expect(requestCalls(after)).toBe(14);
  });

  it("asks for the API key like every route, and refuses an unknown query parameter", async () => {
    expect((await fetch(`${service.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${service.url}/metrics?code=${KEY}`)).status).toBe(200);
    const refused = await call("GET", "/metrics?format=json");
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { code: "InvalidRequest" } });
  });
});

import { COUNTER_ONLY } from "../helpers/fake-clock.js";
import { describe, expect, it } from "vitest";
import { operations } from "../../functions/routes.js";
import { HttpRequest, InvocationContext, type HttpFunctionOptions } from "../../shared/http/azure-functions.js";
import { registerFunctions } from "../../shared/http/register-functions.js";
import { registerTimers, type TimerApp } from "../../shared/http/register-timers.js";
import { timers } from "../../functions/timers.js";
import { ROUTE_METHODS } from "../../shared/http/route.js";
import { createRuntime } from "../../shared/http/runtime.js";
import { ConfigError } from "../../shared/config/config-error.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { CountingStore } from "../helpers/counting-store.js";

/** What functions/index.ts registers with the Functions host, recorded instead of registered. */
function recordRegistrations(): { functions: Map<string, HttpFunctionOptions>; store: CountingStore } {
  const functions = new Map<string, HttpFunctionOptions>();
  const store = new CountingStore(new MemoryLeaseStore());
  const runtime = createRuntime({ timing: { intervalMs: 1000, timeoutMs: 5000 }, storeTimeoutMs: 2000, leaseSecret: undefined }, { epochClock: COUNTER_ONLY, leases: store });
  registerFunctions(
    {
      http: (name, options) => {
        expect(functions.has(name), `${name} registered twice`).toBe(false);
        functions.set(name, options);
      },
    },
    operations,
    async () => runtime,
  );
  return { functions, store };
}

async function invoke(options: HttpFunctionOptions | undefined, method: string, path: string, body?: unknown): Promise<{ status: number | undefined; body: unknown; headers: unknown }> {
  if (options === undefined) throw new Error("no such function");
  const request = new HttpRequest({
    method,
    url: `http://localhost/api/${path}`,
    params: path.startsWith("primary/") ? { utype: path.slice("primary/".length) } : {},
    ...(body === undefined ? {} : { body: { string: JSON.stringify(body) } }),
  });
  const response = await options.handler(request, new InvocationContext());
  const init = response as { status?: number; jsonBody?: unknown; headers?: unknown };
  return { status: init.status, body: init.jsonBody, headers: init.headers };
}

describe("the Azure Functions registration", () => {
  it("registers each operation as a function of its own, named for the seed and bound to its one method", () => {
    const { functions } = recordRegistrations();
    const bound = (name: string): unknown => ({ route: functions.get(name)?.route, methods: functions.get(name)?.methods, authLevel: functions.get(name)?.authLevel });
    expect(bound("getPrimary")).toEqual({ route: "primary/{utype}", methods: ["GET"], authLevel: "function" });
    expect(bound("updateHeartBeat")).toEqual({ route: "primary/{utype}", methods: ["PUT"], authLevel: "function" });
    expect(bound("releasePrimary")).toEqual({ route: "primary/{utype}", methods: ["DELETE"], authLevel: "function" });
    expect(bound("listPrimaries")).toEqual({ route: "primary", methods: ["GET"], authLevel: "function" });
    expect(bound("health")).toEqual({ route: "health", methods: ["GET"], authLevel: "function" });
    expect(bound("updateMemberHeartBeat")).toEqual({ route: "members/{group}/{member}", methods: ["PUT"], authLevel: "function" });
    expect(bound("leaveGroup")).toEqual({ route: "members/{group}/{member}", methods: ["DELETE"], authLevel: "function" });
    expect(bound("listMembers")).toEqual({ route: "members/{group}", methods: ["GET"], authLevel: "function" });
    expect(bound("listGroups")).toEqual({ route: "members", methods: ["GET"], authLevel: "function" });
    // The dashboard too needs the function key (a browser sends it as ?code=).
    expect(bound("dashboard")).toEqual({ route: "dashboard", methods: ["GET"], authLevel: "function" });
    expect(bound("dashboardAsset")).toEqual({ route: "dashboard/{asset}", methods: ["GET"], authLevel: "function" });
    expect(bound("metrics")).toEqual({ route: "metrics", methods: ["GET"], authLevel: "function" });
    expect(bound("participantHeartbeat")).toEqual({ route: "heartbeat", methods: ["POST"], authLevel: "function" });
  });

  it("answers GET /api/metrics in Azure with a 404 that points to Application Insights, without touching the store", async () => {
    const { functions, store } = recordRegistrations();
    const reply = await invoke(functions.get("metrics"), "GET", "metrics");
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ error: { code: "NotFound", message: expect.stringMatching(/Application Insights/) } });
    expect(store.calls).toEqual([]);
  });

  it("gives every route one 405 function for its other methods: each method of a route is bound exactly once", () => {
    const { functions } = recordRegistrations();
    expect([...functions.keys()].filter((name) => name.endsWith("MethodNotAllowed")).sort()).toEqual([
      "dashboardAssetMethodNotAllowed",
      "dashboardMethodNotAllowed",
      "healthMethodNotAllowed",
      "heartbeatMethodNotAllowed",
      "membersGroupMemberMethodNotAllowed",
      "membersGroupMethodNotAllowed",
      "membersMethodNotAllowed",
      "metricsMethodNotAllowed",
      "openapiJsonMethodNotAllowed",
      "primaryMethodNotAllowed",
      "primaryUtypeHandoverMethodNotAllowed",
      "primaryUtypeHistoryMethodNotAllowed",
      "primaryUtypeMethodNotAllowed",
    ]);
    const byRoute = new Map<string, string[]>();
    for (const options of functions.values()) byRoute.set(options.route ?? "", [...(byRoute.get(options.route ?? "") ?? []), ...(options.methods ?? [])]);
    for (const [route, methods] of byRoute) expect([...methods].sort(), route).toEqual([...ROUTE_METHODS].sort());
  });

  it("answers a wrong method with the contract's 405 and Allow, without touching the store", async () => {
    const { functions, store } = recordRegistrations();
    const reply = await invoke(functions.get("primaryUtypeMethodNotAllowed"), "POST", "primary/scheduler", { uuid: "a" });
    expect(reply.status).toBe(405);
    expect(reply.body).toMatchObject({ error: { code: "MethodNotAllowed" } });
    expect(reply.headers).toMatchObject({ allow: "GET, PUT, DELETE" });
    expect(store.calls).toEqual([]);
  });

  it("runs the operation's handler through the shared dispatcher: a heartbeat is accepted, then read back", async () => {
    const { functions, store } = recordRegistrations();
    const accepted = await invoke(functions.get("updateHeartBeat"), "PUT", "primary/scheduler", { uuid: "a" });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ utype: "scheduler", primary: { uuid: "a", epoch: 1 }, lease: expect.any(String) });
    const read = await invoke(functions.get("getPrimary"), "GET", "primary/scheduler");
    expect(read.body).toMatchObject({ primary: { uuid: "a", epoch: 1 } });
    expect(store.calls).toEqual(["read", "readTerms", "create", "read"]);
  });
});

describe("the Azure Functions timer registration", () => {
  it("registers the sweepers as timer triggers on HA_SWEEP_SCHEDULE, running the same functions as the local host", async () => {
    const registered: Array<{ name: string; options: Parameters<TimerApp["timer"]>[1] }> = [];
    const runtime = createRuntime({ timing: { intervalMs: 1000, timeoutMs: 5000 }, storeTimeoutMs: 2000, leaseSecret: undefined }, { epochClock: COUNTER_ONLY, leases: new MemoryLeaseStore() });
    registerTimers({ timer: (name, options) => void registered.push({ name, options }) }, timers, async () => runtime, "*/5 * * * * *");
    expect(registered.map(({ name, options }) => ({ name, schedule: options.schedule }))).toEqual([
      { name: "sweepMembers", schedule: "*/5 * * * * *" },
      { name: "sweepStandbys", schedule: "*/5 * * * * *" },
    ]);
    // The standby sweep needs only the lease store.
    await expect(registered[1]!.options.handler({}, new InvocationContext({ logHandler: () => undefined }))).resolves.toBeUndefined();
    // Without a membership store the sweep fails; the failure is logged and thrown, so the run shows as failed.
    const errors: unknown[] = [];
    const context = new InvocationContext({ logHandler: (level, ...args) => level === "error" && errors.push(...args) });
    await expect(registered[0]!.options.handler({}, context)).rejects.toThrow(/No membership store/);
    expect(String(errors)).toMatch(/sweepMembers: No membership store/);
  });

  it("does nothing while a setting is bad: the run neither fails nor logs again (start-up logged it once)", async () => {
    const registered: Array<Parameters<TimerApp["timer"]>[1]> = [];
    const misconfigured = (): Promise<never> => Promise.reject(new ConfigError("HA_TABLE_ENDPOINT", "HA_TABLE_ENDPOINT must be an absolute URL."));
    registerTimers({ timer: (_name, options) => void registered.push(options) }, timers, misconfigured, "*/5 * * * * *");
    const logged: unknown[] = [];
    const context = new InvocationContext({ logHandler: (_level, ...args) => logged.push(...args) });
    await expect(registered[0]!.handler({}, context)).resolves.toBeUndefined();
    expect(logged).toEqual([]);
  });
});

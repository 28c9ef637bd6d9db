import { Validator } from "@seriousme/openapi-schema-validator";
import { beforeAll, describe, expect, it } from "vitest";
import { operations } from "../../functions/routes.js";
import { buildOpenApi } from "../../shared/http/openapi.js";
import type { Operation } from "../../shared/http/route.js";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { CountingStore } from "../helpers/counting-store.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { ResponseChecker } from "../helpers/openapi-responses.js";
import { createAccess } from "../../shared/http/access.js";
import { loadAuthConfig } from "../../shared/config/auth-config.js";
import { send, sendWithHeaders, WALL_START } from "../helpers/route-requests.js";
import { failingFor } from "../helpers/failing-names.js";
import { MemoryMemberStore } from "../../shared/store/members-memory-store.js";
import { OverloadedError } from "../../shared/service/overloaded-error.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";

const TIMING = { intervalMs: 1000, timeoutMs: 5000 };
const SECRET = "a-test-secret-that-is-long-enough-for-hmac";

type Document = { paths: Record<string, Record<string, { operationId: string; parameters?: Array<{ name: string; in: string }> }>> } & Record<string, unknown>;

describe("GET /api/openapi.json", () => {
  let runtime: Runtime;
  let store: CountingStore;
  let document: Document;

  beforeAll(async () => {
    store = new CountingStore(new MemoryLeaseStore());
    // A generous budget: compiling the validators blocks this process for a while, and the
    // stall monitor would rightly charge that to the requests that follow.
    runtime = createRuntime({ timing: TIMING, storeTimeoutMs: 60_000, leaseSecret: SECRET }, { leases: store, clock: new FakeClock(WALL_START) });
    const reply = await sendWithHeaders(runtime, "GET", "/openapi.json");
    expect(reply.status).toBe(200);
    expect(reply.headers["cache-control"]).toBe("no-store");
    document = reply.body as Document;
  });

  it("is valid OpenAPI 3.1 by @seriousme/openapi-schema-validator, and costs no store call", async () => {
    const result = await new Validator().validate(document);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(document["openapi"]).toBe("3.1.0");
    expect(store.calls).toEqual([]);
  });

  it("describes exactly the route table: every operation once, under its name, and nothing else", () => {
    const documented = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`),
    );
    const table = operations.map((operation) => `${operation.method} /api/${operation.route} ${operation.name}`);
    expect(documented.sort()).toEqual(table.sort());
    expect(table).toContain("GET /api/primary/{utype}/history getPrimaryHistory");
    expect(table).toContain("GET /api/openapi.json openApi");
  });

  it("documents exactly the query parameters each operation takes: any other is refused with a 400 naming it", async () => {
    for (const operation of operations) {
      const path = `/${operation.route.replace(/\{[A-Za-z]+\}/g, "x")}`;
      const documented = (document.paths[`/api/${operation.route}`]?.[operation.method.toLowerCase()]?.parameters ?? [])
        .filter((parameter) => parameter.in === "query")
        .map((parameter) => parameter.name);
      for (const name of [...documented, "undocumented"]) {
        const reply = await send(runtime, operation.method, `${path}?${name}=%00`, operation.method === "PUT" ? {} : undefined);
        const message = (reply.body["error"] as { message?: string } | undefined)?.message ?? "";
        // A documented parameter may be refused for its value, never as unknown.
        if (name === "undocumented") expect(message, `${operation.name} ?${name}`).toMatch(/Unknown query parameter "undocumented"/);
        else expect(message, `${operation.name} ?${name}`).not.toMatch(/Unknown query parameter/);
      }
    }
  });

  it("its response check passes real answers and fails a planted bad date-time, an extra field and an undocumented status", async () => {
    const checker = new ResponseChecker(document as never);
    const acquired = await send(runtime, "PUT", "/primary/scheduler", { uuid: "a", address: "10.0.0.4:5800" });
    expect(acquired.status).toBe(200);
    const ok = { method: "PUT", path: "/api/primary/scheduler", status: 200, contentType: "application/json", body: acquired.body };
    expect(checker.problems(ok)).toEqual([]);
    const history = await send(runtime, "GET", "/primary/scheduler/history");
    expect(checker.problems({ ...ok, method: "GET", path: "/api/primary/scheduler/history", body: history.body })).toEqual([]);
    const held = await send(runtime, "PUT", "/primary/scheduler", { uuid: "b" });
    expect(held.status).toBe(409);
    expect(checker.problems({ ...ok, status: 409, body: held.body })).toEqual([]);

    const primary = acquired.body["primary"] as Record<string, unknown>;
    const badDate = { ...acquired.body, primary: { ...primary, renewedAt: "2026-11-20 10:00:00" } };
    expect(checker.problems({ ...ok, body: badDate }).join("\n")).toMatch(/\/primary\/renewedAt must match format "date-time"/);
    expect(checker.problems({ ...ok, body: { ...acquired.body, surprise: 1 } }).join("\n")).toMatch(/unevaluated properties/);
    expect(checker.problems({ ...ok, body: { ...acquired.body, lease: undefined } }).join("\n")).toMatch(/must have required property 'lease'/);
    expect(checker.problems({ ...ok, status: 409, body: { ...held.body, error: { code: "SessionHeld", message: "x" } } }).join("\n")).toMatch(/allowed values/);
    expect(checker.problems({ ...ok, status: 418 })).toEqual(["PUT /api/primary/scheduler → 418: /api/primary/{utype} put documents no 418"]);
    const badTerm = { ...history.body, terms: [{ ...(history.body["terms"] as object[])[0], endedBy: "vanished" }] };
    expect(checker.problems({ ...ok, method: "GET", path: "/api/primary/scheduler/history", body: badTerm }).join("\n")).toMatch(/endedBy must be equal to one of the allowed values/);
  });

  it("its response check passes answers with priorities (docs/protocol.md#priorities-and-preemption): the holder's, standbys', a preemption and a 'preempted' term; a priority of 0 shown fails", async () => {
    const checker = new ResponseChecker(document as never);
    const acquired = await send(runtime, "PUT", "/primary/ranked", { uuid: "low", priority: -3 });
    const ok = { method: "PUT", path: "/api/primary/ranked", status: 200, contentType: "application/json", body: acquired.body };
    expect(checker.problems(ok)).toEqual([]);
    const asked = await send(runtime, "PUT", "/primary/ranked", { uuid: "high", priority: 2, announce: true, preempt: true });
    expect(asked.body).toMatchObject({ handover: { to: "high", reason: "preempt" } });
    expect(checker.problems({ ...ok, status: 409, body: asked.body })).toEqual([]);
    const shown = await send(runtime, "GET", "/primary/ranked?standbys=true");
    expect(checker.problems({ ...ok, method: "GET", path: "/api/primary/ranked", body: shown.body })).toEqual([]);
    const renewed = await send(runtime, "PUT", "/primary/ranked", { uuid: "low", priority: -3, lease: acquired.body["lease"] });
    const released = await send(runtime, "DELETE", `/primary/ranked?uuid=low&lease=${encodeURIComponent(String(renewed.body["lease"]))}`);
    expect(released.status).toBe(200);
    await send(runtime, "PUT", "/primary/ranked", { uuid: "high", priority: 2 });
    const history = await send(runtime, "GET", "/primary/ranked/history");
    expect(history.body["terms"]).toMatchObject([{ endedBy: null }, { endedBy: "preempted" }]);
    expect(checker.problems({ ...ok, method: "GET", path: "/api/primary/ranked/history", body: history.body })).toEqual([]);
    const zero = { ...acquired.body, primary: { ...(acquired.body["primary"] as object), priority: 0 } };
    expect(checker.problems({ ...ok, body: zero }).join("\n")).toMatch(/priority/);
  });

  it("documents health's `telemetry`: real answers of a runtime whose telemetry could not start validate (200 and 503), a planted one without its fix fails", async () => {
    const checker = new ResponseChecker(document as never);
    const failure = { status: "failed", setting: "APPLICATIONINSIGHTS_CONNECTION_STRING", error: "Telemetry could not start: no log hooks.", fix: "Run on host 4.34 or later." } as const;
    const withFailure = createRuntime({ timing: TIMING, storeTimeoutMs: 60_000, leaseSecret: SECRET }, { leases: new MemoryLeaseStore(), clock: new FakeClock(WALL_START), telemetry: { failure } });
    const ok = await send(withFailure, "GET", "/health");
    expect(ok).toEqual({ status: 200, body: { status: "ok", store: "memory", telemetry: failure } });
    const answer = { method: "GET", path: "/api/health", contentType: "application/json" };
    expect(checker.problems({ ...answer, status: 200, body: ok.body })).toEqual([]);
    const down = createRuntime({ timing: TIMING, storeTimeoutMs: 60_000, leaseSecret: SECRET }, { leases: unreachable(new MemoryLeaseStore()), clock: new FakeClock(WALL_START), telemetry: { failure } });
    const unavailable = await send(down, "GET", "/health");
    expect(unavailable.status).toBe(503);
    expect(unavailable.body["telemetry"]).toEqual(failure);
    expect(checker.problems({ ...answer, status: 503, body: unavailable.body })).toEqual([]);
    const withoutFix: Record<string, string> = { ...failure };
    delete withoutFix["fix"];
    expect(checker.problems({ ...answer, status: 200, body: { ...ok.body, telemetry: withoutFix } }).join("\n")).toMatch(/required property 'fix'/);
    // Without a failure there is no `telemetry` at all.
    expect((await send(runtime, "GET", "/health")).body).not.toHaveProperty("telemetry");
  });

  it("describes the security schemes (keys and Entra bearer tokens) and a 403 on every write, which a real refusal matches", async () => {
    const schemes = (document["components"] as { securitySchemes: Record<string, Record<string, unknown>> }).securitySchemes;
    expect(schemes["entraToken"]).toMatchObject({ type: "http", scheme: "bearer", bearerFormat: "JWT" });
    expect(schemes["functionKey"]).toMatchObject({ type: "apiKey", in: "header", name: "x-functions-key" });
    expect(document["security"]).toEqual(expect.arrayContaining([{ entraToken: [] }, { functionKey: [] }]));
    const responses = (operation: Operation): Record<string, unknown> =>
      (document.paths[`/api/${operation.route}`]?.[operation.method.toLowerCase()] as unknown as { responses: Record<string, unknown> }).responses;
    // Every write may be 403: Forbidden (every write but the participant heartbeat, whose
    // refused parts are 403 in their own entries) and CrossOrigin (every write).
    const codes403 = (operation: Operation): string =>
      String((responses(operation)["403"] as { description?: string } | undefined)?.description ?? "")
        .split(", ")
        .sort()
        .join(", ");
    for (const operation of operations) {
      expect(Object.hasOwn(responses(operation), "403"), operation.name).toBe(operation.method !== "GET");
      if (operation.method !== "GET") expect(codes403(operation), operation.name).toBe(operation.name === "participantHeartbeat" ? "CrossOrigin" : "CrossOrigin, Forbidden");
    }
    const access = createAccess(loadAuthConfig({ HA_API_KEYS: "head-a=head-a-key-0123456789", HA_GRANTS: '[{"callers":["key:head-a"],"hold":["mine"]}]' }));
    const headers = { "x-functions-key": "head-a-key-0123456789" };
    const checker = new ResponseChecker(document as never);
    const held = await sendWithHeaders(runtime, "PUT", "/primary/mine", { uuid: "a" }, undefined, headers, access);
    const forbidden = await sendWithHeaders(runtime, "PUT", "/primary/theirs", { uuid: "a" }, undefined, headers, access);
    const revoke = await sendWithHeaders(runtime, "DELETE", "/primary/mine?uuid=a&lease=forged", undefined, undefined, headers, access);
    expect([held.status, forbidden.status, revoke.status]).toEqual([200, 403, 403]);
    const answer = { contentType: "application/json", status: 403 };
    expect(checker.problems({ ...answer, method: "PUT", path: "/api/primary/theirs", body: forbidden.body })).toEqual([]);
    expect(checker.problems({ ...answer, method: "DELETE", path: "/api/primary/mine", body: revoke.body })).toEqual([]);
    expect(checker.problems({ ...answer, method: "PUT", path: "/api/primary/theirs", body: { ...forbidden.body, surprise: 1 } }).join("\n")).toMatch(/unevaluated properties/);
    // A write a browser sent from another origin: 403 CrossOrigin, on every write route.
    const fromElsewhere = { origin: "https://evil.example", "sec-fetch-site": "cross-site" };
    for (const [method, path, body] of [["PUT", "/primary/mine", { uuid: "a" }], ["POST", "/primary/mine/handover", {}], ["POST", "/heartbeat", { roles: [] }], ["DELETE", "/members/g/m?session=s"]] as const) {
      const refused = await sendWithHeaders(runtime, method, path, body, undefined, fromElsewhere);
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect(checker.problems({ ...answer, method, path: `/api${path}`, body: refused.body }), `${method} ${path}`).toEqual([]);
    }
  });

  it("describes the participant heartbeat: its answers validate, every part's outcome included (200, 409, 403, 503 with retryAfter, unchanged), and a planted wrong part fails", async () => {
    const checker = new ResponseChecker(document as never);
    const members = new MemoryMemberStore();
    const leases = failingFor(new MemoryLeaseStore(), "shed", new OverloadedError("The service is at capacity (test); retry after 2 s.", 2));
    const own = createRuntime({ timing: TIMING, storeTimeoutMs: 60_000, leaseSecret: SECRET }, { leases: failingFor(leases, "down", new StoreUnavailableError("down")), members, clock: new FakeClock(WALL_START) });
    const access = createAccess(loadAuthConfig({ HA_API_KEYS: "head-a=head-a-key-0123456789", HA_GRANTS: '[{"callers":["key:head-a"],"hold":["mine","taken","shed","down"],"join":["hpc"]}]' }));
    const headers = { "x-functions-key": "head-a-key-0123456789" };
    await sendWithHeaders(own, "PUT", "/primary/taken", { uuid: "other" }, undefined, headers, access);
    const body = {
      roles: ["mine", "taken", "theirs", "shed", "down"].map((utype) => ({ utype, uuid: "a" })),
      reads: [{ utype: "elsewhere", standbys: true }],
      members: [{ group: "hpc", member: "head-1", session: "s1" }, { group: "other", member: "head-1", session: "s1" }],
      groups: [{ group: "hpc" }],
    };
    const first = await sendWithHeaders(own, "POST", "/heartbeat", body, undefined, headers, access);
    expect((first.body["roles"] as Array<{ status: number }>).map((role) => role.status)).toEqual([200, 409, 403, 503, 503]);
    expect((first.body["roles"] as Array<{ retryAfter?: number }>)[3]?.retryAfter).toBe(2);
    const ok = { method: "POST", path: "/api/heartbeat", status: 200, contentType: "application/json", body: first.body };
    expect(checker.problems(ok)).toEqual([]);
    const cursor = ((first.body["groups"] as Array<{ body: { cursor: string } }>)[0]?.body.cursor) ?? "";
    const again = await sendWithHeaders(own, "POST", "/heartbeat", { groups: [{ group: "hpc", since: cursor }] }, undefined, headers, access);
    expect(checker.problems({ ...ok, body: again.body })).toEqual([]);
    const unchanged = await sendWithHeaders(own, "POST", "/heartbeat", { groups: [{ group: "hpc", since: ((again.body["groups"] as Array<{ body: { cursor: string } }>)[0]?.body.cursor) ?? "" }] }, undefined, headers, access);
    expect((unchanged.body["groups"] as Array<{ body: Record<string, unknown> }>)[0]?.body).toMatchObject({ unchanged: true });
    expect(checker.problems({ ...ok, body: unchanged.body })).toEqual([]);
    const bad = await sendWithHeaders(own, "POST", "/heartbeat", { roles: [{ utype: "x" }] }, undefined, headers, access);
    expect(checker.problems({ ...ok, status: 400, body: bad.body })).toEqual([]);

    const roles = first.body["roles"] as Array<Record<string, unknown>>;
    const planted = (changed: Record<string, unknown>): string => checker.problems({ ...ok, body: { ...first.body, roles: [changed, ...roles.slice(1)] } }).join("\n");
    expect(planted({ ...roles[0], status: "200" })).toMatch(/status must be integer/);
    expect(planted({ ...roles[0], extra: 1 })).toMatch(/additional properties/);
    expect(planted({ ...roles[0], body: { ...(roles[0]?.["body"] as object), surprise: 1 } })).not.toEqual("");
    expect(checker.problems({ ...ok, body: { ...first.body, groups: undefined } }).join("\n")).toMatch(/required property 'groups'/);
  });

  it("takes a non-JSON route (HTML, assets of several types, Prometheus text) by its doc alone, and stays valid", async () => {
    const handler: Operation["handler"] = async () => ({ status: 200 });
    const more: Operation[] = [
      { name: "dashboard", route: "dashboard", method: "GET", handler, doc: { tag: "operations", summary: "The dashboard", ok: { description: "The page.", contentType: "text/html" } } },
      {
        name: "dashboardAsset",
        route: "dashboard/{asset}",
        method: "GET",
        handler,
        doc: {
          tag: "operations",
          summary: "A dashboard asset",
          path: { asset: { description: "The asset's file name.", schema: { enum: ["app.js", "app.css"] } } },
          ok: { description: "The asset.", contentType: ["text/javascript", "text/css"] },
          errors: [{ code: "NotFound" }],
        },
      },
      { name: "metrics", route: "metrics", method: "GET", handler, doc: { tag: "operations", summary: "Metrics", ok: { description: "Prometheus text.", contentType: "text/plain" } } },
    ];
    const extended = buildOpenApi([...operations, ...more], "0.0.0-test") as Document;
    const result = await new Validator().validate(extended);
    expect(result.errors).toBeUndefined();
    const checker = new ResponseChecker(extended as never);
    const asset = { method: "GET", path: "/api/dashboard/app.css", status: 200, contentType: "text/css; charset=utf-8", body: "body {}" };
    expect(checker.problems(asset)).toEqual([]);
    expect(checker.problems({ ...asset, contentType: "text/html" })).toEqual(["GET /api/dashboard/app.css → 200: content type text/html is not one of text/javascript, text/css"]);
    expect(checker.problems({ ...asset, status: 404, contentType: "application/json", body: { error: { code: "NotFound", message: "no such asset" } } })).toEqual([]);
    expect(checker.problems({ method: "GET", path: "/api/metrics", status: 200, contentType: "text/plain; version=0.0.4", body: "# HELP x\n" })).toEqual([]);
    // A path parameter nobody describes is refused when the document is built.
    expect(() => buildOpenApi([{ ...more[0]!, route: "dashboard/{file}" }], "0")).toThrow(/\{file\} its doc does not describe/);
  });
});

/** A store whose ping fails as an unreachable one's does. */
function unreachable(store: MemoryLeaseStore): MemoryLeaseStore {
  return new Proxy(store, { get: (target, property, receiver) => (property === "ping" ? () => Promise.reject(new StoreUnavailableError("down")) : Reflect.get(target, property, receiver)) });
}

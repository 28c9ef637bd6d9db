/**
 * Grants through the Azure entry (startAzureApp → registerFunctions → handleRoute), on the
 * memory stores and on the Table store over Azurite: every write route of leases and
 * membership honours HA_GRANTS, a refusal is 403 naming the role or group and the grant
 * that is missing, and nothing of a refused write reaches the store.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { operations } from "../../functions/routes.js";
import { timers } from "../../functions/timers.js";
import { HttpRequest, InvocationContext, type HttpFunctionOptions } from "../../shared/http/azure-functions.js";
import { startAzureApp } from "../../shared/http/azure-app.js";
import { createAccess, WRITE_NEEDS } from "../../shared/http/access.js";
import { loadAuthConfig } from "../../shared/config/auth-config.js";
import type { EmbeddedAzurite } from "../../shared/host/embedded-azurite.js";
import type { EmbeddedCosmos } from "../../shared/host/embedded-cosmos.js";
import type { ConfiguredStore } from "../../shared/store/configured-store.js";
import { createFreshCosmosStore, startTestCosmos } from "../helpers/cosmos.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { MemoryMemberStore } from "../../shared/store/members-memory-store.js";
import { createFreshMemberTableStore, createFreshTableStore, startTestAzurite } from "../helpers/azurite.js";
import { CountingMemberStore } from "../helpers/counting-member-store.js";
import { CountingStore } from "../helpers/counting-store.js";
import { grantSettings, HEAD_A, HEAD_B, KEYS } from "../helpers/grants-fixture.js";
import { LocalIssuer } from "../helpers/local-issuer.js";

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

let issuer: LocalIssuer;
let azurite: EmbeddedAzurite;
let cosmos: EmbeddedCosmos;
const opened: ConfiguredStore[] = [];

beforeAll(async () => {
  [issuer, azurite, cosmos] = await Promise.all([LocalIssuer.start(), startTestAzurite(), startTestCosmos()]);
}, 60_000);
afterAll(async () => {
  for (const configured of opened) configured.close();
  await Promise.all([issuer?.close(), azurite?.close(), cosmos?.close()]);
});

/** The app as Azure starts it, its functions recorded by name, over counting stores around `stores`. */
async function startApp(env: Record<string, string>, stores: { leases: CountingStore; members: CountingMemberStore }): Promise<Map<string, HttpFunctionOptions>> {
  const functions = new Map<string, HttpFunctionOptions>();
  const logged: string[] = [];
  await startAzureApp({
    app: { http: (name, options) => functions.set(name, options), timer: () => undefined },
    operations,
    timers,
    env: { HA_LEASE_SECRET: "a-test-secret-that-is-long-enough-for-hmac", HA_TABLE_CONNECTION_STRING: "UseDevelopmentStorage=true", ...env },
    setUpTelemetry: async () => undefined,
    createStore: () => ({ store: stores.leases, members: stores.members, prepare: async () => undefined }),
    logError: (message) => logged.push(message),
  });
  return functions;
}

function caller(who: "head-a" | "head-b" | "ops" | "token-a" | "token-b" | "none"): Record<string, string> {
  if (who === "none") return {};
  if (who === "token-a") return { authorization: `Bearer ${issuer.token(HEAD_A)}` };
  if (who === "token-b") return { authorization: `Bearer ${issuer.token(HEAD_B)}` };
  return { "x-functions-key": KEYS[who] };
}

async function call(functions: Map<string, HttpFunctionOptions>, name: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const options = functions.get(name);
  if (options === undefined) throw new Error(`no function ${name}`);
  const url = new URL(`http://localhost/api/${path}`);
  const segments = url.pathname.split("/").slice(2).map(decodeURIComponent);
  const params: Record<string, string> =
    segments[0] === "primary" ? { utype: segments[1] ?? "" } : segments[0] === "members" ? { group: segments[1] ?? "", member: segments[2] ?? "" } : {};
  const request = new HttpRequest({
    method,
    url: url.toString(),
    params,
    headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: { string: JSON.stringify(body) } }),
  });
  const response = (await options.handler(request, new InvocationContext())) as { status?: number; jsonBody?: unknown };
  return { status: response.status ?? 200, body: (response.jsonBody ?? {}) as Record<string, unknown> };
}

const STORES = [
  ["memory", async () => ({ leases: new CountingStore(new MemoryLeaseStore()), members: new CountingMemberStore(new MemoryMemberStore()) })],
  ["table (Azurite)", async () => ({ leases: new CountingStore(await createFreshTableStore(azurite)), members: new CountingMemberStore(await createFreshMemberTableStore(azurite)) })],
  [
    "cosmos (emulator)",
    async () => {
      const configured = await createFreshCosmosStore(cosmos);
      opened.push(configured);
      return { leases: new CountingStore(configured.store), members: new CountingMemberStore(configured.members) };
    },
  ],
] as const;

describe.each(STORES)("grants on the %s store, through the Azure functions", (_name, makeStores) => {
  let stores: { leases: CountingStore; members: CountingMemberStore };
  let functions: Map<string, HttpFunctionOptions>;

  beforeEach(async () => {
    stores = await makeStores();
    functions = await startApp(grantSettings(issuer.authority), stores);
    stores.leases.reset();
    stores.members.reset();
  });

  /** A refused write: 403 Forbidden naming what is missing, and not one store call. */
  async function expectRefused(answer: Promise<Answer>, missing: Record<string, string>): Promise<void> {
    const { status, body } = await answer;
    expect(status).toBe(403);
    expect(body["error"]).toMatchObject({ code: "Forbidden" });
    expect(body["missing"]).toMatchObject(missing);
    expect(stores.leases.calls).toEqual([]);
    expect(stores.members.calls).toEqual([]);
  }

  it("registers every function anonymous at the platform: this code checks the callers", () => {
    expect([...functions.values()].map((options) => options.authLevel)).toEqual(Array(functions.size).fill("anonymous"));
  });

  it("PUT /primary/{utype}: a head node holds its own cluster's roles only, by key or by its identity", async () => {
    await expectRefused(call(functions, "updateHeartBeat", "PUT", "primary/cluster-b.scheduler", caller("head-a"), { uuid: "a1" }), { hold: "cluster-b.scheduler", caller: "key:head-a" });
    await expectRefused(call(functions, "updateHeartBeat", "PUT", "primary/cluster-b.scheduler", caller("token-a"), { uuid: "a1" }), { hold: "cluster-b.scheduler", caller: HEAD_A.oid });
    await expectRefused(call(functions, "updateHeartBeat", "PUT", "primary/cluster-a.scheduler", caller("token-b"), { uuid: "b1" }), { hold: "cluster-a.scheduler", caller: HEAD_B.oid });
    await expectRefused(call(functions, "updateHeartBeat", "PUT", "primary/cluster-a.scheduler", caller("ops"), { uuid: "o1" }), { hold: "cluster-a.scheduler" });
    expect((await call(functions, "updateHeartBeat", "PUT", "primary/cluster-a.scheduler", caller("head-a"), { uuid: "a1" })).status).toBe(200);
    expect((await call(functions, "updateHeartBeat", "PUT", "primary/cluster-a.web", caller("token-a"), { uuid: "a2" })).status).toBe(200);
    expect((await call(functions, "updateHeartBeat", "PUT", "primary/cluster-b.scheduler", caller("head-b"), { uuid: "b1" })).status).toBe(200);
  });

  it("DELETE /primary/{utype}: release needs hold, revoke needs revoke; a token that does not prove the holder is a revoke and writes nothing", async () => {
    const held = await call(functions, "updateHeartBeat", "PUT", "primary/cluster-a.scheduler", caller("head-a"), { uuid: "a1" });
    const lease = held.body["lease"] as string;
    stores.leases.reset();
    // head-b may neither release nor revoke cluster A's role.
    await expectRefused(call(functions, "releasePrimary", "DELETE", `primary/cluster-a.scheduler?uuid=a1&lease=${encodeURIComponent(lease)}`, caller("head-b")), { hold: "cluster-a.scheduler" });
    // head-a holds it but may not revoke: no token, or a made-up one.
    await expectRefused(call(functions, "releasePrimary", "DELETE", "primary/cluster-a.scheduler?uuid=a1", caller("head-a")), { revoke: "cluster-a.scheduler", caller: "key:head-a" });
    const forged = await call(functions, "releasePrimary", "DELETE", "primary/cluster-a.scheduler?uuid=a1&lease=made-up", caller("head-a"));
    expect(forged.status).toBe(403);
    expect(forged.body).toMatchObject({ error: { code: "Forbidden" }, missing: { revoke: "cluster-a.scheduler" }, primary: { uuid: "a1", revoked: false } });
    expect(stores.leases.calls.filter((method) => method !== "read" && method !== "readTerms")).toEqual([]);
    // The operator revokes; the holder releases with its token.
    expect((await call(functions, "releasePrimary", "DELETE", "primary/cluster-a.scheduler?uuid=a1", caller("ops"))).body).toMatchObject({ primary: { uuid: "a1", revoked: true } });
    const again = await call(functions, "updateHeartBeat", "PUT", "primary/cluster-a.web", caller("head-a"), { uuid: "a2" });
    const released = await call(functions, "releasePrimary", "DELETE", `primary/cluster-a.web?uuid=a2&lease=${encodeURIComponent(again.body["lease"] as string)}`, caller("head-a"));
    expect(released).toMatchObject({ status: 200, body: { primary: null } });
  });

  it("DELETE /primary/{utype}?uuid=…&standby=true: a standby's withdrawal needs hold, as its announcement does, never revoke", async () => {
    expect((await call(functions, "updateHeartBeat", "PUT", "primary/cluster-a.scheduler", caller("head-a"), { uuid: "a1" })).status).toBe(200);
    expect((await call(functions, "updateHeartBeat", "PUT", "primary/cluster-a.scheduler", caller("token-a"), { uuid: "a2", announce: true })).status).toBe(409);
    stores.leases.reset();
    await expectRefused(call(functions, "releasePrimary", "DELETE", "primary/cluster-a.scheduler?uuid=a2&standby=true", caller("token-b")), { hold: "cluster-a.scheduler", caller: HEAD_B.oid });
    await expectRefused(call(functions, "releasePrimary", "DELETE", "primary/cluster-a.scheduler?uuid=a2&standby=true", caller("ops")), { hold: "cluster-a.scheduler" });
    const withdrawn = await call(functions, "releasePrimary", "DELETE", "primary/cluster-a.scheduler?uuid=a2&standby=true", caller("token-a"));
    expect(withdrawn).toMatchObject({ status: 200, body: { primary: { uuid: "a1", revoked: false } } });
    expect([...stores.leases.calls].sort()).toEqual(["deleteStandby", "read"]);
  });

  it("POST /primary/{utype}/handover: asking a holder to step down needs revoke, and a refusal writes nothing", async () => {
    expect((await call(functions, "updateHeartBeat", "PUT", "primary/cluster-a.scheduler", caller("head-a"), { uuid: "a1" })).status).toBe(200);
    stores.leases.reset();
    await expectRefused(call(functions, "handoverPrimary", "POST", "primary/cluster-a.scheduler/handover", caller("head-a"), {}), { revoke: "cluster-a.scheduler", caller: "key:head-a" });
    await expectRefused(call(functions, "handoverPrimary", "POST", "primary/cluster-a.scheduler/handover", caller("token-b"), {}), { revoke: "cluster-a.scheduler", caller: HEAD_B.oid });
    const asked = await call(functions, "handoverPrimary", "POST", "primary/cluster-a.scheduler/handover", caller("ops"), {});
    expect(asked).toMatchObject({ status: 202, body: { primary: { uuid: "a1" }, handover: { to: null, phase: "pending" } } });
  });

  it("PUT and DELETE /members/{group}/{member}: a head node joins and leaves its own group only", async () => {
    await expectRefused(call(functions, "updateMemberHeartBeat", "PUT", "members/cluster-b/node-1", caller("head-a"), { session: "s1" }), { join: "cluster-b" });
    await expectRefused(call(functions, "updateMemberHeartBeat", "PUT", "members/cluster-a/node-1", caller("token-b"), { session: "s1" }), { join: "cluster-a" });
    expect((await call(functions, "updateMemberHeartBeat", "PUT", "members/cluster-b/node-1", caller("head-b"), { session: "s1" })).status).toBe(200);
    stores.members.reset();
    await expectRefused(call(functions, "leaveGroup", "DELETE", "members/cluster-b/node-1?session=s1", caller("head-a")), { join: "cluster-b", caller: "key:head-a" });
    await expectRefused(call(functions, "leaveGroup", "DELETE", "members/cluster-b/node-1?session=s1", caller("ops")), { join: "cluster-b", caller: "key:ops" });
    expect((await call(functions, "leaveGroup", "DELETE", "members/cluster-b/node-1?session=s1", caller("head-b"))).status).toBe(200);
    expect((await call(functions, "updateMemberHeartBeat", "PUT", "members/cluster-a/node-2", caller("token-a"), { session: "s2" })).status).toBe(200);
  });

  it("POST /heartbeat: each role part needs hold and each member part join, as their own routes; a refused part is its route's 403 and reaches no store, the granted ones run", async () => {
    const single = await call(functions, "updateHeartBeat", "PUT", "primary/cluster-b.scheduler", caller("head-a"), { uuid: "a1" });
    const refused = await call(functions, "participantHeartbeat", "POST", "heartbeat", caller("head-a"), {
      roles: [{ utype: "cluster-b.scheduler", uuid: "a1" }],
      members: [{ group: "cluster-b", member: "node-1", session: "s1" }],
    });
    expect(refused.status).toBe(200);
    expect(refused.body).toEqual({
      roles: [{ utype: "cluster-b.scheduler", status: 403, body: single.body }],
      reads: [],
      members: [{ group: "cluster-b", member: "node-1", status: 403, body: expect.objectContaining({ error: expect.objectContaining({ code: "Forbidden" }), missing: { join: "cluster-b", caller: "key:head-a" } }) }],
      groups: [],
    });
    expect(stores.leases.calls).toEqual([]);
    expect(stores.members.calls).toEqual([]);
    const mixed = await call(functions, "participantHeartbeat", "POST", "heartbeat", caller("token-a"), {
      roles: [
        { utype: "cluster-a.scheduler", uuid: "a1" },
        { utype: "cluster-b.scheduler", uuid: "a1" },
      ],
      reads: [{ utype: "cluster-b.broker" }],
      members: [{ group: "cluster-a", member: "node-1", session: "s1" }],
      groups: [{ group: "cluster-b" }],
    });
    expect(mixed.body).toMatchObject({
      roles: [
        { utype: "cluster-a.scheduler", status: 200 },
        { utype: "cluster-b.scheduler", status: 403, body: { missing: { hold: "cluster-b.scheduler", caller: HEAD_A.oid } } },
      ],
      reads: [{ status: 200 }],
      members: [{ group: "cluster-a", status: 200 }],
      groups: [{ group: "cluster-b", status: 200 }],
    });
    expect((await call(functions, "getPrimary", "GET", "primary/cluster-b.scheduler", caller("ops"))).body).toMatchObject({ primary: null });
  });

  it("reads stay open to every authenticated caller, granted or not", async () => {
    for (const who of ["head-a", "ops", "token-b"] as const) {
      expect((await call(functions, "getPrimary", "GET", "primary/cluster-b.scheduler", caller(who))).status).toBe(200);
      expect((await call(functions, "listPrimaries", "GET", "primary", caller(who))).status).toBe(200);
      expect((await call(functions, "listMembers", "GET", "members/cluster-b", caller(who))).status).toBe(200);
      expect((await call(functions, "listGroups", "GET", "members", caller(who))).status).toBe(200);
    }
  });

  it("an unauthenticated caller, a wrong key or a bad token gets 401 on every route, before any store call", async () => {
    for (const headers of [caller("none"), { "x-functions-key": "not-a-key-of-this-app" }, { authorization: "Bearer e30.e30.AAAA" }, { authorization: `Basic ${KEYS["head-a"]}` }]) {
      for (const [name, method, path] of [
        ["getPrimary", "GET", "primary/cluster-a.scheduler"],
        ["updateHeartBeat", "PUT", "primary/cluster-a.scheduler"],
        ["health", "GET", "health"],
        ["primaryUtypeMethodNotAllowed", "POST", "primary/cluster-a.scheduler"],
      ] as const) {
        const answer = await call(functions, name, method, path, headers, method === "PUT" ? { uuid: "x" } : undefined);
        expect(answer.status, `${name} with ${JSON.stringify(headers)}`).toBe(401);
        expect(answer.body["error"]).toMatchObject({ code: "Unauthorized" });
      }
    }
    expect(stores.leases.calls).toEqual([]);
  });
});

describe("the Azure app's auth settings", () => {
  const stores = (): { leases: CountingStore; members: CountingMemberStore } => ({ leases: new CountingStore(new MemoryLeaseStore()), members: new CountingMemberStore(new MemoryMemberStore()) });

  it("without any, the platform checks function keys (authLevel function) and every caller may write everything, as before grants", async () => {
    const functions = await startApp({}, stores());
    expect(new Set([...functions.values()].map((options) => options.authLevel))).toEqual(new Set(["function"]));
    expect((await call(functions, "updateHeartBeat", "PUT", "primary/anything", {}, { uuid: "x" })).status).toBe(200);
  });

  it("a bad HA_GRANTS is 503 Misconfigured naming it on every route, with the functions anonymous, so nothing is open meanwhile", async () => {
    const given = stores();
    const functions = await startApp({ ...grantSettings(issuer.authority), HA_GRANTS: '[{"callers":["key:nobody"],"hold":["*"]}]' }, given);
    expect(new Set([...functions.values()].map((options) => options.authLevel))).toEqual(new Set(["anonymous"]));
    for (const headers of [caller("head-a"), caller("none")]) {
      const answer = await call(functions, "updateHeartBeat", "PUT", "primary/cluster-a.x", headers, { uuid: "x" });
      expect(answer.status).toBe(503);
      expect(answer.body["error"]).toMatchObject({ code: "Misconfigured", message: expect.stringMatching(/HA_GRANTS.*key:nobody.*HA_API_KEYS/) });
    }
    expect(given.leases.calls).toEqual([]);
  });

  it("every write route of the contract has its row in WRITE_NEEDS (a new one would be refused to everyone)", () => {
    const writes = operations.filter((operation) => operation.method !== "GET").map((operation) => operation.name);
    expect(writes.filter((name) => !Object.hasOwn(WRITE_NEEDS, name))).toEqual([]);
    expect(writes).toContain("handoverPrimary");
  });

  it("a write route no row of WRITE_NEEDS classifies is refused to every caller while grants are on", () => {
    const access = createAccess(loadAuthConfig({ HA_API_KEYS: `ops=${KEYS.ops}`, HA_GRANTS: JSON.stringify([{ callers: ["*"], hold: ["*"], revoke: ["*"], join: ["*"] }]) }));
    const unclassified = { ...operations.find((operation) => operation.name === "updateHeartBeat")!, name: "futureWrite", method: "POST" as const };
    const request = new HttpRequest({ method: "POST", url: "http://localhost/api/primary/x/future", params: { utype: "x" } });
    expect(access.authorize(unclassified, request, { kind: "key", name: "ops" })).toMatchObject({ status: 403, jsonBody: { error: { code: "Forbidden", message: expect.stringMatching(/futureWrite is not covered by any grant/) } } });
  });
});

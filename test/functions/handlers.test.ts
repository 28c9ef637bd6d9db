import { beforeEach, describe, expect, it } from "vitest";
import { InvocationContext } from "../../shared/http/azure-functions.js";
import { LeaseTokenSigner } from "../../shared/lease/lease-token.js";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import type { LeaseStore } from "../../shared/lease/lease-store.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import { CountingStore, failingStore } from "../helpers/counting-store.js";
import { primaryOf, send, sendWithHeaders, WALL_START } from "../helpers/route-requests.js";
import { FakeClock, COUNTER_ONLY } from "../helpers/fake-clock.js";

const TIMING = { intervalMs: 1000, timeoutMs: 5000 };
const SECRET = "a-test-secret-that-is-long-enough-for-hmac";

describe("handlers over a counting store: the cost of each call", () => {
  let clock: FakeClock;
  let store: CountingStore;
  let runtime: Runtime;

  beforeEach(() => {
    clock = new FakeClock(WALL_START);
    store = new CountingStore(new MemoryLeaseStore());
    runtime = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { epochClock: COUNTER_ONLY, leases: store, clock });
  });

  it("GetPrimary costs exactly one point read", async () => {
    const reply = await send(runtime, "GET", "/primary/scheduler");
    expect(reply).toEqual({ status: 200, body: { utype: "scheduler", primary: null, epoch: 0, intervalMs: 1000, timeoutMs: 5000, handover: null } });
    expect(store.calls).toEqual(["read"]);
  });

  it("every LeaseView carries the role's epoch: 0 before any holder, then the last term's, with or without a live primary", async () => {
    const epochOf = (reply: { body: Record<string, unknown> }): unknown => reply.body["epoch"];
    expect(epochOf(await send(runtime, "GET", "/primary/scheduler"))).toBe(0);
    const first = await send(runtime, "PUT", "/primary/scheduler", { uuid: "a" });
    expect(epochOf(first)).toBe(1);
    // The 409 a standby gets shows it too.
    expect(epochOf(await send(runtime, "PUT", "/primary/scheduler", { uuid: "b" }))).toBe(1);
    await clock.advance(5001);
    const expired = await send(runtime, "GET", "/primary/scheduler");
    expect(expired.body).toMatchObject({ primary: null, epoch: 1 });
    expect(epochOf(await send(runtime, "PUT", "/primary/scheduler", { uuid: "b" }))).toBe(2);
    const listed = (await send(runtime, "GET", "/primary")).body["primaries"] as Array<Record<string, unknown>>;
    expect(listed).toEqual([expect.objectContaining({ utype: "scheduler", epoch: 2 })]);
  });

  it("a first acquisition costs a read of the entry and of the history, a create, and the history row marking the creation", async () => {
    const reply = await send(runtime, "PUT", "/primary/scheduler", { uuid: "a", address: "h:1" });
    expect(reply.status).toBe(200);
    expect(primaryOf(reply)).toEqual({
      uuid: "a",
      address: "h:1",
      epoch: 1,
      renewedAt: new Date(clock.now()).toISOString(),
      expiresInMs: 5000,
      revoked: false,
    });
    // A role's first acquisition also reads its history (none: a role never held, not a
    // deleted entry) and marks the role's creation in it before creating: creates are rare.
    expect(store.calls).toEqual(["read", "readTerms", "create"]);
  });

  it("a renewal that presents its lease token costs exactly one store operation, with no read", async () => {
    const first = await send(runtime, "PUT", "/primary/scheduler", { uuid: "a" });
    await clock.advance(1000);
    store.reset();
    const renewed = await send(runtime, "PUT", "/primary/scheduler", { uuid: "a", address: "h:2", lease: first.body["lease"] });
    expect(renewed.status).toBe(200);
    expect(store.calls).toEqual(["renew"]);
    expect(primaryOf(renewed)).toMatchObject({ uuid: "a", address: "h:2", epoch: 1, expiresInMs: 5000 });
    // The answer of the fast path is what a read would have shown.
    store.reset();
    const seen = await send(runtime, "GET", "/primary/scheduler");
    expect(primaryOf(seen)).toEqual(primaryOf(renewed));
  });

  it("a renewal without a token costs a read and a write, and answers the same", async () => {
    await send(runtime, "PUT", "/primary/scheduler", { uuid: "a" });
    await clock.advance(1000);
    store.reset();
    const renewed = await send(runtime, "PUT", "/primary/scheduler", { uuid: "a" });
    expect(renewed.status).toBe(200);
    expect(primaryOf(renewed)).toMatchObject({ uuid: "a", epoch: 1, expiresInMs: 5000 });
    expect(store.calls).toEqual(["read", "replace"]);
  });

  it("a takeover after expiry costs a read and one write (the entry and the ended term's history row together) and raises the epoch", async () => {
    await send(runtime, "PUT", "/primary/scheduler", { uuid: "a" });
    await clock.advance(5001);
    store.reset();
    const takeover = await send(runtime, "PUT", "/primary/scheduler", { uuid: "b" });
    expect(takeover.status).toBe(200);
    expect(primaryOf(takeover)).toMatchObject({ uuid: "b", epoch: 2 });
    expect(store.calls).toEqual(["read", "replace"]);
  });

  it("taking a released role writes no history: its term was recorded when it was released", async () => {
    const lease = (await send(runtime, "PUT", "/primary/scheduler", { uuid: "a" })).body["lease"] as string;
    await send(runtime, "DELETE", `/primary/scheduler?uuid=a&lease=${encodeURIComponent(lease)}`);
    store.reset();
    const next = await send(runtime, "PUT", "/primary/scheduler", { uuid: "b" });
    expect(primaryOf(next)).toMatchObject({ uuid: "b", epoch: 2 });
    expect(store.calls).toEqual(["read", "replace"]);
  });

  it("a rejection costs one read and writes nothing", async () => {
    await send(runtime, "PUT", "/primary/scheduler", { uuid: "a" });
    await clock.advance(5000); // exactly T: still live
    store.reset();
    const rival = await send(runtime, "PUT", "/primary/scheduler", { uuid: "b" });
    expect(rival.status).toBe(409);
    expect(rival.body["error"]).toMatchObject({ code: "LeaseHeld" });
    expect(primaryOf(rival)).toMatchObject({ uuid: "a", expiresInMs: 0 });
    expect(store.calls).toEqual(["read"]);
  });

  it("a stale token falls back to the slow path: the old holder, taken over, is told its term ended", async () => {
    const first = await send(runtime, "PUT", "/primary/scheduler", { uuid: "a" });
    await clock.advance(5001);
    await send(runtime, "PUT", "/primary/scheduler", { uuid: "b" });
    store.reset();
    const stale = await send(runtime, "PUT", "/primary/scheduler", { uuid: "a", lease: first.body["lease"] });
    expect(stale.status).toBe(409);
    expect(stale.body["error"]).toMatchObject({ code: "LeaseRevoked" });
    expect(primaryOf(stale)).toMatchObject({ uuid: "b", epoch: 2 });
    expect(store.calls).toEqual(["renew", "read"]);
  });

  it("a token that is not the caller's, or not signed by this server, is treated as absent", async () => {
    const first = await send(runtime, "PUT", "/primary/scheduler", { uuid: "a" });
    const lease = first.body["lease"] as string;
    const stranger = new LeaseTokenSigner("another-secret-that-is-long-enough-too").issue({
      utype: "scheduler",
      uuid: "b",
      epoch: 1,
      etag: (await store.read("scheduler"))?.etag ?? "",
      address: null,
    });
    store.reset();
    for (const token of [lease, stranger, "v1.garbage.sig", ""]) {
      const reply = await send(runtime, "PUT", "/primary/scheduler", { uuid: "b", lease: token });
      expect(reply.status).toBe(409);
      expect(primaryOf(reply)).toMatchObject({ uuid: "a" });
    }
    expect(store.calls).toEqual(["read", "read", "read", "read"]);
  });

  it("release with the lease token clears the holder with a read and one write (the entry and the ended term's history row together); the epoch survives for the next holder", async () => {
    const lease = (await send(runtime, "PUT", "/primary/scheduler", { uuid: "a" })).body["lease"] as string;
    store.reset();
    const released = await send(runtime, "DELETE", `/primary/scheduler?uuid=a&lease=${encodeURIComponent(lease)}`);
    // No primary now, but the role's epoch is still the released term's.
    expect(released).toEqual({ status: 200, body: { utype: "scheduler", primary: null, epoch: 1, intervalMs: 1000, timeoutMs: 5000, handover: null } });
    expect(store.calls).toEqual(["read", "replace"]);
    const next = await send(runtime, "PUT", "/primary/scheduler", { uuid: "b" });
    expect(primaryOf(next)).toMatchObject({ uuid: "b", epoch: 2 });
  });

  it("a lost create race is a 409 Conflict showing the winner, never a retried write", async () => {
    const racing: LeaseStore = {
      ...store,
      kind: "memory",
      read: async (utype, options) => {
        const result = await store.read(utype, options);
        // Another writer lands between our read and our write.
        await store.create({ utype, uuid: "winner", address: null, epoch: 1, renewedAt: clock.now(), revoked: false, endedUuids: [] });
        return result;
      },
      create: (lease, options, also) => store.create(lease, options, also),
      list: (options) => store.list(options),
    };
    const raced = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { epochClock: COUNTER_ONLY, leases: racing, clock });
    const reply = await send(raced, "PUT", "/primary/scheduler", { uuid: "loser" });
    expect(reply.status).toBe(409);
    expect(reply.body["error"]).toMatchObject({ code: "Conflict" });
    expect(primaryOf(reply)).toMatchObject({ uuid: "winner" });
  });

  it("lists only live primaries, sorted by utype", async () => {
    await send(runtime, "PUT", "/primary/zeta", { uuid: "z" });
    await clock.advance(3000);
    await send(runtime, "PUT", "/primary/alpha", { uuid: "a" });
    const lease = (await send(runtime, "PUT", "/primary/mid", { uuid: "m" })).body["lease"] as string;
    await send(runtime, "DELETE", `/primary/mid?uuid=m&lease=${encodeURIComponent(lease)}`);
    await clock.advance(2500); // zeta is now 5500 ms old: expired
    const listed = await send(runtime, "GET", "/primary");
    expect((listed.body["primaries"] as Array<{ utype: string }>).map((view) => view.utype)).toEqual(["alpha"]);
  });

  it("a bad request is refused before any store call", async () => {
    const bad: Array<[string, string, unknown]> = [
      ["PUT", "/primary/bad%2Fslash", { uuid: "a" }],
      ["PUT", "/primary/scheduler", { uuid: "a", extra: true }],
      ["PUT", "/primary/scheduler", "nope"],
      ["PUT", "/primary/scheduler", { uuid: "a".repeat(129) }],
      ["PUT", "/primary/scheduler", { uuid: ".." }],
      ["DELETE", "/primary/scheduler?uuid=.", undefined],
      ["GET", "/primary/scheduler?verbose=1", undefined],
      ["DELETE", "/primary/scheduler", undefined],
    ];
    for (const [method, path, body] of bad) {
      const reply = await send(runtime, method, path, body);
      expect(reply.status, `${method} ${path}`).toBe(400);
      expect(reply.body["error"]).toMatchObject({ code: "InvalidRequest" });
    }
    expect(store.calls).toEqual([]);
  });

  it("a body over 4 KiB is 413 PayloadTooLarge before any store call", async () => {
    const reply = await send(runtime, "PUT", "/primary/scheduler", { uuid: "a", address: "x".repeat(4100) });
    expect(reply.status).toBe(413);
    expect(reply.body["error"]).toMatchObject({ code: "PayloadTooLarge" });
    expect(store.calls).toEqual([]);
  });

  it("a method the route lacks is 405 with Allow", async () => {
    const reply = await sendWithHeaders(runtime, "PATCH", "/primary/scheduler", { uuid: "a" });
    expect(reply.status).toBe(405);
    expect(reply.body["error"]).toMatchObject({ code: "MethodNotAllowed" });
    expect(reply.headers["allow"]).toBe("GET, PUT, DELETE");
    const health = await sendWithHeaders(runtime, "DELETE", "/health");
    expect(health.status).toBe(405);
    expect(health.headers["allow"]).toBe("GET");
    expect(store.calls).toEqual([]);
  });

  it.each([
    ["Content-Encoding gzip", { "content-encoding": "gzip" }, /Content-Encoding "gzip" is not supported/],
    ["Transfer-Encoding gzip", { "transfer-encoding": "gzip, chunked" }, /Transfer-Encoding "gzip" is not supported/],
  ])("a body sent with %s is 415 UnsupportedMediaType before any store call, as the local host answers it", async (_name, headers, message) => {
    const reply = await sendWithHeaders(runtime, "PUT", "/primary/scheduler", { uuid: "a" }, new InvocationContext(), headers);
    expect(reply.status).toBe(415);
    expect(reply.body["error"]).toMatchObject({ code: "UnsupportedMediaType", message: expect.stringMatching(message) });
    expect(store.calls).toEqual([]);
  });

  it("an identity Content-Encoding is no coding at all: the heartbeat is accepted", async () => {
    const reply = await sendWithHeaders(runtime, "PUT", "/primary/scheduler", { uuid: "a" }, new InvocationContext(), { "content-encoding": "identity" });
    expect(reply.status).toBe(200);
  });
});

describe("handlers over a store that is down", () => {
  const down = failingStore(new StoreUnavailableError("connect ECONNREFUSED 127.0.0.1:10002 at TableClient.getEntity (/x/y.js:1:2)"));
  const runtime = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { epochClock: COUNTER_ONLY, leases: down, clock: new FakeClock(WALL_START) });

  it.each([
    ["GET", "/primary/scheduler", undefined],
    ["PUT", "/primary/scheduler", { uuid: "a" }],
    ["DELETE", "/primary/scheduler?uuid=a", undefined],
    ["GET", "/primary", undefined],
    ["POST", "/primary/scheduler/handover", {}],
    ["GET", "/primary/scheduler?standbys=true", undefined],
  ])("%s %s answers 503 StoreUnavailable with no store detail", async (method, path, body) => {
    const warnings: unknown[] = [];
    const context = new InvocationContext({ logHandler: (_level, ...args) => warnings.push(...args) });
    const reply = await send(runtime, method, path, body, context);
    expect(reply.status).toBe(503);
    expect(reply.body).toEqual({ error: { code: "StoreUnavailable", message: "The lease store is unavailable; retry shortly." } });
    expect(String(warnings)).toMatch(/ECONNREFUSED/); // logged for operators, not shown to callers
  });

  it("a store that never answers is cut off by the request's time budget and answers 503", async () => {
    const signals: AbortSignal[] = [];
    // Like the real stores: wait until the call's signal aborts, then report unavailability.
    const hang = (options?: { abortSignal?: AbortSignal }): Promise<never> =>
      new Promise((_resolve, reject) => {
        const signal = options?.abortSignal;
        if (signal === undefined) return;
        signals.push(signal);
        signal.addEventListener("abort", () => reject(new StoreUnavailableError("timed out", { cause: signal.reason })));
      });
    const hanging: LeaseStore = {
      kind: "table",
      read: (_utype, options) => hang(options),
      create: (_lease, options) => hang(options),
      replace: (_lease, _etag, options) => hang(options),
      renew: (_utype, _renewal, _etag, options) => hang(options),
      list: (options) => hang(options),
      ping: (options) => hang(options),
      readTerms: (_utype, options) => hang(options),
      upsertStandby: (_standby, options) => hang(options),
      readStandbys: (_utype, options) => hang(options),
      listStandbys: (options) => hang(options),
      deleteStandby: (_utype, _uuid, options) => hang(options),
    };
    const budgeted = createRuntime({ timing: TIMING, storeTimeoutMs: 20, leaseSecret: SECRET }, { epochClock: COUNTER_ONLY, leases: hanging, clock: new FakeClock(WALL_START) });
    const warnings: unknown[] = [];
    const context = new InvocationContext({ logHandler: (_level, ...args) => warnings.push(...args) });
    const reply = await send(budgeted, "PUT", "/primary/scheduler", { uuid: "a" }, context);
    expect(reply.status).toBe(503);
    expect(reply.body["error"]).toMatchObject({ code: "StoreUnavailable" });
    expect(warnings).toEqual(["updateHeartBeat: timed out"]);
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
  });

  it("health answers 503 naming the store, and logs the cause for operators only", async () => {
    const warnings: unknown[] = [];
    const context = new InvocationContext({ logHandler: (_level, ...args) => warnings.push(...args) });
    const reply = await send(runtime, "GET", "/health", undefined, context);
    expect(reply.status).toBe(503);
    expect(reply.body).toMatchObject({ status: "unavailable", store: "table", error: { code: "StoreUnavailable" } });
    expect(JSON.stringify(reply.body)).not.toMatch(/ECONNREFUSED/);
    expect(warnings).toEqual([expect.stringMatching(/^health: connect ECONNREFUSED 127\.0\.0\.1:10002/)]);
  });

  it("an unexpected error is logged and rethrown for the host, not turned into a 200", async () => {
    const broken = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { epochClock: COUNTER_ONLY, leases: failingStore(new TypeError("bug")), clock: new FakeClock(WALL_START) });
    const errors: unknown[] = [];
    const context = new InvocationContext({ logHandler: (level, ...args) => level === "error" && errors.push(...args) });
    await expect(send(broken, "GET", "/primary/scheduler", undefined, context)).rejects.toThrow("bug");
    expect(errors.length).toBeGreaterThan(0);
  });
});

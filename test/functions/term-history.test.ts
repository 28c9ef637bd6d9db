import { beforeEach, describe, expect, it } from "vitest";
import { TERM_HISTORY_SLOTS } from "../../shared/contract/term-history.js";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import { LeaseService } from "../../shared/lease/lease-service.js";
import type { LeaseStore } from "../../shared/lease/lease-store.js";
import { LeaseTokenSigner } from "../../shared/lease/lease-token.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { CountingStore } from "../helpers/counting-store.js";
import { FakeClock, COUNTER_ONLY } from "../helpers/fake-clock.js";
import { errorCodeOf, primaryOf, send, WALL_START } from "../helpers/route-requests.js";

const TIMING = { intervalMs: 1000, timeoutMs: 5000 };
const SECRET = "a-test-secret-that-is-long-enough-for-hmac";
const iso = (ms: number): string => new Date(ms).toISOString();

/** GET /api/primary/{utype}/history and what it costs the lease protocol: docs/protocol.md, "Term history". */
describe("term history", () => {
  let clock: FakeClock;
  let store: CountingStore;
  let runtime: Runtime;

  beforeEach(() => {
    clock = new FakeClock(WALL_START);
    store = new CountingStore(new MemoryLeaseStore());
    runtime = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { epochClock: COUNTER_ONLY, leases: store, clock });
  });

  const history = async (query = ""): Promise<{ status: number; body: Record<string, unknown> }> =>
    send(runtime, "GET", `/primary/scheduler/history${query}`);

  it("a role never held: epoch 0 and no terms, for two reads and no write", async () => {
    expect(await history()).toEqual({ status: 200, body: { utype: "scheduler", epoch: 0, terms: [] } });
    expect([...store.calls].sort()).toEqual(["read", "readTerms"]);
  });

  it("renewals, by token or not, write no history; the live term has endedAt and endedBy null", async () => {
    const acquired = await send(runtime, "PUT", "/primary/scheduler", { uuid: "a", address: "10.0.0.4:5800" });
    store.reset();
    let lease = acquired.body["lease"] as string;
    for (let beat = 0; beat < 5; beat++) {
      await clock.advance(1000);
      lease = (await send(runtime, "PUT", "/primary/scheduler", { uuid: "a", lease })).body["lease"] as string;
    }
    for (let beat = 0; beat < 5; beat++) {
      await clock.advance(1000);
      await send(runtime, "PUT", "/primary/scheduler", { uuid: "a" });
    }
    expect(store.calls).toEqual([...Array<string>(5).fill("renew"), ...Array.from({ length: 5 }, () => ["read", "replace"]).flat()]);
    expect((await history()).body).toEqual({
      utype: "scheduler",
      epoch: 1,
      terms: [{ epoch: 1, uuid: "a", address: "10.0.0.4:5800", startedAt: iso(WALL_START), endedAt: null, endedBy: null }],
    });
  });

  it("shows every way a term ends, newest first, each ended term written by the one write that ends it", async () => {
    // epoch 1: released with its token.
    const first = await send(runtime, "PUT", "/primary/scheduler", { uuid: "a", address: "a:1" });
    await clock.advance(1000);
    store.reset();
    await send(runtime, "DELETE", `/primary/scheduler?uuid=a&lease=${encodeURIComponent(first.body["lease"] as string)}`);
    expect(store.calls).toEqual(["read", "replace"]);
    const releasedAt = clock.now();
    // epoch 2: taken from the released role (no history write), then left to expire.
    await clock.advance(1000);
    store.reset();
    await send(runtime, "PUT", "/primary/scheduler", { uuid: "b" });
    expect(store.calls).toEqual(["read", "replace"]);
    const bStarted = clock.now();
    await clock.advance(5001);
    // Expired and not taken yet: derived on read, nothing written.
    store.reset();
    const expired = await history();
    expect([...store.calls].sort()).toEqual(["read", "readTerms"]);
    expect((expired.body["terms"] as unknown[])[0]).toEqual({
      epoch: 2,
      uuid: "b",
      address: null,
      startedAt: iso(bStarted),
      endedAt: iso(bStarted + 5000),
      endedBy: "expired",
    });
    // epoch 3: takes over b (b's term: taken-over, in the takeover's one write), then is revoked and taken over.
    store.reset();
    await send(runtime, "PUT", "/primary/scheduler", { uuid: "c" });
    expect(store.calls).toEqual(["read", "replace"]);
    const cStarted = clock.now();
    store.reset();
    expect(primaryOf(await send(runtime, "DELETE", "/primary/scheduler?uuid=c"))).toMatchObject({ revoked: true });
    expect(store.calls).toEqual(["read", "replace"]);
    await clock.advance(5001);
    await send(runtime, "PUT", "/primary/scheduler", { uuid: "d" });
    const dStarted = clock.now();

    const reply = await history();
    expect(reply.body).toEqual({
      utype: "scheduler",
      epoch: 4,
      terms: [
        { epoch: 4, uuid: "d", address: null, startedAt: iso(dStarted), endedAt: null, endedBy: null },
        { epoch: 3, uuid: "c", address: null, startedAt: iso(cStarted), endedAt: iso(cStarted + 5000), endedBy: "revoked" },
        { epoch: 2, uuid: "b", address: null, startedAt: iso(bStarted), endedAt: iso(bStarted + 5000), endedBy: "taken-over" },
        { epoch: 1, uuid: "a", address: "a:1", startedAt: iso(WALL_START), endedAt: iso(releasedAt), endedBy: "released" },
      ],
    });
    expect((await history("?limit=2")).body["terms"]).toEqual((reply.body["terms"] as unknown[]).slice(0, 2));
  });

  it("keeps at most TERM_HISTORY_SLOTS terms per role: the ring's rows are upserted, never more", async () => {
    const terms = TERM_HISTORY_SLOTS * 2 + 3;
    for (let term = 0; term < terms; term++) {
      await send(runtime, "PUT", "/primary/scheduler", { uuid: `holder-${term}` });
      await clock.advance(5001);
    }
    expect(await store.readTerms("scheduler")).toHaveLength(TERM_HISTORY_SLOTS);
    const shown = (await history()).body["terms"] as Array<{ epoch: number; uuid: string }>;
    expect(shown.map((term) => term.epoch)).toEqual(Array.from({ length: TERM_HISTORY_SLOTS }, (_, i) => terms - i));
    expect(shown.map((term) => term.uuid)).toEqual(Array.from({ length: TERM_HISTORY_SLOTS }, (_, i) => `holder-${terms - 1 - i}`));
  });

  it("refuses a bad limit and an unknown parameter with a 400 naming it, before any store call", async () => {
    for (const query of ["?limit=0", `?limit=${TERM_HISTORY_SLOTS + 1}`, "?limit=two", "?limit=1.5", "?limit=", "?since=1"]) {
      store.reset();
      const reply = await history(query);
      expect(reply.status, query).toBe(400);
      expect(errorCodeOf(reply)).toBe("InvalidRequest");
      expect((reply.body["error"] as { message: string }).message).toMatch(query.startsWith("?limit") ? /limit/ : /since/);
      expect(store.calls).toEqual([]);
    }
  });
});

/**
 * The entry and the ended term's history row are one transaction (docs/protocol.md, "Term
 * history"): when it cannot be written, neither is, and the request fails as any store
 * failure does (503), so the history never has a gap in its epochs.
 */
describe("term history when the write that ends a term fails", () => {
  it("a takeover and a release whose transaction fails are answered 503 and write nothing; retried, the history has no gap", async () => {
    const clock = new FakeClock(WALL_START);
    const memory = new MemoryLeaseStore();
    let down = false;
    const failure = (): never => {
      throw new StoreUnavailableError("Could not record a term in the test store (down).");
    };
    const flaky: LeaseStore = {
      kind: "memory",
      read: (...args) => memory.read(...args),
      create: (...args) => memory.create(...args),
      // The store's transaction failing as a whole: the history row cannot be written, so neither is the entry.
      replace: async (lease, etag, options, also) => (down && also?.endedTerm !== undefined ? failure() : memory.replace(lease, etag, options, also)),
      renew: (...args) => memory.renew(...args),
      list: (...args) => memory.list(...args),
      ping: (...args) => memory.ping(...args),
      readTerms: (...args) => memory.readTerms(...args),
      upsertStandby: (...args) => memory.upsertStandby(...args),
      readStandbys: (...args) => memory.readStandbys(...args),
      listStandbys: (...args) => memory.listStandbys(...args),
      deleteStandby: (...args) => memory.deleteStandby(...args),
    };
    const runtime = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { epochClock: COUNTER_ONLY, leases: flaky, clock });
    const a = await send(runtime, "PUT", "/primary/scheduler", { uuid: "a" });
    const aStarted = clock.now();
    await clock.advance(5001);
    down = true;
    const before = { entry: await memory.read("scheduler"), terms: await memory.readTerms("scheduler") };

    const refused = await send(runtime, "PUT", "/primary/scheduler", { uuid: "b" });
    expect(refused.status).toBe(503);
    expect({ entry: await memory.read("scheduler"), terms: await memory.readTerms("scheduler") }).toEqual(before);
    const notReleased = await send(runtime, "DELETE", `/primary/scheduler?uuid=a&lease=${encodeURIComponent(a.body["lease"] as string)}`);
    expect(notReleased.status).toBe(503);
    expect({ entry: await memory.read("scheduler"), terms: await memory.readTerms("scheduler") }).toEqual(before);

    down = false;
    const takeover = await send(runtime, "PUT", "/primary/scheduler", { uuid: "b" });
    expect(primaryOf(takeover)).toMatchObject({ uuid: "b", epoch: 2 });
    const bStarted = clock.now();
    await clock.advance(1000);
    await send(runtime, "DELETE", `/primary/scheduler?uuid=b&lease=${encodeURIComponent(takeover.body["lease"] as string)}`);
    expect((await send(runtime, "GET", "/primary/scheduler/history")).body).toEqual({
      utype: "scheduler",
      epoch: 2,
      terms: [
        { epoch: 2, uuid: "b", address: null, startedAt: iso(bStarted), endedAt: iso(clock.now()), endedBy: "released" },
        // An expired term ended when it ran out, T after its last renewal.
        { epoch: 1, uuid: "a", address: null, startedAt: iso(aStarted), endedAt: iso(aStarted + TIMING.timeoutMs), endedBy: "taken-over" },
      ],
    });
  });
});

describe("toTermHistory on an entry written before startedAt existed", () => {
  it("shows the entry's last renewal as its term's start, and ring rows older than N epochs not at all", async () => {
    const { toTermHistory } = await import("../../shared/lease/term-history.js");
    const entry = { utype: "scheduler", uuid: "old", address: null, epoch: 40, renewedAt: WALL_START, revoked: false, endedUuids: [] };
    const stale = { utype: "scheduler", epoch: 40 - TERM_HISTORY_SLOTS, uuid: "ancient", address: null, startedAt: 1, endedAt: 2, endedBy: "released" as const };
    const kept = { ...stale, epoch: 39, uuid: "previous" };
    const shown = toTermHistory("scheduler", entry, [stale, kept], WALL_START + 1000, TIMING);
    expect(shown.terms.map((term) => [term.epoch, term.uuid, term.startedAt])).toEqual([
      [40, "old", iso(WALL_START)],
      [39, "previous", iso(1)],
    ]);
  });
});

describe("the row marking a role's creation", () => {
  it("is written with the first entry in one transaction; when that fails, neither is: 503, so a deletion can never go undetected", async () => {
    const clock = new FakeClock(WALL_START);
    const memory = new MemoryLeaseStore();
    let down = true;
    const creates: Array<{ uuid: string; mark: unknown }> = [];
    const store: LeaseStore = {
      kind: "memory",
      read: (...args) => memory.read(...args),
      // The store's transaction failing as a whole: neither the entry nor its history row is written.
      create: async (lease, options, also) => {
        creates.push({ uuid: lease.uuid, mark: also?.creationMark });
        if (down) throw new StoreUnavailableError("Could not create a lease and its history row in the test store (down).");
        return memory.create(lease, options, also);
      },
      replace: (...args) => memory.replace(...args),
      renew: (...args) => memory.renew(...args),
      list: (...args) => memory.list(...args),
      ping: (...args) => memory.ping(...args),
      readTerms: (...args) => memory.readTerms(...args),
      upsertStandby: (...args) => memory.upsertStandby(...args),
      readStandbys: (...args) => memory.readStandbys(...args),
      listStandbys: (...args) => memory.listStandbys(...args),
      deleteStandby: (...args) => memory.deleteStandby(...args),
    };
    const service = new LeaseService({ epochClock: COUNTER_ONLY, store, clock, monotonic: clock, timing: TIMING, tokens: new LeaseTokenSigner(SECRET), storeTimeoutMs: 2000 });
    await expect(service.heartbeat({ utype: "scheduler", uuid: "a" })).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(service.release({ utype: "scheduler", uuid: "x" })).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(await memory.read("scheduler")).toBeUndefined();
    expect(await memory.readTerms("scheduler")).toEqual([]);
    down = false;
    expect((await service.heartbeat({ utype: "scheduler", uuid: "a" })).view.primary).toMatchObject({ uuid: "a", epoch: 1 });
    // Each create carried its creator's mark: a heartbeat's (a) and a DELETE's retire (x).
    const mark = (uuid: string) => ({ utype: "scheduler", epoch: 0, uuid, address: null, startedAt: WALL_START, endedAt: WALL_START, endedBy: "released", transactional: true });
    expect(creates).toEqual([
      { uuid: "a", mark: mark("a") },
      { uuid: "", mark: mark("x") },
      { uuid: "a", mark: mark("a") },
    ]);
    expect(await memory.readTerms("scheduler")).toEqual([mark("a")]);
  });
});

import { describe, expect, it } from "vitest";
import { LeaseService } from "../../shared/lease/lease-service.js";
import { LeaseTokenSigner } from "../../shared/lease/lease-token.js";
import type { LeaseStore } from "../../shared/lease/lease-store.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { RequestBudget } from "../../shared/service/request-budget.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import { CountingStore } from "../helpers/counting-store.js";
import { WALL_START } from "../helpers/route-requests.js";
import { FakeClock } from "../helpers/fake-clock.js";

const TIMING = { intervalMs: 1000, timeoutMs: 5000 };
const BUDGET_MS = 500;

/**
 * docs/protocol.md#the-rule-server-side: a request whose own time budget ran out on the server before its write is not
 * written. The budget runs from when the request arrived, on a monotonic clock.
 */
describe("the request's time budget (HA_STORE_TIMEOUT_MS), on injected clocks", () => {
  function setup(initialSlowReadMs = 0) {
    const slowness = { readMs: initialSlowReadMs };
    const wall = new FakeClock(WALL_START);
    const monotonic = new FakeClock();
    const memory = new MemoryLeaseStore();
    // A read that takes `slowReadMs` of the budget.
    const slow: LeaseStore = {
      kind: "memory",
      read: async (utype, options) => {
        monotonic.pause(slowness.readMs);
        return memory.read(utype, options);
      },
      create: (lease, options, also) => memory.create(lease, options, also),
      replace: (lease, etag, options, also) => memory.replace(lease, etag, options, also),
      renew: (utype, renewal, etag, options) => memory.renew(utype, renewal, etag, options),
      list: (options) => memory.list(options),
      ping: (options) => memory.ping(options),
      readTerms: (utype, options) => memory.readTerms(utype, options),
      upsertStandby: (...args) => memory.upsertStandby(...args),
      readStandbys: (...args) => memory.readStandbys(...args),
      listStandbys: (...args) => memory.listStandbys(...args),
      deleteStandby: (...args) => memory.deleteStandby(...args),
    };
    const store = new CountingStore(slow);
    const service = new LeaseService({
      store,
      clock: wall,
      monotonic,
      timing: TIMING,
      tokens: new LeaseTokenSigner("a-test-secret-that-is-long-enough-for-hmac"),
      storeTimeoutMs: BUDGET_MS,
    });
    return { wall, monotonic, memory, store, service, slowness };
  }

  it("a budget spent by the read leaves the write unmade: StoreUnavailable, nothing changed", async () => {
    const { monotonic, memory, store, service } = setup(BUDGET_MS);
    const refused = service.heartbeat({ utype: "s", uuid: "a", address: "h:1", lease: undefined }, { arrivedAt: monotonic.now() });
    await expect(refused).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(refused).rejects.toThrow(/budget/);
    expect(store.calls).toEqual(["read"]);
    expect(await memory.read("s")).toBeUndefined();
  });

  it("the write goes ahead while a millisecond of the budget is left", async () => {
    const { monotonic, store, service } = setup(BUDGET_MS - 1);
    const accepted = await service.heartbeat({ utype: "s", uuid: "a", address: "h:1", lease: undefined }, { arrivedAt: monotonic.now() });
    expect(accepted.outcome).toBe("accepted");
    expect(store.calls).toEqual(["read", "readTerms", "create"]);
  });

  it("a request that arrived a budget ago (queued while the process was frozen) touches no store at all", async () => {
    const { monotonic, memory, store, service } = setup();
    const first = await service.heartbeat({ utype: "s", uuid: "a", address: null, lease: undefined });
    if (first.outcome !== "accepted") throw new Error(first.outcome);
    store.reset();
    const arrivedAt = monotonic.now() - BUDGET_MS;
    const before = await memory.read("s");
    await expect(service.heartbeat({ utype: "s", uuid: "a", address: null, lease: first.lease }, { arrivedAt })).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(service.release({ utype: "s", uuid: "a", lease: first.lease }, { arrivedAt })).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(service.getPrimary("s", { arrivedAt })).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(store.calls).toEqual([]);
    expect(await memory.read("s")).toEqual(before);
  });

  it("a release whose budget ran out during its read writes nothing", async () => {
    const { monotonic, memory, store, service, slowness } = setup();
    const first = await service.heartbeat({ utype: "s", uuid: "a", address: null, lease: undefined });
    if (first.outcome !== "accepted") throw new Error(first.outcome);
    slowness.readMs = BUDGET_MS;
    store.reset();
    await expect(service.release({ utype: "s", uuid: "a", lease: first.lease }, { arrivedAt: monotonic.now() })).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(store.calls).toEqual(["read"]);
    expect(await memory.read("s")).toMatchObject({ uuid: "a", revoked: false });
  });
});

describe("the store calls' abort signal is what is left of the budget", () => {
  it("a store that never answers is cut off when the budget, counted from arrival, runs out", async () => {
    const hanging: LeaseStore = {
      kind: "table",
      read: (_utype, options) =>
        new Promise((_resolve, reject) => {
          options?.abortSignal?.addEventListener("abort", () => reject(new StoreUnavailableError("timed out")));
        }),
      create: async () => ({ ok: false, reason: "exists" }),
      replace: async () => ({ ok: false, reason: "changed" }),
      renew: async () => ({ ok: false, reason: "changed" }),
      list: async () => [],
      ping: async () => undefined,
      readTerms: async () => [],
      upsertStandby: async () => undefined,
      readStandbys: async () => [],
      listStandbys: async () => [],
      deleteStandby: async () => undefined,
    };
    const service = new LeaseService({
      store: hanging,
      clock: new FakeClock(WALL_START),
      timing: TIMING,
      tokens: new LeaseTokenSigner(),
      storeTimeoutMs: 60_000,
    });
    const started = performance.now();
    // Arrived 59.9 s ago (on the real monotonic clock): 100 ms of the budget is left. The
    // bound tells "what is left" from "the whole budget" with a minute's margin, which no
    // busy machine closes (it once was 700 ms against a 1 s budget).
    await expect(service.getPrimary("s", { arrivedAt: started - 59_900 })).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  it("the store calls of one request share one signal (one timer), and another request gets its own", async () => {
    const clock = new FakeClock(1_000);
    const arrivedAt = clock.now();
    // A participant heartbeat's parts: each its own budget, all from the request's arrival.
    const first = new RequestBudget(clock, arrivedAt, 500);
    const second = new RequestBudget(clock, arrivedAt, 500);
    await clock.advance(10);
    const signal = first.forStoreCall("read").abortSignal;
    expect(second.forStoreCall("write").abortSignal).toBe(signal);
    expect(first.forStoreCall("write").abortSignal).toBe(signal);
    const other = new RequestBudget(clock, clock.now(), 500).forStoreCall("read").abortSignal;
    expect(other).not.toBe(signal);
    expect(other?.aborted).toBe(false);
  });
});

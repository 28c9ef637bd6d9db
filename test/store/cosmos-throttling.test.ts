import { ErrorResponse, type Container } from "@azure/cosmos";
import { describe, expect, it } from "vitest";
import type { LeaseState } from "../../shared/lease/lease.js";
import { CosmosLeaseStore, type CosmosLeaseStoreOptions } from "../../shared/store/cosmos-store.js";
import type { StoreCallOptions } from "../../shared/service/store-call.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";

/** One scripted answer of the fake container: a resolved response or a thrown error. */
type Answer = { response: Record<string, unknown> } | { error: ErrorResponse };

const lease: LeaseState = { utype: "scheduler", uuid: "holder-1", address: null, epoch: 1, renewedAt: 1, revoked: false, endedUuids: [] };

function cosmosError(code: number, extra: Partial<ErrorResponse> = {}): ErrorResponse {
  return Object.assign(new ErrorResponse(`HTTP ${code}`), { code }, extra);
}

const throttled = (retryAfterInMs: number): Answer => ({ error: cosmosError(429, { retryAfterInMs }) });
const created: Answer = { response: { etag: '"e2"', statusCode: 201 } };

/**
 * A Container exposing only the calls CosmosLeaseStore makes. Each call takes the next
 * scripted answer; a call with no answer left fails the test, which pins the number of
 * store operations.
 */
function fakeContainer(answers: Answer[]): { container: Container; calls: string[] } {
  const calls: string[] = [];
  const answer = async (call: string): Promise<Record<string, unknown>> => {
    calls.push(call);
    const next = answers.shift();
    if (next === undefined) throw new Error(`unexpected call: ${call}`);
    if ("error" in next) throw next.error;
    return next.response;
  };
  const item = (id: string) => ({
    read: () => answer(`read ${id}`),
    replace: () => answer(`replace ${id}`),
    patch: () => answer(`patch ${id}`),
  });
  const items = {
    create: () => answer("create"),
    batch: () => answer("batch"),
    readAll: () => ({ fetchAll: () => answer("readAll") }),
  };
  return { container: { item, items } as unknown as Container, calls };
}

/** Records each requested wait; never waits. */
function recordingSleep(): { sleep: NonNullable<CosmosLeaseStoreOptions["sleep"]>; waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    sleep: async (ms) => {
      waits.push(ms);
    },
  };
}

function storeWith(answers: Answer[], options: CosmosLeaseStoreOptions = {}) {
  const { container, calls } = fakeContainer(answers);
  const { sleep, waits } = recordingSleep();
  return { store: new CosmosLeaseStore(container, { sleep, ...options }), calls, waits };
}

describe("Cosmos store throttling (429)", () => {
  it("waits out retry-after and retries the same conditional write, with a debug line for the wait", async () => {
    const debug: string[] = [];
    const { store, calls, waits } = storeWith([throttled(40), created], { debug: (message) => debug.push(message) });
    expect(await store.create(lease)).toEqual({ ok: true, etag: '"e2"' });
    expect(calls).toEqual(["create", "create"]);
    expect(waits).toEqual([40]);
    expect(debug).toEqual(['Cosmos DB throttled "create a lease" (429): waiting 40 ms as it asks, then attempt 2 of 3.']);
  });

  it("waits on node:timers/promises by default, and an abort cuts the wait short", async () => {
    const budget = new AbortController();
    const { container, calls } = fakeContainer([throttled(60_000)]);
    const store = new CosmosLeaseStore(container, { maxThrottleWaitInMs: 120_000, debug: () => undefined });
    const started = performance.now();
    setTimeout(() => budget.abort(new Error("budget spent")), 20);
    await expect(store.read("scheduler", { abortSignal: budget.signal })).rejects.toThrow(/Could not read a lease in Cosmos DB \(timed out\)/);
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(calls).toHaveLength(1);
  });

  it("reads the hint from the x-ms-retry-after-ms header when the field is absent", async () => {
    const headerOnly = cosmosError(429, { headers: { "x-ms-retry-after-ms": "25" } });
    const { store, waits } = storeWith([{ error: headerOnly }, created]);
    expect((await store.create(lease)).ok).toBe(true);
    expect(waits).toEqual([25]);
  });

  it("gives up at once when the hint does not fit in the throttle budget", async () => {
    const { store, calls, waits } = storeWith([throttled(1500)], { maxThrottleWaitInMs: 1000 });
    await expect(store.create(lease)).rejects.toThrow(/HTTP 429/);
    expect(calls).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it("counts every wait of one call against the budget", async () => {
    const { store, calls, waits } = storeWith([throttled(60), throttled(60)], { maxThrottleWaitInMs: 100 });
    await expect(store.read("scheduler")).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(calls).toHaveLength(2);
    expect(waits).toEqual([60]);
  });

  it("stops after maxAttempts however small the hints", async () => {
    const { store, calls, waits } = storeWith([throttled(1), throttled(1), throttled(1)], { maxAttempts: 3 });
    await expect(store.renew("scheduler", { renewedAt: 2, address: null }, '"e1"')).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    expect(calls).toHaveLength(3);
    expect(waits).toEqual([1, 1]);
  });

  it("does not retry when the caller's budget runs out during the wait", async () => {
    const budget = new AbortController();
    const { container, calls } = fakeContainer([throttled(30)]);
    const store = new CosmosLeaseStore(container, {
      sleep: async () => {
        budget.abort(new Error("store time budget spent"));
        throw new Error("aborted");
      },
    });
    const options: StoreCallOptions = { abortSignal: budget.signal };
    await expect(store.replace(lease, '"e1"', options)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(calls).toHaveLength(1);
  });

  it("makes no call at all once the budget is spent", async () => {
    const { store, calls } = storeWith([]);
    await expect(store.read("scheduler", { abortSignal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    expect(calls).toEqual([]);
  });

  it("waits out a transactional batch refused as a whole with 429, as the store's client answers it, and retries it", async () => {
    const endedTerm = { utype: "scheduler", epoch: 1, uuid: "holder-1", address: null, startedAt: 1, endedAt: 2, endedBy: "taken-over" as const };
    // What the SDK answers for a throttled batch on the store's client (BATCH_FAILURES_AS_RESPONSES): no per-operation results.
    const refused: Answer = { response: { code: 429, headers: { "x-ms-retry-after-ms": "40" } } };
    const applied: Answer = { response: { code: 200, headers: {}, result: [{ statusCode: 200, eTag: '"e3"' }, { statusCode: 201 }] } };
    const { store, calls, waits } = storeWith([refused, applied]);
    expect(await store.replace({ ...lease, uuid: "holder-2", epoch: 2 }, '"e1"', undefined, { endedTerm })).toEqual({ ok: true, etag: '"e3"' });
    expect(calls).toEqual(["batch", "batch"]);
    expect(waits).toEqual([40]);
  });

  it("rejects nonsense limits with a message naming the option", () => {
    const { container } = fakeContainer([]);
    expect(() => new CosmosLeaseStore(container, { maxAttempts: 0 })).toThrow(/`maxAttempts`/);
    expect(() => new CosmosLeaseStore(container, { maxThrottleWaitInMs: -1 })).toThrow(/`maxThrottleWaitInMs`/);
  });
});

describe("Cosmos store status mapping", () => {
  const cases: Array<{ name: string; answer: Answer; call: (store: CosmosLeaseStore) => Promise<unknown>; expected: unknown }> = [
    { name: "create answered 409", answer: { error: cosmosError(409) }, call: (s) => s.create(lease), expected: { ok: false, reason: "exists" } },
    { name: "replace answered 412", answer: { error: cosmosError(412) }, call: (s) => s.replace(lease, '"e1"'), expected: { ok: false, reason: "changed" } },
    { name: "replace answered 409", answer: { error: cosmosError(409) }, call: (s) => s.replace(lease, '"e1"'), expected: { ok: false, reason: "changed" } },
    { name: "renew answered 412", answer: { error: cosmosError(412) }, call: (s) => s.renew("scheduler", { renewedAt: 2, address: null }, '"e1"'), expected: { ok: false, reason: "changed" } },
    { name: "renew answered 404", answer: { error: cosmosError(404) }, call: (s) => s.renew("scheduler", { renewedAt: 2, address: null }, '"e1"'), expected: { ok: false, reason: "missing" } },
    { name: "read answered 404", answer: { response: { statusCode: 404, substatus: 0 } }, call: (s) => s.read("scheduler"), expected: undefined },
  ];
  for (const { name, answer, call, expected } of cases) {
    it(`treats ${name} as a typed outcome`, async () => {
      const { store, calls } = storeWith([answer]);
      expect(await call(store)).toEqual(expected);
      expect(calls).toHaveLength(1);
    });
  }

  const failures: Array<{ name: string; answer: Answer; call: (store: CosmosLeaseStore) => Promise<unknown>; message: RegExp }> = [
    { name: "a 503 on create", answer: { error: cosmosError(503) }, call: (s) => s.create(lease), message: /HTTP 503/ },
    { name: "a 500 on renew", answer: { error: cosmosError(500) }, call: (s) => s.renew("scheduler", { renewedAt: 2, address: null }, '"e1"'), message: /HTTP 500/ },
    { name: "a 408 on read", answer: { error: cosmosError(408) }, call: (s) => s.read("scheduler"), message: /HTTP 408/ },
    { name: "a missing container on read", answer: { response: { statusCode: 404, substatus: 1003 } }, call: (s) => s.read("scheduler"), message: /HA_COSMOS_CONTAINER/ },
    { name: "a missing container on replace", answer: { error: cosmosError(404, { substatus: 1003 }) }, call: (s) => s.replace(lease, '"e1"'), message: /404\/1003/ },
    { name: "a network error on ping", answer: { error: Object.assign(new ErrorResponse("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }) }, call: (s) => s.ping(), message: /ECONNREFUSED/ },
  ];
  for (const { name, answer, call, message } of failures) {
    it(`maps ${name} to StoreUnavailableError without retrying`, async () => {
      const { store, calls } = storeWith([answer]);
      const error = await call(store).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).message).toMatch(message);
      expect(calls).toHaveLength(1);
    });
  }
});

describe("Cosmos store on damaged items", () => {
  it.each([
    ["an epoch that is not a number", { epoch: "three" }, /epoch/],
    ["an ended list that is not a list", { endedUuids: "u1" }, /endedUuids/],
  ])("refuses %s as unavailable instead of reading it", async (_name, damage, field) => {
    const item = { id: "scheduler", utype: "scheduler", uuid: "u", address: null, epoch: 4, renewedAt: 1000, ...damage };
    const { store } = storeWith([{ response: { statusCode: 200, resource: item, etag: '"e1"' } }]);
    const error = await store.read("scheduler").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(/^Cosmos DB holds a corrupt lease for "scheduler"/);
    expect((error as Error).message).toMatch(field);
  });
});

describe("Cosmos store on items written before `revoked` and `endedUuids` existed", () => {
  it("reads them as not revoked with no ended uuids", async () => {
    const legacyItem = { id: "scheduler", utype: "scheduler", uuid: "u", address: "h:1", epoch: 4, renewedAt: 1000, _etag: '"e1"' };
    const { store } = storeWith([{ response: { statusCode: 200, resource: legacyItem, etag: '"e1"' } }]);
    expect(await store.read("scheduler")).toEqual({
      utype: "scheduler",
      uuid: "u",
      address: "h:1",
      epoch: 4,
      renewedAt: 1000,
      revoked: false,
      endedUuids: [],
      etag: '"e1"',
    });
  });

  it("a renewal that omits the address patches renewedAt alone", async () => {
    const patches: unknown[] = [];
    const { container } = fakeContainer([]);
    const item = () => ({
      patch: async (operations: unknown) => {
        patches.push(operations);
        return { etag: '"e2"', statusCode: 200 };
      },
    });
    const store = new CosmosLeaseStore({ ...container, item } as unknown as Container);
    expect(await store.renew("scheduler", { renewedAt: 5 }, '"e1"')).toEqual({ ok: true, etag: '"e2"' });
    expect(await store.renew("scheduler", { renewedAt: 6, address: null }, '"e1"')).toEqual({ ok: true, etag: '"e2"' });
    expect(patches).toEqual([
      [{ op: "set", path: "/renewedAt", value: 5 }],
      [
        { op: "set", path: "/renewedAt", value: 6 },
        { op: "set", path: "/address", value: null },
      ],
    ]);
  });
});

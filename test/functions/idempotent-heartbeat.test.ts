import { beforeEach, describe, expect, it } from "vitest";
import type { LeaseState } from "../../shared/lease/lease.js";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import type { LeaseStore } from "../../shared/lease/lease-store.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { CountingStore } from "../helpers/counting-store.js";
import { errorCodeOf, primaryOf, send, WALL_START } from "../helpers/route-requests.js";
import { FakeClock, COUNTER_ONLY } from "../helpers/fake-clock.js";

const TIMING = { intervalMs: 1000, timeoutMs: 5000 };
const SECRET = "a-test-secret-that-is-long-enough-for-hmac";

/**
 * docs/protocol.md#a-heartbeat-that-loses-to-its-own-echo: a heartbeat that loses only to another heartbeat of the same uuid is
 * answered as accepted with the winner's state, but only when the winner's renewedAt is
 * not earlier than this request's arrival: the client measures its deadline from its own
 * sentAt, which is sound only then.
 */
describe("a heartbeat that loses the race to its own echo", () => {
  let clock: FakeClock;
  let memory: MemoryLeaseStore;
  let runtime: Runtime;
  let token: string;

  beforeEach(async () => {
    clock = new FakeClock(WALL_START);
    memory = new MemoryLeaseStore();
    runtime = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { epochClock: COUNTER_ONLY, leases: memory, clock });
    token = (await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", address: "h:1" })).body["lease"] as string;
    await clock.advance(1000);
  });

  it("4 concurrent renewals with one token all answer 200 for the holder", async () => {
    const replies = await Promise.all(Array.from({ length: 4 }, () => send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", lease: token })));
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200]);
    for (const reply of replies) expect(primaryOf(reply)).toMatchObject({ uuid: "holder", epoch: 1, address: "h:1" });
    // Every answer's token is good for the fast path, or at worst stale (slow path): never an error.
    const next = await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", lease: replies[3]!.body["lease"] });
    expect(next.status).toBe(200);
  });

  /** A store in which another heartbeat of `holder` lands between our read and our write. */
  function echoingStore(renewedAt: (arrival: number) => number, extra: Partial<LeaseState> = {}): CountingStore {
    let armed = true;
    const racing: LeaseStore = {
      kind: "memory",
      read: async (utype, options) => {
        const entry = await memory.read(utype, options);
        if (armed && entry !== undefined) {
          armed = false;
          const { etag, ...state } = entry;
          await memory.replace({ ...state, renewedAt: renewedAt(clock.now()), ...extra }, etag);
        }
        return entry;
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
    return new CountingStore(racing);
  }

  it("a winner renewed at or after this request's arrival: accepted, with the winner's state and a token for its ETag", async () => {
    const store = echoingStore((arrival) => arrival);
    const raced = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { epochClock: COUNTER_ONLY, leases: store, clock });
    const reply = await send(raced, "PUT", "/primary/scheduler", { uuid: "holder" });
    expect(reply.status).toBe(200);
    expect(primaryOf(reply)).toMatchObject({ uuid: "holder", epoch: 1, address: "h:1", expiresInMs: 5000 });
    expect(store.calls).toEqual(["read", "replace", "read"]);
    store.reset();
    expect((await send(raced, "PUT", "/primary/scheduler", { uuid: "holder", lease: reply.body["lease"] })).status).toBe(200);
    expect(store.calls).toEqual(["renew"]);
  });

  it("a winner renewed before this request arrived leaves the term as it was: the request decides again and renews, never 409 Conflict", async () => {
    const store = echoingStore((arrival) => arrival - 1);
    const raced = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { epochClock: COUNTER_ONLY, leases: store, clock });
    const reply = await send(raced, "PUT", "/primary/scheduler", { uuid: "holder" });
    expect(reply.status).toBe(200);
    // Its own renewal is what the answer reports: renewed now, so its deadline is sound.
    expect(primaryOf(reply)).toMatchObject({ uuid: "holder", epoch: 1, renewedAt: new Date(clock.now()).toISOString(), expiresInMs: 5000 });
    expect(store.calls).toEqual(["read", "replace", "read", "replace"]);
  });

  it("a race lost to a revoke is 409 LeaseRevoked", async () => {
    const store = echoingStore((arrival) => arrival - 1000, { revoked: true });
    const raced = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { epochClock: COUNTER_ONLY, leases: store, clock });
    const reply = await send(raced, "PUT", "/primary/scheduler", { uuid: "holder" });
    expect(reply.status).toBe(409);
    expect(errorCodeOf(reply)).toBe("LeaseRevoked");
  });
});

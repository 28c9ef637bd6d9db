import { beforeEach, describe, expect, it } from "vitest";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { CountingStore } from "../helpers/counting-store.js";
import { primaryOf, send, WALL_START } from "../helpers/route-requests.js";
import { FakeClock, COUNTER_ONLY } from "../helpers/fake-clock.js";

const TIMING = { intervalMs: 1000, timeoutMs: 5000 };
const SECRET = "a-test-secret-that-is-long-enough-for-hmac";

/** docs/protocol.md#the-rule-server-side: a heartbeat that omits `address` keeps the stored one; `"address": null` clears it. */
describe("UpdateHeartBeat and the holder's address", () => {
  let clock: FakeClock;
  let store: CountingStore;
  let runtime: Runtime;
  let token: string;

  beforeEach(async () => {
    clock = new FakeClock(WALL_START);
    store = new CountingStore(new MemoryLeaseStore());
    runtime = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { epochClock: COUNTER_ONLY, leases: store, clock });
    token = (await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", address: "10.0.0.4:5800" })).body["lease"] as string;
    await clock.advance(1000);
    store.reset();
  });

  it("fast path: omitted keeps the stored address, still one store operation, and the answer shows it", async () => {
    const renewed = await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", lease: token });
    expect(renewed.status).toBe(200);
    expect(store.calls).toEqual(["renew"]);
    expect(primaryOf(renewed)).toMatchObject({ uuid: "holder", address: "10.0.0.4:5800", epoch: 1 });
    expect(primaryOf(await send(runtime, "GET", "/primary/scheduler"))).toMatchObject({ address: "10.0.0.4:5800" });

    // The next token still carries the address, so the following omitted renewal shows it too.
    store.reset();
    const again = await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", lease: renewed.body["lease"] });
    expect(store.calls).toEqual(["renew"]);
    expect(primaryOf(again)).toMatchObject({ address: "10.0.0.4:5800" });
  });

  it("fast path: a string sets it and null clears it, and the next omitted renewal shows the new value", async () => {
    const moved = await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", address: "10.0.0.9:5800", lease: token });
    expect(primaryOf(moved)).toMatchObject({ address: "10.0.0.9:5800" });
    const kept = await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", lease: moved.body["lease"] });
    expect(primaryOf(kept)).toMatchObject({ address: "10.0.0.9:5800" });
    const cleared = await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", address: null, lease: kept.body["lease"] });
    expect(primaryOf(cleared)).toMatchObject({ address: null });
    const stillCleared = await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", lease: cleared.body["lease"] });
    expect(primaryOf(stillCleared)).toMatchObject({ address: null });
    expect(store.calls).toEqual(["renew", "renew", "renew", "renew"]);
  });

  it("slow path: omitted keeps, null clears, a string sets", async () => {
    expect(primaryOf(await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder" }))).toMatchObject({ address: "10.0.0.4:5800" });
    expect(primaryOf(await send(runtime, "GET", "/primary/scheduler"))).toMatchObject({ address: "10.0.0.4:5800" });
    expect(primaryOf(await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", address: null }))).toMatchObject({ address: null });
    expect(primaryOf(await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", address: "h:2" }))).toMatchObject({ address: "h:2" });
    expect(primaryOf(await send(runtime, "GET", "/primary/scheduler"))).toMatchObject({ address: "h:2" });
  });

  it("on create and take-over, omitted means no address: the former holder's is not inherited", async () => {
    expect(primaryOf(await send(runtime, "PUT", "/primary/fresh", { uuid: "a" }))).toMatchObject({ address: null });
    await clock.advance(5001);
    const takeover = await send(runtime, "PUT", "/primary/scheduler", { uuid: "standby" });
    expect(primaryOf(takeover)).toMatchObject({ uuid: "standby", epoch: 2, address: null });
  });
});

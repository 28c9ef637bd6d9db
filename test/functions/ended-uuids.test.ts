import { beforeEach, describe, expect, it } from "vitest";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { CountingStore } from "../helpers/counting-store.js";
import { errorCodeOf, primaryOf, send, WALL_START } from "../helpers/route-requests.js";
import { FakeClock, COUNTER_ONLY } from "../helpers/fake-clock.js";

const TIMING = { intervalMs: 1000, timeoutMs: 5000 };
const SECRET = "a-test-secret-that-is-long-enough-for-hmac";

/**
 * docs/protocol.md#the-rule-server-side: a uuid whose term ended (released, revoked, taken over) never starts a new
 * term, so a late heartbeat of a dead incarnation cannot resurrect a lease nobody is behind.
 */
describe("ended uuids never start a new term", () => {
  let clock: FakeClock;
  let store: CountingStore;
  let runtime: Runtime;
  const put = (utype: string, body: object) => send(runtime, "PUT", `/primary/${utype}`, body);

  beforeEach(() => {
    clock = new FakeClock(WALL_START);
    store = new CountingStore(new MemoryLeaseStore());
    runtime = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { epochClock: COUNTER_ONLY, leases: store, clock });
  });

  it("a released uuid's late renewal is 409 LeaseRevoked and writes nothing; the epoch is not spent", async () => {
    const token = (await put("scheduler", { uuid: "old" })).body["lease"] as string;
    await send(runtime, "DELETE", `/primary/scheduler?uuid=old&lease=${encodeURIComponent(token)}`);
    store.reset();
    const late = await put("scheduler", { uuid: "old", lease: token });
    expect(late.status).toBe(409);
    expect(errorCodeOf(late)).toBe("LeaseRevoked");
    expect((late.body["error"] as { message: string }).message).toMatch(/new uuid/);
    expect(primaryOf(late)).toBeNull();
    expect(store.calls).toEqual(["renew", "read"]);
    expect(primaryOf(await put("scheduler", { uuid: "standby" }))).toMatchObject({ uuid: "standby", epoch: 2 });
  });

  it("a uuid that was taken over stays ended after the next holder releases", async () => {
    const token = (await put("scheduler", { uuid: "old" })).body["lease"] as string;
    await clock.advance(5001);
    const next = await put("scheduler", { uuid: "next" });
    await send(runtime, "DELETE", `/primary/scheduler?uuid=next&lease=${encodeURIComponent(next.body["lease"] as string)}`);
    for (const body of [{ uuid: "old", lease: token }, { uuid: "old" }]) {
      const late = await put("scheduler", body);
      expect(late.status).toBe(409);
      expect(errorCodeOf(late)).toBe("LeaseRevoked");
    }
    expect(primaryOf(await put("scheduler", { uuid: "third" }))).toMatchObject({ uuid: "third", epoch: 3 });
  });

  it("a revoked holder stays ended after it was taken over", async () => {
    await put("scheduler", { uuid: "old" });
    await send(runtime, "DELETE", "/primary/scheduler?uuid=old");
    await clock.advance(5001);
    const next = await put("scheduler", { uuid: "next" });
    expect(primaryOf(next)).toMatchObject({ uuid: "next", epoch: 2 });
    await send(runtime, "DELETE", `/primary/scheduler?uuid=next&lease=${encodeURIComponent(next.body["lease"] as string)}`);
    expect(errorCodeOf(await put("scheduler", { uuid: "old" }))).toBe("LeaseRevoked");
  });

  it("a DELETE by a uuid that holds nothing retires it with one write, so its acquire still in flight cannot land", async () => {
    // A fresh utype: the DELETE of a stopping elector overtakes its own first acquire.
    let retired = await send(runtime, "DELETE", "/primary/fresh?uuid=stopping");
    // The placeholder that retires the uuid holds epoch 0: the first holder still gets 1.
    expect(retired).toEqual({ status: 200, body: { utype: "fresh", primary: null, epoch: 0, intervalMs: 1000, timeoutMs: 5000, handover: null } });
    let late = await put("fresh", { uuid: "stopping" });
    expect(errorCodeOf(late)).toBe("LeaseRevoked");
    expect(primaryOf(await put("fresh", { uuid: "standby" }))).toMatchObject({ uuid: "standby", epoch: 1 });

    // A released lease: the same.
    const token = (await put("scheduler", { uuid: "a" })).body["lease"] as string;
    await send(runtime, "DELETE", `/primary/scheduler?uuid=a&lease=${encodeURIComponent(token)}`);
    store.reset();
    retired = await send(runtime, "DELETE", "/primary/scheduler?uuid=stopping");
    expect(retired.status).toBe(200);
    expect(store.calls).toEqual(["read", "replace"]);
    store.reset();
    expect((await send(runtime, "DELETE", "/primary/scheduler?uuid=stopping")).status).toBe(200);
    expect(store.calls).toEqual(["read"]);
    late = await put("scheduler", { uuid: "stopping" });
    expect(errorCodeOf(late)).toBe("LeaseRevoked");
    expect(primaryOf(await put("scheduler", { uuid: "b" }))).toMatchObject({ uuid: "b", epoch: 2 });
  });

  it("a DELETE by a non-holder while another holds the lease is 409 LeaseHeld and still retires the uuid", async () => {
    await put("scheduler", { uuid: "holder" });
    const reply = await send(runtime, "DELETE", "/primary/scheduler?uuid=stopping");
    expect(reply.status).toBe(409);
    expect(errorCodeOf(reply)).toBe("LeaseHeld");
    await clock.advance(5001);
    expect(errorCodeOf(await put("scheduler", { uuid: "stopping" }))).toBe("LeaseRevoked");
  });
});

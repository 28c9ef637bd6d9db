import { describe, expect, it } from "vitest";
import { LeaseService } from "../../shared/lease/lease-service.js";
import { LeaseTokenSigner } from "../../shared/lease/lease-token.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { CountingStore } from "../helpers/counting-store.js";
import { FakeClock } from "../helpers/fake-clock.js";

/** A renewal that leaves the one-write fast path says so in a debug line (NODE_DEBUG=ha-module). */
describe("a fast-path renewal that falls back to the slow path", () => {
  function setup() {
    const debug: string[] = [];
    const store = new CountingStore(new MemoryLeaseStore());
    const service = new LeaseService({
      store,
      clock: new FakeClock(),
      timing: { intervalMs: 1000, timeoutMs: 5000 },
      tokens: new LeaseTokenSigner("a-test-secret-that-is-long-enough-for-hmac"),
      storeTimeoutMs: 2000,
      debug: (message) => debug.push(message),
    });
    return { service, store, debug };
  }

  it("logs nothing while the token is current: one renew, no read", async () => {
    const { service, store, debug } = setup();
    const first = await service.heartbeat({ utype: "scheduler", uuid: "a" });
    store.reset();
    const renewed = await service.heartbeat({ utype: "scheduler", uuid: "a", lease: first.outcome === "accepted" ? first.lease : "" });
    expect(renewed.outcome).toBe("accepted");
    expect(store.calls).toEqual(["renew"]);
    expect(debug).toEqual([]);
  });

  it("logs a token whose entry moved on, and one that does not verify, then answers by the slow path", async () => {
    const { service, store, debug } = setup();
    const first = await service.heartbeat({ utype: "scheduler", uuid: "a" });
    const stale = first.outcome === "accepted" ? first.lease : "";
    await service.heartbeat({ utype: "scheduler", uuid: "a" }); // moves the ETag on
    store.reset();
    expect((await service.heartbeat({ utype: "scheduler", uuid: "a", lease: stale })).outcome).toBe("accepted");
    expect(store.calls).toEqual(["renew", "read", "replace"]);
    expect((await service.heartbeat({ utype: "scheduler", uuid: "a", lease: "v2.forged.token" })).outcome).toBe("accepted");
    expect(debug).toEqual([
      "scheduler: the fast-path renewal of a found the entry changed: slow path.",
      "scheduler: the lease token of a did not verify (another secret, or not this caller's): slow path.",
    ]);
  });
});

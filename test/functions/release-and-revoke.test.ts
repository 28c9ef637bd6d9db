import { beforeEach, describe, expect, it } from "vitest";
import { LeaseTokenSigner } from "../../shared/lease/lease-token.js";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { CountingStore } from "../helpers/counting-store.js";
import { errorCodeOf, primaryOf, send, WALL_START } from "../helpers/route-requests.js";
import { FakeClock, COUNTER_ONLY } from "../helpers/fake-clock.js";

const TIMING = { intervalMs: 1000, timeoutMs: 5000 };
const SECRET = "a-test-secret-that-is-long-enough-for-hmac";

/**
 * docs/protocol.md#the-rule-server-side: a release never opens a window in which a standby is primary while the holder
 * still believes it is. With the holder's token it is a proven release (a standby may take
 * over at once); without it, a revoke (nobody takes over before the lease expires).
 */
describe("DELETE /api/primary/{utype}: proven release or revoke", () => {
  let clock: FakeClock;
  let store: CountingStore;
  let runtime: Runtime;
  let token: string;

  beforeEach(async () => {
    clock = new FakeClock(WALL_START);
    store = new CountingStore(new MemoryLeaseStore());
    runtime = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { epochClock: COUNTER_ONLY, leases: store, clock });
    const acquired = await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", address: "10.0.0.4:5800" });
    token = acquired.body["lease"] as string;
    await clock.advance(1000);
    store.reset();
  });

  it("without the token it revokes: the holder stays primary, marked revoked, and nobody takes over before expiry", async () => {
    const revoked = await send(runtime, "DELETE", "/primary/scheduler?uuid=holder");
    expect(revoked.status).toBe(200);
    expect(primaryOf(revoked)).toMatchObject({ uuid: "holder", address: "10.0.0.4:5800", epoch: 1, revoked: true, expiresInMs: 4000 });
    expect(store.calls).toEqual(["read", "replace"]);

    // A standby that read GetPrimary cannot break the lease early.
    expect(primaryOf(await send(runtime, "GET", "/primary/scheduler"))).toMatchObject({ uuid: "holder", revoked: true });
    const early = await send(runtime, "PUT", "/primary/scheduler", { uuid: "standby" });
    expect(early.status).toBe(409);
    expect(errorCodeOf(early)).toBe("LeaseHeld");

    // The holder's next heartbeat, with or without its token, is told at once.
    for (const body of [{ uuid: "holder", lease: token }, { uuid: "holder" }]) {
      const refused = await send(runtime, "PUT", "/primary/scheduler", body);
      expect(refused.status).toBe(409);
      expect(errorCodeOf(refused)).toBe("LeaseRevoked");
      expect(primaryOf(refused)).toMatchObject({ uuid: "holder", revoked: true });
    }

    await clock.advance(4000); // exactly T since the last renewal: still live
    expect((await send(runtime, "PUT", "/primary/scheduler", { uuid: "standby" })).status).toBe(409);
    await clock.advance(1);
    const takeover = await send(runtime, "PUT", "/primary/scheduler", { uuid: "standby" });
    expect(takeover.status).toBe(200);
    expect(primaryOf(takeover)).toMatchObject({ uuid: "standby", epoch: 2, revoked: false });
  });

  it("a second revoke changes nothing and answers the same", async () => {
    await send(runtime, "DELETE", "/primary/scheduler?uuid=holder");
    store.reset();
    const again = await send(runtime, "DELETE", "/primary/scheduler?uuid=holder");
    expect(again.status).toBe(200);
    expect(primaryOf(again)).toMatchObject({ uuid: "holder", revoked: true });
    expect(store.calls).toEqual(["read"]);
  });

  it("with the holder's token it releases at once, keeping the epoch: one read and one write, which records the ended term too", async () => {
    const released = await send(runtime, "DELETE", `/primary/scheduler?uuid=holder&lease=${encodeURIComponent(token)}`);
    expect(released).toEqual({ status: 200, body: { utype: "scheduler", primary: null, epoch: 1, intervalMs: 1000, timeoutMs: 5000, handover: null } });
    expect(store.calls).toEqual(["read", "replace"]);
    const next = await send(runtime, "PUT", "/primary/scheduler", { uuid: "standby" });
    expect(next.status).toBe(200);
    expect(primaryOf(next)).toMatchObject({ uuid: "standby", epoch: 2 });
  });

  it("a token with a stale ETag still proves the release: uuid and epoch are the proof", async () => {
    const renewed = await send(runtime, "PUT", "/primary/scheduler", { uuid: "holder", lease: token });
    expect(renewed.body["lease"]).not.toBe(token);
    const released = await send(runtime, "DELETE", `/primary/scheduler?uuid=holder&lease=${encodeURIComponent(token)}`);
    expect(primaryOf(released)).toBeNull();
  });

  it("a proven release also ends a revoked lease at once: the holder consents", async () => {
    await send(runtime, "DELETE", "/primary/scheduler?uuid=holder");
    const released = await send(runtime, "DELETE", `/primary/scheduler?uuid=holder&lease=${encodeURIComponent(token)}`);
    expect(released.status).toBe(200);
    expect(primaryOf(released)).toBeNull();
    expect(primaryOf(await send(runtime, "PUT", "/primary/scheduler", { uuid: "standby" }))).toMatchObject({ uuid: "standby", epoch: 2 });
  });

  it("a token that does not verify, is not the caller's, or is malformed is treated as absent: a revoke, never an error", async () => {
    const forged = new LeaseTokenSigner("another-secret-that-is-long-enough-too").issue({
      utype: "scheduler",
      uuid: "holder",
      epoch: 1,
      etag: (await store.read("scheduler"))?.etag ?? "",
      address: null,
    });
    const someoneElses = (await send(runtime, "PUT", "/primary/other", { uuid: "holder" })).body["lease"] as string;
    for (const bad of [forged, someoneElses, "v2.garbage.sig", "x".repeat(5000), ""]) {
      const reply = await send(runtime, "DELETE", `/primary/scheduler?uuid=holder&lease=${encodeURIComponent(bad)}`);
      expect(reply.status, bad.slice(0, 20)).toBe(200);
      expect(primaryOf(reply), bad.slice(0, 20)).toMatchObject({ uuid: "holder", revoked: true });
    }
  });

  it("the former holder's token, presented by the next holder, proves nothing for it", async () => {
    const released = await send(runtime, "DELETE", `/primary/scheduler?uuid=holder&lease=${encodeURIComponent(token)}`);
    expect(primaryOf(released)).toBeNull();
    const standby = await send(runtime, "PUT", "/primary/scheduler", { uuid: "standby" });
    const rival = await send(runtime, "DELETE", `/primary/scheduler?uuid=standby&lease=${encodeURIComponent(token)}`);
    expect(rival.status).toBe(200);
    expect(primaryOf(rival)).toMatchObject({ uuid: "standby", epoch: 2, revoked: true });
    expect(standby.status).toBe(200);
  });

  it("another live holder: 409 LeaseHeld, with the LeaseView", async () => {
    const reply = await send(runtime, "DELETE", "/primary/scheduler?uuid=someone-else");
    expect(reply.status).toBe(409);
    expect(errorCodeOf(reply)).toBe("LeaseHeld");
    expect(primaryOf(reply)).toMatchObject({ uuid: "holder", revoked: false });
    expect(primaryOf(await send(runtime, "GET", "/primary/scheduler"))).toMatchObject({ uuid: "holder", revoked: false });
  });

  it("an expired holder's DELETE without a token clears it: nobody believes in it any more", async () => {
    await clock.advance(5001);
    const reply = await send(runtime, "DELETE", "/primary/scheduler?uuid=holder");
    expect(reply.status).toBe(200);
    expect(primaryOf(reply)).toBeNull();
    expect(primaryOf(await send(runtime, "PUT", "/primary/scheduler", { uuid: "standby" }))).toMatchObject({ uuid: "standby", epoch: 2 });
  });
});

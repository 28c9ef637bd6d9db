import { describe, expect, it } from "vitest";
import { LeaseService } from "../../shared/lease/lease-service.js";
import { LeaseTokenSigner } from "../../shared/lease/lease-token.js";
import type { CallOptions, HeartbeatBody, HeartbeatResult, LeaseTransport, LeaseView, ReleaseOptions, ReleaseResult, WithdrawResult } from "../../shared/sdk/index.js";
import { ForbiddenError } from "../../shared/sdk/auth/forbidden-error.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { sleep } from "../../shared/sdk/loop/elector-clock.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { I, T } from "../helpers/sdk-fakes.js";
import { FakeClock, settle } from "../helpers/fake-clock.js";

const WALL = Date.UTC(2026, 10, 20);

/** The real lease service over a memory store, on the fake clock, with every call logged. */
class ServiceTransport implements LeaseTransport {
  readonly calls: string[] = [];
  constructor(readonly service: LeaseService) {}

  getPrimary(utype: string, _options?: CallOptions): Promise<LeaseView> {
    this.calls.push("get");
    return this.service.getPrimary(utype);
  }

  heartbeat(utype: string, request: HeartbeatBody, _options?: CallOptions): Promise<HeartbeatResult> {
    this.calls.push(`put ${request.uuid}${request.announce === true ? " announce" : ""}`);
    return this.service.heartbeat({ utype, ...request });
  }

  release(utype: string, uuid: string, options?: ReleaseOptions): Promise<ReleaseResult> {
    this.calls.push(`delete ${uuid}${options?.lease === undefined ? "" : " with token"}`);
    return this.service.release({ utype, uuid, lease: options?.lease });
  }

  withdraw(utype: string, uuid: string, _options?: CallOptions): Promise<WithdrawResult> {
    this.calls.push(`withdraw ${uuid}`);
    return this.service.withdrawStandby(utype, uuid);
  }
}

function setUp(): { clock: FakeClock; service: LeaseService; transport: ServiceTransport } {
  const clock = new FakeClock();
  const service = new LeaseService({
    store: new MemoryLeaseStore(),
    clock: { now: () => WALL + clock.now() },
    monotonic: clock,
    timing: { intervalMs: I, timeoutMs: T },
    tokens: new LeaseTokenSigner("a-test-secret-that-is-long-enough-for-hmac"),
    storeTimeoutMs: 2000,
  });
  return { clock, service, transport: new ServiceTransport(service) };
}

/** Each elector's role over time, and a check that two never believe they are primary at once. */
function elector(name: string, transport: LeaseTransport, clock: FakeClock, log: string[], options: { announce?: boolean } = {}): PrimaryElector {
  let counter = 0;
  const made = new PrimaryElector({ utype: "svc", address: `${name}:1`, transport, clock, newUuid: () => `${name}${++counter}`, random: () => 0, ...options });
  made.on("elected", ({ uuid }) => void log.push(`${clock.now()} elected ${uuid}`));
  made.on("demoted", ({ reason, uuid }) => void log.push(`${clock.now()} demoted ${uuid} ${reason}`));
  return made;
}

describe("the elector and a planned handover (docs/protocol.md#planned-handover)", () => {
  it("the holder steps down (handlers awaited, then the release with its token); the named standby takes over far within I; the old one waits T", async () => {
    const { clock, service, transport } = setUp();
    const log: string[] = [];
    const a = elector("a", transport, clock, log).start();
    await clock.advance(10);
    expect(a.isPrimary()).toBe(true);
    const b = elector("b", transport, clock, log).start();
    await clock.advance(10);
    // b announced itself on its first poll: electors announce unless told not to.
    expect(transport.calls).toContain("put b1 announce");
    expect((await service.getPrimary("svc", undefined, { standbys: true })).standbys?.map((standby) => standby.uuid)).toEqual(["b1"]);

    let handlerDone = false;
    let releasedWhileHandlerRan = false;
    a.on("demoted", async ({ reason }) => {
      if (reason !== "handover") return;
      expect(a.isPrimary()).toBe(false);
      await sleep(clock, 300, new AbortController().signal);
      releasedWhileHandlerRan = transport.calls.includes("delete a1 with token");
      handlerDone = true;
    });
    expect((await service.handover("svc", "b:1")).outcome).toBe("requested");
    const requestedAt = clock.now();
    // Within one I: a's renewal shows it, a steps down, the handler runs 300 ms, then the release.
    await clock.advance(I + 400);
    expect(handlerDone).toBe(true);
    expect(releasedWhileHandlerRan).toBe(false);
    expect(transport.calls).toContain("delete a1 with token");
    const releaseAt = Number(log.find((line) => line.includes("demoted a1 handover"))?.split(" ")[0]) + 300;
    const bElected = log.find((line) => line.includes("elected b1"));
    expect(bElected, log.join("\n")).toBeDefined();
    // b polled fast (I/10) once it saw the handover to it: elected within I/10 of the release.
    expect(Number(bElected?.split(" ")[0]) - releaseAt).toBeLessThanOrEqual(I / 10 + 1);
    expect(Number(bElected?.split(" ")[0]) - requestedAt).toBeLessThan(2 * I);
    expect(b.isPrimary()).toBe(true);
    // a competes again only after T, as a new uuid; it does not win b's role back.
    await clock.advance(3 * T);
    expect(b.isPrimary()).toBe(true);
    expect(a.isPrimary()).toBe(false);
    expect(a.uuid).not.toBe("a1");
    await Promise.all([a.stop(), b.stop()]);
    await settle();
  });

  it("a handover to any goes to the standby, not back to the old holder", async () => {
    const { clock, service, transport } = setUp();
    const log: string[] = [];
    const a = elector("a", transport, clock, log).start();
    await clock.advance(10);
    const b = elector("b", transport, clock, log).start();
    await clock.advance(10);
    expect((await service.handover("svc", undefined)).outcome).toBe("requested");
    await clock.advance(2 * I);
    expect(b.isPrimary()).toBe(true);
    expect(a.isPrimary()).toBe(false);
    expect(log.filter((line) => line.includes("elected"))).toHaveLength(2);
    await clock.advance(2 * T);
    expect(b.isPrimary()).toBe(true);
    await Promise.all([a.stop(), b.stop()]);
  });

  it("a holder that ignores the handover (an old SDK) is not forced: its renewals are accepted until the request + T, then refused", async () => {
    const { clock, service, transport } = setUp();
    const log: string[] = [];
    const a = elector("a", transport, clock, log).start();
    await clock.advance(10);
    expect((await service.handover("svc", undefined)).outcome).toBe("requested");
    // An old SDK that ignores the handover keeps renewing: simulated by direct renewals.
    await a.stop();
    const first = await service.heartbeat({ utype: "svc", uuid: "old" });
    expect(first.outcome).toBe("accepted");
    await service.handover("svc", undefined);
    await clock.advance(T + 1);
    expect((await service.heartbeat({ utype: "svc", uuid: "old", lease: first.outcome === "accepted" ? first.lease : "" })).outcome).toBe("revoked");
  });

  it("a standby that stops withdraws its row: gone from the standbys and from a handover at once, not T later; a holder that stops releases instead", async () => {
    const { clock, service, transport } = setUp();
    const log: string[] = [];
    const a = elector("a", transport, clock, log).start();
    await clock.advance(10);
    const b = elector("b", transport, clock, log).start();
    await clock.advance(10);
    expect((await service.getPrimary("svc", undefined, { standbys: true })).standbys?.map((standby) => standby.uuid)).toEqual(["b1"]);
    await clock.advance(3 * I);
    await b.stop();
    expect(transport.calls.at(-1)).toBe("withdraw b1");
    expect((await service.getPrimary("svc", undefined, { standbys: true })).standbys).toEqual([]);
    const handover = await service.handover("svc", "b:1");
    expect(handover.outcome).toBe("no-such-standby");
    // The holder keeps the role: no handover to a standby that left, no T without a primary.
    await clock.advance(2 * I);
    expect(a.isPrimary()).toBe(true);
    // The holder announced as a1 before it was elected as a1: it releases, and withdraws nothing.
    transport.calls.length = 0;
    await a.stop();
    expect(transport.calls).toEqual(["delete a1 with token"]);
  });

  it("a standby whose writes the grants refuse has no row, and its stop() sends nothing", async () => {
    const { clock, service, transport } = setUp();
    // b may read the role but not hold it: every heartbeat of b's, its announcements included, is a 403.
    const heartbeat = transport.heartbeat.bind(transport);
    transport.heartbeat = (utype, request, options) => {
      if (!request.uuid.startsWith("b")) return heartbeat(utype, request, options);
      transport.calls.push(`put ${request.uuid}${request.announce === true ? " announce (403)" : " (403)"}`);
      return Promise.reject(new ForbiddenError(`UpdateHeartBeat(${utype})`, "managed identity b", `The identity b may not hold or release the role ${utype}`));
    };
    const log: string[] = [];
    const a = elector("a", transport, clock, log).start();
    await clock.advance(10);
    const b = elector("b", transport, clock, log).on("error", () => undefined).start();
    await clock.advance(3 * I);
    expect(transport.calls).toContain("put b1 announce (403)");
    expect((await service.getPrimary("svc", undefined, { standbys: true })).standbys).toEqual([]);
    transport.calls.length = 0;
    await b.stop();
    expect(transport.calls).toEqual([]);
    await a.stop();
  });

  it("a named standby that stops while the handover is pending withdraws, and the handover is dropped: the holder stays", async () => {
    const { clock, service, transport } = setUp();
    const log: string[] = [];
    const a = elector("a", transport, clock, log).start();
    await clock.advance(10);
    const b = elector("b", transport, clock, log).start();
    await clock.advance(10);
    expect((await service.handover("svc", "b1")).outcome).toBe("requested");
    await b.stop();
    expect((await service.getPrimary("svc")).handover).toBeNull();
    await clock.advance(2 * T);
    expect(a.isPrimary()).toBe(true);
    expect(log.filter((line) => line.includes("demoted"))).toEqual([]);
    await a.stop();
  });
});

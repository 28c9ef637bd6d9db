import { describe, expect, it } from "vitest";
import { LeaseService } from "../../shared/lease/lease-service.js";
import { LeaseTokenSigner } from "../../shared/lease/lease-token.js";
import type { CallOptions, HeartbeatBody, HeartbeatResult, LeaseTransport, LeaseView, ReleaseOptions, ReleaseResult } from "../../shared/sdk/index.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { FakeClock, settle, COUNTER_ONLY } from "../helpers/fake-clock.js";

const I = 500;
const T = 1500;
const REPLY_DELAY_MS = 400;
const UTYPE = "r1";

/**
 * The real lease service behind a network whose replies take 400 ms: every request is
 * applied when it arrives, and its answer is heard 400 ms later, or never if the caller
 * gives up first (the service has applied it all the same).
 */
class SlowRepliesTransport implements LeaseTransport {
  constructor(
    private readonly service: LeaseService,
    private readonly clock: FakeClock,
  ) {}

  getPrimary(utype: string, options?: CallOptions): Promise<LeaseView> {
    return this.#reply(this.service.getPrimary(utype), options);
  }

  heartbeat(utype: string, request: HeartbeatBody, options?: CallOptions): Promise<HeartbeatResult> {
    return this.#reply(this.service.heartbeat({ utype, uuid: request.uuid, address: request.address, lease: request.lease }), options);
  }

  release(utype: string, uuid: string, options?: ReleaseOptions): Promise<ReleaseResult> {
    return this.#reply(this.service.release({ utype, uuid, lease: options?.lease }), options);
  }

  async #reply<T>(applied: Promise<T>, options: CallOptions | undefined): Promise<T> {
    const value = await applied;
    await new Promise<void>((resolve, reject) => {
      const signal = options?.abortSignal;
      const onAbort = (): void => {
        this.clock.clearTimeout(timer);
        reject(signal!.reason);
      };
      const timer = this.clock.setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, REPLY_DELAY_MS);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    return value;
  }
}

describe("stop() while an acquire is in flight, replies taking 400 ms (docs/protocol.md: it cannot leave a lease behind that nobody renews)", () => {
  it.each([0, 1, 150, 300, 399])("stopped %i ms after the acquire was sent: the service ends with no primary, released with the token", async (stopAfterMs) => {
    const clock = new FakeClock();
    const service = new LeaseService({ epochClock: COUNTER_ONLY,
      store: new MemoryLeaseStore(),
      clock: { now: () => Date.UTC(2026, 10, 20) + clock.now() },
      monotonic: clock,
      timing: { intervalMs: I, timeoutMs: T },
      tokens: new LeaseTokenSigner("a-test-secret-that-is-long-enough-for-hmac"),
      storeTimeoutMs: 2000,
    });
    const elector = new PrimaryElector({ utype: UTYPE, transport: new SlowRepliesTransport(service, clock), clock, newUuid: () => "u1", random: () => 0, announce: false });
    const events: string[] = [];
    elector.on("elected", () => void events.push("elected"));
    elector.start();
    // GetPrimary answers "none" after 400 ms; the acquire is applied at once, and answered 400 ms later.
    await clock.advance(REPLY_DELAY_MS);
    expect((await service.getPrimary(UTYPE)).primary).toMatchObject({ uuid: "u1", epoch: 1 });
    await clock.advance(stopAfterMs);
    let stopped = false;
    const stopping = elector.stop().then(() => (stopped = true));
    for (let waited = 0; !stopped && waited < 10 * T; waited += 50) await clock.advance(50);
    await stopping;
    await settle();

    const after = await service.getPrimary(UTYPE);
    // Released, not revoked: a standby may take it at once, and nobody is left behind it.
    expect(after.primary).toBeNull();
    expect(after.epoch).toBe(1);
    expect(events).toEqual([]);
    expect((await service.heartbeat({ utype: UTYPE, uuid: "standby" })).view.primary).toMatchObject({ uuid: "standby", epoch: 2 });
  });
});

import { describe, expect, it } from "vitest";
import { LeaseService } from "../../shared/lease/lease-service.js";
import { LeaseTokenSigner } from "../../shared/lease/lease-token.js";
import type { CallOptions, HeartbeatBody, HeartbeatResult, LeaseTransport, LeaseView, ReleaseOptions, ReleaseResult } from "../../shared/sdk/index.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { I, T } from "../helpers/sdk-fakes.js";
import { FakeClock } from "../helpers/fake-clock.js";

/**
 * A network that delivers every heartbeat several times at once (a retry after a timeout,
 * a proxy's duplicate), against the real lease service. The elector hears the answer to
 * the last copy, which is the one that lost the race to its own echoes.
 */
class DuplicatingTransport implements LeaseTransport {
  readonly outcomes: string[] = [];

  constructor(
    private readonly service: LeaseService,
    private readonly copies: number,
  ) {}

  getPrimary(utype: string, _options?: CallOptions): Promise<LeaseView> {
    return this.service.getPrimary(utype);
  }

  async heartbeat(utype: string, request: HeartbeatBody, _options?: CallOptions): Promise<HeartbeatResult> {
    const input = { utype, uuid: request.uuid, address: request.address, lease: request.lease };
    const results = await Promise.all(Array.from({ length: this.copies }, () => this.service.heartbeat(input)));
    this.outcomes.push(...results.map((result) => result.outcome));
    return results.at(-1)!;
  }

  release(utype: string, uuid: string, options?: ReleaseOptions): Promise<ReleaseResult> {
    return this.service.release({ utype, uuid, lease: options?.lease });
  }
}

describe("a lone elector whose heartbeats are duplicated (docs/protocol.md#the-rule-server-side: PUT is idempotent)", () => {
  it("is elected once and never demoted by its own echoes", async () => {
    const clock = new FakeClock();
    const service = new LeaseService({
      store: new MemoryLeaseStore(),
      clock: { now: () => Date.UTC(2026, 10, 20) + clock.now() },
      monotonic: clock,
      timing: { intervalMs: I, timeoutMs: T },
      tokens: new LeaseTokenSigner("a-test-secret-that-is-long-enough-for-hmac"),
      storeTimeoutMs: 2000,
    });
    const transport = new DuplicatingTransport(service, 4);
    let counter = 0;
    const elector = new PrimaryElector({ utype: "dup", transport, clock, newUuid: () => `u${++counter}` });
    const events: string[] = [];
    elector.on("elected", () => void events.push("elected"));
    elector.on("demoted", ({ reason }) => void events.push(`demoted:${reason}`));
    elector.start();
    for (let n = 0; n < 30; n += 1) {
      await clock.advance(I);
      expect(elector.isPrimary(), `after ${n + 1} × I`).toBe(true);
    }
    expect(events).toEqual(["elected"]);
    expect(elector.uuid).toBe("u1");
    // The echoes did race: each renewal's copies were answered, none as a demotion.
    expect(transport.outcomes.length).toBeGreaterThanOrEqual(4 * 30);
    expect(new Set(transport.outcomes)).toEqual(new Set(["accepted"]));
    await elector.stop();
  });
});

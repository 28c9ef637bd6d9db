import { describe, expect, it } from "vitest";
import { LeaseService } from "../../shared/lease/lease-service.js";
import { LeaseTokenSigner } from "../../shared/lease/lease-token.js";
import type { CallOptions, HeartbeatBody, HeartbeatResult, LeaseTransport, LeaseView, ReleaseOptions, ReleaseResult, WithdrawResult } from "../../shared/sdk/index.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { I, T } from "../helpers/sdk-fakes.js";
import { FakeClock } from "../helpers/fake-clock.js";

/**
 * Priorities and preemption in the elector (docs/protocol.md#priorities-and-preemption), on the
 * injected clock, against the real lease service over a memory store.
 */
const WALL = Date.UTC(2026, 10, 20);
const HOLD = 30_000;

/** The real service; one participant's view of it, which can be cut off (its calls then fail, as a crashed or partitioned process's would). */
class Link implements LeaseTransport {
  cut = false;
  readonly bodies: HeartbeatBody[] = [];
  constructor(readonly service: LeaseService) {}

  #check(): void {
    if (this.cut) throw new Error("connect ECONNREFUSED (cut off)");
  }

  async getPrimary(utype: string, _options?: CallOptions): Promise<LeaseView> {
    this.#check();
    return this.service.getPrimary(utype);
  }

  async heartbeat(utype: string, request: HeartbeatBody, _options?: CallOptions): Promise<HeartbeatResult> {
    this.#check();
    this.bodies.push(request);
    return this.service.heartbeat({ utype, ...request });
  }

  async release(utype: string, uuid: string, options?: ReleaseOptions): Promise<ReleaseResult> {
    this.#check();
    return this.service.release({ utype, uuid, lease: options?.lease });
  }

  async withdraw(utype: string, uuid: string, _options?: CallOptions): Promise<WithdrawResult> {
    this.#check();
    return this.service.withdrawStandby(utype, uuid);
  }
}

function setUp(): { clock: FakeClock; service: LeaseService; link: () => Link } {
  const clock = new FakeClock();
  const service = new LeaseService({
    store: new MemoryLeaseStore(),
    clock: { now: () => WALL + clock.now() },
    monotonic: clock,
    timing: { intervalMs: I, timeoutMs: T },
    tokens: new LeaseTokenSigner("a-test-secret-that-is-long-enough-for-hmac"),
    storeTimeoutMs: 2000,
  });
  return { clock, service, link: () => new Link(service) };
}

/** Who believes it is primary, checked every 50 ms: never two at once. */
class Watch {
  readonly log: string[] = [];
  readonly electors = new Map<string, PrimaryElector>();
  overlaps = 0;

  add(name: string, link: Link, clock: FakeClock, options: { priority?: number; preemptAfterMs?: number | "off" } = {}): PrimaryElector {
    let counter = 0;
    const made = new PrimaryElector({ utype: "svc", address: `${name}:1`, transport: link, clock, newUuid: () => `${name}${++counter}`, random: () => 0, ...options });
    made.on("elected", ({ uuid }) => void this.log.push(`${clock.now()} elected ${uuid}`));
    made.on("demoted", ({ reason, uuid }) => void this.log.push(`${clock.now()} demoted ${uuid} ${reason}`));
    this.electors.set(name, made);
    return made;
  }

  async run(clock: FakeClock, ms: number): Promise<void> {
    for (let left = ms; left > 0; left -= 50) {
      await clock.advance(Math.min(50, left));
      if ([...this.electors.values()].filter((elector) => elector.isPrimary()).length > 1) this.overlaps += 1;
    }
  }

  primary(): string | undefined {
    return [...this.electors].find(([, elector]) => elector.isPrimary())?.[0];
  }
}

describe("the elector with priorities (docs/protocol.md#priorities-and-preemption)", () => {
  it("a crashed holder's role goes to the highest standby, every time, within T + I", async () => {
    for (const order of [["high", "low"], ["low", "high"]]) {
      const { clock, link } = setUp();
      const watch = new Watch();
      const holderLink = link();
      watch.add("holder", holderLink, clock, { priority: 2 }).start();
      await watch.run(clock, 100);
      for (const name of order) {
        watch.add(name, link(), clock, { priority: name === "high" ? 1 : 0 }).start();
        await watch.run(clock, 300);
      }
      await watch.run(clock, 3 * T);
      expect(watch.primary()).toBe("holder");
      holderLink.cut = true;
      const cutAt = clock.now();
      let tookOver: number | undefined;
      for (let step = 0; step < 2 * T && tookOver === undefined; step += 50) {
        await watch.run(clock, 50);
        if (watch.primary() === "high") tookOver = clock.now();
      }
      expect(tookOver, watch.log.join("\n")).toBeDefined();
      // From the holder's last accepted renewal (at most I before the cut): T, then at most I.
      expect(tookOver! - cutAt).toBeLessThanOrEqual(T + I);
      await watch.run(clock, 2 * T);
      expect(watch.primary()).toBe("high");
      expect(watch.log.some((line) => / elected low/.test(line))).toBe(false);
      expect(watch.overlaps).toBe(0);
      for (const elector of watch.electors.values()) await elector.stop();
    }
  });

  it("a preferred candidate that returns takes the role over after its hold-down, by a planned handover: the holder's demoted says preempted, never two primaries", async () => {
    const { clock, service, link } = setUp();
    const watch = new Watch();
    watch.add("head-2", link(), clock).start();
    await watch.run(clock, 2 * I);
    const head1Link = link();
    watch.add("head-1", head1Link, clock, { priority: 1, preemptAfterMs: HOLD }).start();
    const returnedAt = clock.now();
    await watch.run(clock, HOLD - 2 * I);
    expect(watch.primary()).toBe("head-2");
    let heldAt: number | undefined;
    for (let step = 0; step < 10 * I && heldAt === undefined; step += 50) {
      await watch.run(clock, 50);
      if (watch.primary() === "head-1") heldAt = clock.now();
    }
    expect(heldAt, watch.log.join("\n")).toBeDefined();
    // The hold-down, plus at most 2·I (its first answer, the holder's next renewal, the fast poll).
    expect(heldAt! - returnedAt).toBeGreaterThanOrEqual(HOLD);
    expect(heldAt! - returnedAt).toBeLessThanOrEqual(HOLD + 2 * I);
    expect(watch.log.filter((line) => / demoted head-2\d /.test(line))).toEqual([expect.stringMatching(/ demoted head-21 preempted$/)]);
    // Its preemption was one announcement with `preempt`.
    expect(head1Link.bodies.filter((body) => body.preempt === true)).toHaveLength(1);
    expect(head1Link.bodies.every((body) => body.priority === 1)).toBe(true);
    expect(watch.overlaps).toBe(0);
    const history = await service.history("svc", 16);
    expect(history.terms.map((term) => term.endedBy)).toEqual([null, "preempted"]);
    await watch.run(clock, 3 * HOLD);
    expect(watch.primary()).toBe("head-1");
    for (const elector of watch.electors.values()) await elector.stop();
  });

  it("a candidate that leaves before its hold-down never gets the role by preemption (no flapping); a failed call starts the hold-down again", async () => {
    const { clock, link } = setUp();
    const watch = new Watch();
    watch.add("head-2", link(), clock).start();
    await watch.run(clock, 2 * I);
    // Up 20 s, down 10 s, five times: never 30 s in a row.
    for (let cycle = 0; cycle < 5; cycle++) {
      const flapper = watch.add(`head-1-${cycle}-`, link(), clock, { priority: 1, preemptAfterMs: HOLD }).start();
      await watch.run(clock, 20_000);
      await flapper.stop();
      watch.electors.delete(`head-1-${cycle}-`);
      await watch.run(clock, 10_000);
    }
    expect(watch.primary()).toBe("head-2");
    expect(watch.log.filter((line) => / demoted /.test(line))).toEqual([]);

    // Standing by 20 s, cut off for a poll's worth, then 20 s more: the hold-down starts again at the return.
    const head1Link = link();
    watch.add("head-1", head1Link, clock, { priority: 1, preemptAfterMs: HOLD }).start();
    await watch.run(clock, 20_000);
    head1Link.cut = true;
    await watch.run(clock, 2 * I);
    head1Link.cut = false;
    const backAt = clock.now();
    let heldAt: number | undefined;
    for (let step = 0; step < 2 * HOLD && heldAt === undefined; step += 50) {
      await watch.run(clock, 50);
      if (watch.primary() === "head-1") heldAt = clock.now();
    }
    expect(heldAt, watch.log.join("\n")).toBeDefined();
    // Not 30 s from its first standing (10 s after the return), but from the return.
    expect(heldAt! - backAt).toBeGreaterThanOrEqual(HOLD);
    expect(watch.overlaps).toBe(0);
    for (const elector of watch.electors.values()) await elector.stop();
  });

  it("after an outage for everyone, sticky recovery comes first: the holder takes its role back, and a preemption needs a fresh hold-down from the return", async () => {
    const { clock, link } = setUp();
    const watch = new Watch();
    const holderLink = link();
    const preferredLink = link();
    watch.add("head-2", holderLink, clock).start();
    await watch.run(clock, 2 * I);
    watch.add("head-1", preferredLink, clock, { priority: 1, preemptAfterMs: HOLD }).start();
    // 25 s of its 30 s hold-down, then the service is out for everyone for 10 s.
    await watch.run(clock, 25_000);
    holderLink.cut = true;
    preferredLink.cut = true;
    await watch.run(clock, 10_000);
    holderLink.cut = false;
    preferredLink.cut = false;
    const backAt = clock.now();
    await watch.run(clock, 3 * I);
    // The holder took its role back (a new uuid, its own new term), not the preferred standby.
    expect(watch.primary(), watch.log.join("\n")).toBe("head-2");
    let heldAt: number | undefined;
    for (let step = 0; step < 2 * HOLD && heldAt === undefined; step += 50) {
      await watch.run(clock, 50);
      if (watch.primary() === "head-1") heldAt = clock.now();
    }
    expect(heldAt, watch.log.join("\n")).toBeDefined();
    expect(heldAt! - backAt).toBeGreaterThanOrEqual(HOLD);
    expect(watch.log.filter((line) => / demoted head-2\d+ /.test(line)).at(-1)).toMatch(/ preempted$/);
    expect(watch.overlaps).toBe(0);
    for (const elector of watch.electors.values()) await elector.stop();
  });

  it("never preempts with the hold-down off, nor a holder of equal priority", async () => {
    const { clock, link } = setUp();
    const watch = new Watch();
    watch.add("holder", link(), clock, { priority: 1 }).start();
    await watch.run(clock, 2 * I);
    const offLink = link();
    watch.add("off", offLink, clock, { priority: 5, preemptAfterMs: "off" }).start();
    watch.add("equal", link(), clock, { priority: 1, preemptAfterMs: 0 }).start();
    await watch.run(clock, 4 * HOLD);
    expect(watch.primary()).toBe("holder");
    expect(offLink.bodies.some((body) => body.preempt === true)).toBe(false);
    for (const elector of watch.electors.values()) await elector.stop();
  });

  it("does not undo an operator's handover: the elector moved away stands by until the operator hands over again", async () => {
    const { clock, service, link } = setUp();
    const watch = new Watch();
    watch.add("head-1", link(), clock, { priority: 1, preemptAfterMs: HOLD }).start();
    await watch.run(clock, 2 * I);
    watch.add("head-2", link(), clock).start();
    await watch.run(clock, 2 * I);
    expect((await service.handover("svc", "head-2:1")).outcome).toBe("requested");
    await watch.run(clock, 2 * I);
    expect(watch.primary()).toBe("head-2");
    expect(watch.log).toContainEqual(expect.stringMatching(/ demoted head-11 handover$/));
    await watch.run(clock, 3 * HOLD);
    expect(watch.primary()).toBe("head-2");
    // The operator moves the role again (to any standby: head-1 is the only one): from then on head-1 may preempt again.
    await watch.run(clock, T);
    expect((await service.handover("svc", undefined)).outcome).toBe("requested");
    await watch.run(clock, 2 * I);
    expect(watch.primary()).toBe("head-1");
    expect(watch.overlaps).toBe(0);
    for (const elector of watch.electors.values()) await elector.stop();
  });

  it("sends exactly what it sent before priorities when none is given: no priority, no preempt", async () => {
    const { clock, link } = setUp();
    const watch = new Watch();
    const links = [link(), link()];
    watch.add("a", links[0]!, clock).start();
    await watch.run(clock, I);
    watch.add("b", links[1]!, clock, { preemptAfterMs: 0 }).start();
    await watch.run(clock, 4 * T);
    for (const body of links.flatMap((one) => one.bodies)) expect(Object.keys(body).sort()).not.toContain("priority");
    expect(links.flatMap((one) => one.bodies).some((body) => "preempt" in body)).toBe(false);
    for (const elector of watch.electors.values()) await elector.stop();
  });
});

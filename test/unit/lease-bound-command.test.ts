import { describe, expect, it } from "vitest";
import { ChildSupervisor } from "../../shared/cli/supervise/child-supervisor.js";
import { LeaseBoundCommand } from "../../shared/cli/supervise/lease-bound-command.js";
import type { HeartbeatResult } from "../../shared/sdk/index.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { FakeProcessGroups, type GroupBehaviour } from "../helpers/fake-process-groups.js";
import { I, T, leaseView, primaryView, ScriptedTransport } from "../helpers/sdk-fakes.js";
import { FakeClock, settle } from "../helpers/fake-clock.js";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";

const UTYPE = "scheduler";
/** The default for I = 1000, T = 5000: (T − 2·I)/2. */
const GRACE = 1500;

/**
 * The supervisor's timing rule (docs/protocol.md#the-clients-side) on a fake clock, with a real PrimaryElector on a
 * scripted transport: every call the elector makes is answered (or not) by the test.
 */
function setup(behaviour: GroupBehaviour = { onTerm: "ignore" }, rideThroughMs = 0) {
  const clock = new FakeClock();
  const transport = new ScriptedTransport(clock);
  let counter = 0;
  const elector = new PrimaryElector({ utype: UTYPE, transport, clock, newUuid: () => `uuid-${++counter}`, announce: false, random: () => 0, rideThroughMs });
  const groups = new FakeProcessGroups(clock);
  groups.behaviour = behaviour;
  const notes: string[] = [];
  const commandLease = new LeaseBoundCommand({
    lease: elector,
    command: (onExit) =>
      new ChildSupervisor({ utype: UTYPE, command: "work", args: [], graceMs: GRACE, clock, groups, onExit, printEvent: () => undefined, note: () => undefined }),
    clock,
    graceMs: GRACE,
    intervalMs: () => I,
    environment: (uuid, epoch) => ({ HA_UTYPE: UTYPE, HA_UUID: uuid, HA_EPOCH: String(epoch) }),
    note: (text) => void notes.push(text),
  });
  elector.on("elected", () => commandLease.update());
  elector.on("demoted", ({ reason }) => commandLease.demoted(reason));

  const accepted = (uuid: string, epoch: number): HeartbeatResult => ({
    outcome: "accepted",
    view: leaseView(UTYPE, primaryView({ uuid, epoch, expiresInMs: T })),
    lease: `token-${epoch}`,
  });
  /** start() → GetPrimary "none" → UpdateHeartBeat accepted at t0: the deadline is t0 + T − I. */
  const becomePrimary = async (epoch = 1): Promise<number> => {
    elector.start();
    await clock.advance(0);
    transport.take("getPrimary").respond(leaseView(UTYPE, null));
    await settle();
    const put = transport.take("heartbeat");
    const sentAt = put.sentAt;
    put.respond(accepted(put.request!.uuid, epoch));
    await settle();
    return sentAt;
  };
  /** Answers the renewal that is due now. */
  const renew = async (epoch = 1): Promise<void> => {
    const put = transport.take("heartbeat");
    put.respond(accepted(put.request!.uuid, epoch));
    await settle();
  };
  const signals = (since: number) => groups.signals.map((s) => [s.signal, s.at - since]);
  return { clock, transport, elector, groups, lease: commandLease, becomePrimary, renew, signals, notes };
}

describe("LeaseBoundCommand: the command runs only while the lease has more than the grace left", () => {
  it("starts on election with HA_UTYPE, HA_UUID, HA_EPOCH, and the watchdog's kill time follows every renewal", async () => {
    const { clock, groups, becomePrimary, renew } = setup();
    const t0 = await becomePrimary(4);
    expect(groups.spawned).toHaveLength(1);
    expect(groups.last.env).toEqual({ HA_UTYPE: UTYPE, HA_UUID: "uuid-1", HA_EPOCH: "4" });
    expect(groups.last.lifeline!.lastKillAt).toBe(t0 + T - I);
    for (let n = 1; n <= 3; n++) {
      await clock.advance(I);
      await renew(4);
      await clock.advance(0);
    }
    // Looked at every I: the kill time is the deadline of a recent renewal, never behind by more than I.
    expect(groups.last.lifeline!.lastKillAt).toBeGreaterThanOrEqual(t0 + 2 * I + T - I);
    expect(groups.signals).toEqual([]);
  });

  it("renewals go unanswered: SIGTERM when the time left reaches the grace, SIGKILL at the deadline, never later", async () => {
    const { clock, groups, becomePrimary, signals } = setup({ onTerm: "ignore" });
    const t0 = await becomePrimary();
    const deadline = t0 + T - I;
    // No renewal is ever answered (the service froze); the elector's calls time out.
    await clock.advance(deadline - GRACE - t0 - 1);
    expect(groups.signals).toEqual([]);
    await clock.advance(1);
    expect(signals(t0)).toEqual([["SIGTERM", T - I - GRACE]]);
    expect(groups.last.lifeline!.lastKillAt).toBe(deadline);
    await clock.advance(GRACE);
    expect(signals(t0)).toEqual([
      ["SIGTERM", T - I - GRACE],
      ["SIGKILL", T - I],
    ]);
  });

  it("renewals that recover after the early stop never start a second command under that epoch: the term is given up, and the next command runs under a new one", async () => {
    const { clock, transport, groups, elector, becomePrimary, renew, notes, signals } = setup({ onTerm: "ignore" });
    const demotions: string[] = [];
    elector.on("demoted", ({ reason, epoch }) => void demotions.push(`${reason}@${epoch}`));
    const t0 = await becomePrimary(2);
    // The renewal sent at t0 + I is answered only at t0 + 2600: by then the time left
    // (deadline t0 + 4000) had fallen to the grace at t0 + 2500 and the command was stopped.
    await clock.advance(I);
    const late = transport.take("heartbeat");
    await clock.advance(2600 - I);
    expect(signals(t0)).toEqual([["SIGTERM", T - I - GRACE]]);
    expect(elector.isPrimary()).toBe(true);
    late.respond({ outcome: "accepted", view: leaseView(UTYPE, primaryView({ uuid: late.request!.uuid, epoch: 2 })), lease: "token-2b" });
    await clock.advance(0);
    // The copies sent while it was unanswered are cut off by its answer.
    expect(transport.takeCutOffCopies()).toBeGreaterThan(0);
    // Renewed: the lease of epoch 2 holds again, and the renewals go on while the command,
    // which ignores SIGTERM, is stopped as planned (SIGKILL at the deadline it was given).
    await renew(2); // the overdue one, sent at once on the late answer: deadline t0 + 6600
    await clock.advance(I);
    await renew(2);
    expect(elector.isPrimary()).toBe(true);
    await clock.advance(400);
    await clock.advance(100);
    expect(signals(t0)).toEqual([
      ["SIGTERM", T - I - GRACE],
      ["SIGKILL", T - I],
    ]);
    // The group is gone and epoch 2 is still held, but a command already ran under it: the
    // term is released with its token instead of starting a second command with HA_EPOCH=2.
    expect(groups.spawned).toHaveLength(1);
    expect(elector.isPrimary()).toBe(false);
    expect(demotions).toEqual(["resigned@2"]);
    const release = transport.take("release");
    expect([release.uuid, release.options.lease]).toEqual(["uuid-1", "token-2"]);
    release.respond({ outcome: "released", view: leaseView(UTYPE, null) });
    expect(notes.join("\n")).toMatch(/command of epoch 2 was stopped, and its term still holds: giving the term up/);
    // A new incarnation competes and wins a new term: only that starts the command again.
    await clock.advance(0);
    transport.take("getPrimary").respond(leaseView(UTYPE, null));
    await settle();
    const acquire = transport.take("heartbeat");
    expect(acquire.request!.uuid).toBe("uuid-2");
    acquire.respond({ outcome: "accepted", view: leaseView(UTYPE, primaryView({ uuid: "uuid-2", epoch: 3 })), lease: "token-3" });
    await settle();
    expect(groups.spawned).toHaveLength(2);
    expect(groups.last.env).toMatchObject({ HA_UUID: "uuid-2", HA_EPOCH: "3" });
    await clock.advance(I);
    await renew(3);
    expect(groups.spawned).toHaveLength(2);
  });

  it("a command that ends at the early SIGTERM gives the term up at once, before the lease is settled", async () => {
    const { clock, transport, groups, elector, becomePrimary } = setup({ onTerm: "exit" });
    const demotions: string[] = [];
    elector.on("demoted", ({ reason, epoch }) => void demotions.push(`${reason}@${epoch}`));
    const t0 = await becomePrimary(2);
    await clock.advance(I);
    transport.take("heartbeat"); // never answered
    await clock.advance(T - I - GRACE - I);
    await clock.advance(0);
    expect(groups.spawned).toHaveLength(1);
    expect(clock.now() - t0).toBe(T - I - GRACE);
    expect(demotions).toEqual(["resigned@2"]);
    // The copies of the unanswered renewal end with the term.
    expect(transport.takeCutOffCopies()).toBeGreaterThan(0);
    const release = transport.take("release");
    expect([release.uuid, release.options.lease]).toEqual(["uuid-1", "token-2"]);
  });

  it("a command its watchdog killed is not followed by another under the same epoch either", async () => {
    const { clock, groups, elector, becomePrimary } = setup({ onTerm: "exit" });
    await becomePrimary(5);
    // The watchdog fired (run was starved past an older kill time): the group is gone, the term still held.
    groups.last.leaderExits(null, "SIGKILL");
    groups.last.lifeline!.firedAndExited();
    await clock.advance(1000);
    expect(groups.spawned).toHaveLength(1);
    expect(elector.isPrimary()).toBe(false);
  });

  it("rejected (another uuid holds the lease): SIGKILL at once, and competing goes on", async () => {
    const { clock, transport, groups, elector, becomePrimary, signals } = setup({ onTerm: "ignore" });
    await becomePrimary();
    await clock.advance(I);
    const put = transport.take("heartbeat");
    const at = clock.now();
    put.respond({ outcome: "held", view: leaseView(UTYPE, primaryView({ uuid: "other", epoch: 2 })) });
    await settle();
    expect(elector.isPrimary()).toBe(false);
    expect(signals(at)).toEqual([["SIGKILL", 0]]);
    await clock.advance(0);
    expect(groups.spawned).toHaveLength(1);
  });

  it("revoked (an operator's release): SIGTERM now and SIGKILL after the grace, inside the lease the last renewal bought", async () => {
    const { clock, transport, elector, becomePrimary, renew, signals, groups } = setup({ onTerm: "ignore" });
    const t0 = await becomePrimary(3);
    await clock.advance(I);
    await renew(3); // deadline t0 + I + T − I = t0 + T
    await clock.advance(I);
    const put = transport.take("heartbeat");
    const at = clock.now();
    put.respond({ outcome: "revoked", view: leaseView(UTYPE, primaryView({ uuid: put.request!.uuid, epoch: 3, revoked: true })) });
    await settle();
    expect(elector.isPrimary()).toBe(false);
    expect(signals(at)).toEqual([["SIGTERM", 0]]);
    await clock.advance(GRACE - 1);
    expect(signals(at)).toEqual([["SIGTERM", 0]]);
    await clock.advance(1);
    expect(signals(at)).toEqual([
      ["SIGTERM", 0],
      ["SIGKILL", GRACE],
    ]);
    expect(at + GRACE).toBeLessThanOrEqual(t0 + T);
    // The watchdog stays behind run's own SIGKILL, and never after the lease deadline.
    expect(groups.last.lifeline!.lastKillAt).toBe(t0 + T);
  });

  it("revoked with less than the grace left: SIGKILL at the deadline of the last accepted renewal", async () => {
    const { clock, transport, becomePrimary, signals } = setup({ onTerm: "ignore" });
    const t0 = await becomePrimary(3);
    // Renewals go unanswered until the one in flight at t0 + 3000, 1000 ms before the
    // deadline (t0 + 4000), is answered revoked.
    await clock.advance(3000);
    const late = transport.all.filter((call) => call.method === "heartbeat" && !call.settled).at(-1)!;
    late.respond({ outcome: "revoked", view: leaseView(UTYPE, primaryView({ uuid: late.request!.uuid, epoch: 3, revoked: true })) });
    await settle();
    const demoted = clock.now() - t0;
    expect(demoted).toBe(3000);
    await clock.advance(T);
    expect(signals(t0)).toEqual([
      ["SIGTERM", T - I - GRACE],
      ["SIGKILL", T - I],
    ]);
  });

  it("run stops: SIGTERM, SIGKILL after the grace, and the lease is released only once the group is gone", async () => {
    const { clock, transport, elector, becomePrimary, lease, signals } = setup({ onTerm: "ignore" });
    await becomePrimary();
    const at = clock.now();
    const wound = lease.shutDown();
    const stopped = elector.stop();
    let released = false;
    void stopped.then(() => (released = true));
    const releases = () => transport.all.filter((call) => call.method === "release");
    await clock.advance(GRACE - 1);
    expect(signals(at)).toEqual([["SIGTERM", 0]]);
    expect(releases()).toEqual([]); // no release while the command may still work
    await clock.advance(1);
    expect(signals(at)).toEqual([
      ["SIGTERM", 0],
      ["SIGKILL", GRACE],
    ]);
    await clock.advance(0);
    expect(releases()).toHaveLength(1);
    releases()[0]!.respond({ outcome: "released", view: leaseView(UTYPE, null) });
    await wound;
    await stopped;
    expect(released).toBe(true);
  });

  it("run stops while the early stop is under way: the SIGKILL stays at the deadline, not a grace later", async () => {
    const { clock, becomePrimary, lease, signals } = setup({ onTerm: "ignore" });
    const t0 = await becomePrimary();
    await clock.advance(3000); // renewals unanswered: SIGTERM went at T − I − grace = 2500
    void lease.shutDown();
    await clock.advance(T);
    expect(signals(t0)).toEqual([
      ["SIGTERM", T - I - GRACE],
      ["SIGKILL", T - I],
    ]);
  });

  it("the command exits on its own: ownExit resolves with its code, and it is not started again", async () => {
    const { clock, groups, becomePrimary, renew, lease } = setup({ onTerm: "exit" });
    await becomePrimary();
    groups.last.leaderExits(3, null);
    expect(await lease.ownExit).toBe(3);
    await clock.advance(I);
    await renew();
    await clock.advance(I);
    expect(groups.spawned).toHaveLength(1);
  });

  it("stepDown (its health check failed): SIGTERM now, SIGKILL after the grace, renewals go on meanwhile; once the group is gone the term is released with its token and nobody competes for the cool-down", async () => {
    const { clock, transport, elector, groups, becomePrimary, renew, lease, signals, notes } = setup({ onTerm: "ignore" });
    const demotions: string[] = [];
    elector.on("demoted", ({ reason, epoch }) => void demotions.push(`${reason}@${epoch}`));
    await becomePrimary(4);
    const at = clock.now();
    const term = groups.last.env["HA_UUID"] + "#4";
    expect(lease.stepDown(term, "its health check failed 3 times in a row", 5000)).toBe(true);
    expect(signals(at)).toEqual([["SIGTERM", 0]]);
    await clock.advance(I);
    await renew(4); // still held while the command winds down: no release yet
    expect(transport.all.filter((call) => call.method === "release")).toEqual([]);
    await clock.advance(GRACE - I);
    expect(signals(at)).toEqual([
      ["SIGTERM", 0],
      ["SIGKILL", GRACE],
    ]);
    await clock.advance(0);
    expect(demotions).toEqual(["resigned@4"]);
    const release = transport.take("release");
    expect([release.uuid, release.options.lease]).toEqual(["uuid-1", "token-4"]);
    release.respond({ outcome: "released", view: leaseView(UTYPE, null) });
    expect(notes.join("\n")).toMatch(/stepping down \(the lease is released with its token, so a standby takes over now\) and competing again in 5000 ms/);
    // The cool-down: it only watches (GetPrimary), and does not acquire a vacant role.
    let looks = 0;
    for (let step = 0; step < 4; step++) {
      await clock.advance(I);
      for (const poll of transport.all.filter((call) => call.method === "getPrimary" && !call.settled)) {
        poll.respond(leaseView(UTYPE, null));
        looks += 1;
      }
      await settle();
    }

    expect(looks).toBeGreaterThanOrEqual(3);
    expect(transport.all.filter((call) => call.method === "heartbeat" && call.request!.uuid !== "uuid-1")).toEqual([]);
    expect(groups.spawned).toHaveLength(1);
  });

  it("stepDown for a term that is no longer the one held, or once run is stopping, does nothing", async () => {
    const { clock, becomePrimary, lease, signals, groups } = setup({ onTerm: "ignore" });
    await becomePrimary(4);
    const at = clock.now();
    expect(lease.stepDown(`${groups.last.env["HA_UUID"]}#3`, "late", 5000)).toBe(false);
    expect(signals(at)).toEqual([]);
    void lease.shutDown();
    expect(lease.stepDown(`${groups.last.env["HA_UUID"]}#4`, "late", 5000)).toBe(false);
  });
});

describe("LeaseBoundCommand with ride-through (run --ride-through): the command keeps running through an outage", () => {
  const RIDE = 3 * T;
  const down = (): HaRequestError => new HaRequestError("503 StoreUnavailable", "StoreUnavailable", 503);
  /** Every call still open fails as an outage does, until the clock reaches `until`. */
  const outageUntil = async (ctx: ReturnType<typeof setup>, until: number): Promise<void> => {
    while (ctx.clock.now() < until) {
      for (const call of ctx.transport.all) if (!call.settled) call.fail(down());
      await ctx.clock.advance(Math.min(10, until - ctx.clock.now()));
    }
  };

  it("past the deadline it keeps running, and the watchdog's kill time moves to the ride-through's end; when the service answers, the same term and command go on", async () => {
    const ctx = setup({ onTerm: "ignore" }, RIDE);
    const t0 = await ctx.becomePrimary(5);
    await outageUntil(ctx, t0 + T - I + 2 * T);
    expect(ctx.elector.isPrimary()).toBe(true);
    expect(ctx.groups.signals).toEqual([]);
    expect(ctx.groups.last.lifeline!.lastKillAt).toBe(t0 + T - I + RIDE);
    // The service is back: the next renewal is accepted, with the same epoch.
    while (!ctx.transport.all.some((call) => !call.settled)) await ctx.clock.advance(1);
    const put = ctx.transport.all.find((call) => !call.settled)!;
    put.respond({ outcome: "accepted", view: leaseView(UTYPE, primaryView({ uuid: put.request!.uuid, epoch: 5 })), lease: "token-5b" });
    await settle();
    expect(ctx.elector.exclusiveTimeLeftMs()).toBeGreaterThan(0);
    await ctx.clock.advance(I);
    expect(ctx.groups.signals).toEqual([]);
    expect(ctx.groups.spawned).toHaveLength(1);
    // The kill time follows the renewed lease: its new deadline plus the ride-through.
    expect(ctx.groups.last.lifeline!.lastKillAt).toBeGreaterThan(t0 + T - I + RIDE);
  });

  it("a ride-through that gets no answer: SIGTERM when the time left to its end reaches the grace, SIGKILL at its end", async () => {
    const ctx = setup({ onTerm: "ignore" }, RIDE);
    const t0 = await ctx.becomePrimary();
    const end = t0 + T - I + RIDE;
    await outageUntil(ctx, end - GRACE - 1);
    expect(ctx.groups.signals).toEqual([]);
    await outageUntil(ctx, end);
    await ctx.clock.advance(0);
    expect(ctx.signals(t0)).toEqual([
      ["SIGTERM", T - I + RIDE - GRACE],
      ["SIGKILL", T - I + RIDE],
    ]);
  });

  it("a refusal during the ride (another holder took over while this one was cut off): SIGKILL at once", async () => {
    const ctx = setup({ onTerm: "ignore" }, RIDE);
    const t0 = await ctx.becomePrimary(5);
    await outageUntil(ctx, t0 + T - I + T);
    while (!ctx.transport.all.some((call) => !call.settled)) await ctx.clock.advance(1);
    const put = ctx.transport.all.find((call) => !call.settled)!;
    const at = ctx.clock.now();
    put.respond({ outcome: "revoked", view: leaseView(UTYPE, primaryView({ uuid: "standby", epoch: 6 })) });
    await settle();
    expect(ctx.elector.isPrimary()).toBe(false);
    expect(ctx.signals(at)).toEqual([["SIGKILL", 0]]);
  });

  it("a revoke is never ridden through: answered revoked during the ride, SIGKILL at once (the lease's own deadline is past)", async () => {
    const ctx = setup({ onTerm: "ignore" }, RIDE);
    const t0 = await ctx.becomePrimary(5);
    await outageUntil(ctx, t0 + T - I + T);
    while (!ctx.transport.all.some((call) => !call.settled)) await ctx.clock.advance(1);
    const put = ctx.transport.all.find((call) => !call.settled)!;
    const at = ctx.clock.now();
    put.respond({ outcome: "revoked", view: leaseView(UTYPE, primaryView({ uuid: put.request!.uuid, epoch: 5, revoked: true })) });
    await settle();
    expect(ctx.elector.isPrimary()).toBe(false);
    await ctx.clock.advance(0);
    expect(ctx.signals(at)).toEqual([["SIGKILL", 0]]);
  });
});

import { describe, expect, it } from "vitest";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";
import { MembersWatcher, type MemberEvent } from "../../shared/sdk/membership/members-watcher.js";
import { MemberSession } from "../../shared/sdk/membership/member-session.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import type { ElectorClock } from "../../shared/sdk/loop/elector-clock.js";
import type { LeaseTransport } from "../../shared/sdk/transport/lease-transport.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { ParticipantServiceTransport, type SentRequest } from "../helpers/participant-fakes.js";
import { I, T } from "../helpers/sdk-fakes.js";

const ROLES = ["scheduler", "broker", "session"] as const;
const GROUP = "hpc";

/**
 * An HPC head node: one elector per role on one shared transport, the first with
 * `membership` (a member of the group, watching it): 5 parts. Started at odd offsets, so
 * that only the cadence puts their calls together.
 */
async function headNode(name: string, transport: ParticipantServiceTransport, clock: FakeClock, electorClock: ElectorClock = clock): Promise<PrimaryElector[]> {
  let counter = 0;
  const electors = ROLES.map(
    (utype, index) =>
      new PrimaryElector({
        utype,
        transport,
        clock: electorClock,
        address: `${name}:5800`,
        newUuid: () => `${name}-${utype}-${++counter}`,
        random: () => 0.5,
        ...(index === ROLES.length - 1 ? { membership: { member: name, group: GROUP } } : {}),
      }),
  );
  for (const elector of electors) {
    elector.start();
    await clock.advance(137);
  }
  return electors;
}

/** Three lone electors, one transport each (each a participant of one part: the single routes). */
async function otherLeaders(clock: FakeClock, services: ParticipantServiceTransport["services"]): Promise<PrimaryElector[]> {
  const electors = ROLES.map((utype) => new PrimaryElector({ utype, transport: new ParticipantServiceTransport(clock, services), clock, address: "other:5800", random: () => 0.5 }));
  for (const elector of electors) elector.start();
  await clock.advance(I);
  return electors;
}

/** Requests per I over `intervals` intervals from now. */
async function countOver(transport: ParticipantServiceTransport, clock: FakeClock, intervals: number): Promise<{ requests: number; routes: Set<string>; parts: number[] }> {
  const from = clock.now();
  await clock.advance(intervals * I);
  const sent = transport.between(from, clock.now());
  const parts = sent.map((request) => Object.values(request.body ?? {}).reduce((sum: number, list) => sum + (list as unknown[]).length, 0));
  return { requests: sent.length, routes: new Set(sent.map((request) => request.route)), parts };
}

describe("one request per participant per I (docs/sdk.md#one-request-per-participant)", () => {
  it("a head node leading all three roles, a member of its group and watching it, sends exactly one request per I", async () => {
    const clock = new FakeClock(0);
    const transport = new ParticipantServiceTransport(clock);
    const electors = await headNode("head-1", transport, clock);
    await clock.advance(5 * I);
    expect(electors.every((elector) => elector.isPrimary())).toBe(true);
    const counted = await countOver(transport, clock, 20);
    expect(counted.requests).toBe(20);
    expect(counted.routes).toEqual(new Set(["ParticipantHeartbeat"]));
    // Each carries the three renewals, the member heartbeat and the group poll.
    expect(counted.parts).toEqual(Array(20).fill(5));
    expect(electors.every((elector) => elector.isPrimary() && elector.stats().failures === 0 && elector.stats().demotions === 0)).toBe(true);
    expect(electors[2]!.membership!.session.isJoined()).toBe(true);
    await Promise.all(electors.map((elector) => elector.stop()));
  });

  it("a head node whose timers fire a few ms early (Node's do, on performance.now()) still sends exactly one request per I, every part once in each", async () => {
    const clock = new FakeClock(0);
    const transport = new ParticipantServiceTransport(clock);
    // Each timer fires 3 ms before its delay has passed, as Node's may on a busy event loop.
    const early: ElectorClock = {
      now: () => clock.now(),
      setTimeout: (callback, delayMs) => clock.setTimeout(callback, delayMs > 3 ? delayMs - 3 : delayMs),
      clearTimeout: (handle) => clock.clearTimeout(handle),
    };
    const electors = await headNode("head-1", transport, clock, early);
    await clock.advance(5 * I);
    expect(electors.every((elector) => elector.isPrimary())).toBe(true);
    const counted = await countOver(transport, clock, 20);
    expect(counted.requests).toBe(20);
    expect(counted.parts).toEqual(Array(20).fill(5));
    await Promise.all(electors.map((elector) => elector.stop()));
  });

  it("a head node standing by for all three roles (polls and announcements) sends exactly one request per I", async () => {
    const clock = new FakeClock(0);
    const transport = new ParticipantServiceTransport(clock);
    const leaders = await otherLeaders(clock, transport.services);
    const electors = await headNode("head-2", transport, clock);
    await clock.advance(5 * I);
    const from = clock.now();
    const counted = await countOver(transport, clock, 22);
    expect(counted.requests).toBe(22);
    expect(counted.routes).toEqual(new Set(["ParticipantHeartbeat"]));
    // Every request carries the member heartbeat and the group poll; the role parts are the
    // standbys' polls and announcements, each on its own cadence of 1.1·I (random 0.5), not
    // one per I: the store operations of a participant are what its parts cost alone.
    const batched = transport.between(from, clock.now());
    expect(batched.every((request) => request.body?.members?.length === 1 && request.body.groups?.length === 1)).toBe(true);
    const roleParts = batched.reduce((sum, request) => sum + (request.body?.roles?.length ?? 0) + (request.body?.reads?.length ?? 0), 0);
    expect(electors.some((elector) => elector.isPrimary())).toBe(false);
    expect(leaders.every((leader) => leader.isPrimary())).toBe(true);
    await Promise.all(electors.map((elector) => elector.stop()));
    // The same three standbys alone, one transport each, over the same 22 I.
    const alone = ROLES.map((utype) => {
      const own = new ParticipantServiceTransport(clock, transport.services);
      return { own, elector: new PrimaryElector({ utype, transport: own, clock, address: "head-3:5800", random: () => 0.5 }).start() };
    });
    await clock.advance(5 * I);
    const aloneFrom = clock.now();
    await clock.advance(22 * I);
    const aloneCalls = alone.reduce((sum, { own }) => sum + own.between(aloneFrom, clock.now()).length, 0);
    expect(aloneCalls).toBe(60); // 20 each: one call every 1.1·I
    expect(Math.abs(roleParts - aloneCalls)).toBeLessThanOrEqual(ROLES.length);
    await Promise.all([...alone.map(({ elector }) => elector), ...leaders].map((elector) => elector.stop()));
  });

  it("a watcher in a participant polls as often as alone (about every I plus the round trip), not every I", async () => {
    const clock = new FakeClock(0);
    const transport = new ParticipantServiceTransport(clock);
    transport.roundTripMs = 100;
    const elector = new PrimaryElector({ utype: "scheduler", transport, clock, address: "head-1:5800", random: () => 0.5 }).start();
    const session = new MemberSession({ group: GROUP, member: "head-1", transport, clock }).start();
    const watcher = new MembersWatcher({ group: GROUP, transport, clock, random: () => 0.5 }).start();
    await clock.advance(5 * I);
    const from = clock.now();
    await clock.advance(44 * I);
    const batched = transport.between(from, clock.now());
    const polls = batched.filter((request) => request.body?.groups !== undefined).length;
    expect(batched.every((request) => request.route === "ParticipantHeartbeat")).toBe(true);
    // Answers come 100 ms after each call, goodbyes and releases too.
    const stopped = Promise.all([elector.stop(), session.stop(), watcher.stop()]);
    await clock.advance(I);
    await stopped;
    // Alone, each poll is planned I after the last one's answer: 44 I / 1.1 I = 40 polls.
    const own = new ParticipantServiceTransport(clock, transport.services);
    own.roundTripMs = 100;
    const alone = new MembersWatcher({ group: GROUP, transport: own, clock, random: () => 0.5 }).start();
    await clock.advance(5 * I);
    const aloneFrom = clock.now();
    await clock.advance(44 * I);
    const alonePolls = own.between(aloneFrom, clock.now()).length;
    const aloneStopped = alone.stop();
    await clock.advance(I);
    await aloneStopped;
    expect(alonePolls).toBe(40);
    expect(Math.abs(polls - alonePolls)).toBeLessThanOrEqual(1);
  });

  it("a lone elector on a transport that can batch sends its own route's calls exactly as on one that cannot, leading or standing by", async () => {
    const run = async (batching: boolean): Promise<string[]> => {
      const clock = new FakeClock(0);
      const lone = (name: string, recorded: ParticipantServiceTransport): PrimaryElector => {
        // The same calls, without participantHeartbeat: a plain LeaseTransport.
        const plain: LeaseTransport = { getPrimary: (u, o) => recorded.getPrimary(u, o), heartbeat: (u, b, o) => recorded.heartbeat(u, b, o), release: (u, id, o) => recorded.release(u, id, o) };
        let counter = 0;
        return new PrimaryElector({ utype: "svc", transport: batching ? recorded : plain, clock, random: () => 0.37, newUuid: () => `${name}${++counter}` });
      };
      const leading = new ParticipantServiceTransport(clock);
      const standing = new ParticipantServiceTransport(clock, leading.services);
      const leader = lone("a", leading).start();
      await clock.advance(333);
      const standby = lone("b", standing).start();
      await clock.advance(20 * I + 13);
      await standby.stop();
      await leader.stop();
      return [...leading.sent.map((request) => `a ${request.at} ${request.route}`), ...standing.sent.map((request) => `b ${request.at} ${request.route}`)];
    };
    const batching = await run(true);
    expect(batching).toEqual(await run(false));
    expect(batching.filter((line) => line.startsWith("a") && line.endsWith("UpdateHeartBeat")).length).toBeGreaterThanOrEqual(20);
    // The standby polls (GetPrimary), and announces itself every T/2 (UpdateHeartBeat) instead.
    expect(batching.filter((line) => line.startsWith("b") && line.endsWith("GetPrimary")).length).toBeGreaterThanOrEqual(10);
    expect(batching.some((line) => line.endsWith("ParticipantHeartbeat"))).toBe(false);
  });

  it("a part answered 503 fails only its own call: one role's elector counts a failure, the others and the member do not", async () => {
    const clock = new FakeClock(0);
    const transport = new ParticipantServiceTransport(clock);
    const electors = await headNode("head-1", transport, clock);
    await clock.advance(3 * I);
    const errors: string[] = [];
    for (const elector of electors) elector.on("error", (error) => void errors.push(error.message));
    electors[2]!.membership!.session.on("error", (error) => void errors.push(error.message));
    let failed = 0;
    transport.failPart = (kind, name) => (kind === "roles" && name === "broker" && failed++ === 0 ? new HaRequestError("UpdateHeartBeat(broker): 503 StoreUnavailable: the store did not answer", "StoreUnavailable", 503) : undefined);
    await clock.advance(3 * I);
    expect(failed).toBeGreaterThan(0);
    expect(electors.map((elector) => elector.stats().failures)).toEqual([0, 1, 0]);
    expect(errors).toEqual([expect.stringMatching(/^UpdateHeartBeat\(broker\): 503/)]);
    expect(electors.every((elector) => elector.isPrimary())).toBe(true);
    await Promise.all(electors.map((elector) => elector.stop()));
  });

  it("a batch lost as a whole fails every part, each error naming its own call; the next I is one request again", async () => {
    const clock = new FakeClock(0);
    const transport = new ParticipantServiceTransport(clock);
    const electors = await headNode("head-1", transport, clock);
    await clock.advance(3 * I);
    const errors: string[] = [];
    const membership = electors[2]!.membership!;
    const collect = (error: Error): void => void errors.push(error.message);
    for (const elector of electors) elector.on("error", collect);
    membership.session.on("error", collect);
    membership.watcher.on("error", collect);
    let lost = 0;
    transport.failBatch = () => (lost++ === 0 ? new HaRequestError("no answer within 2000 ms", "Timeout", undefined) : undefined);
    await clock.advance(I);
    expect(electors.map((elector) => elector.stats().failures)).toEqual([1, 1, 1]);
    expect(errors.sort()).toEqual([
      "ListMembers(hpc): no answer within 2000 ms",
      "MemberHeartbeat(hpc/head-1): no answer within 2000 ms",
      "UpdateHeartBeat(broker): no answer within 2000 ms",
      "UpdateHeartBeat(scheduler): no answer within 2000 ms",
      "UpdateHeartBeat(session): no answer within 2000 ms",
    ]);
    expect(errors.length).toBe(5);
    expect(electors.every((elector) => elector.isPrimary())).toBe(true);
    const counted = await countOver(transport, clock, 10);
    expect(counted.requests).toBe(10);
    await Promise.all(electors.map((elector) => elector.stop()));
  });

  it("every batch delivered twice is harmless: no demotion, no lost session, still one request per I", async () => {
    const clock = new FakeClock(0);
    const transport = new ParticipantServiceTransport(clock);
    transport.duplicate = true;
    const electors = await headNode("head-1", transport, clock);
    await clock.advance(3 * I);
    const counted = await countOver(transport, clock, 20);
    expect(counted.requests).toBe(20);
    expect(electors.map((elector) => elector.stats())).toEqual(electors.map(() => expect.objectContaining({ elections: 1, demotions: 0, failures: 0 })));
    expect(electors[2]!.membership!.session.isJoined()).toBe(true);
    await Promise.all(electors.map((elector) => elector.stop()));
  });

  it("the group poll sends the last listing's cursor: unchanged hands the watcher that listing, a change a new one", async () => {
    const clock = new FakeClock(0);
    const transport = new ParticipantServiceTransport(clock);
    const electors = await headNode("head-1", transport, clock);
    const joined: MemberEvent[] = [];
    electors[2]!.membership!.watcher.on("memberJoined", (event) => void joined.push(event));
    await clock.advance(3 * I);
    const from = clock.now();
    await clock.advance(3 * I);
    const polls = transport.between(from, clock.now()).map((request) => request.body?.groups?.[0]);
    expect(polls).toEqual(Array(3).fill({ group: GROUP, since: expect.any(String) }));
    expect(electors[2]!.membership!.members().map((member) => member.member)).toEqual(["head-1"]);
    const other = new MemberSession({ group: GROUP, member: "node-7", transport: new ParticipantServiceTransport(clock, transport.services), clock }).start();
    await clock.advance(2 * I);
    expect(joined.map((event) => event.member)).toContain("node-7");
    expect(electors[2]!.membership!.members().map((member) => member.member).sort()).toEqual(["head-1", "node-7"]);
    await other.stop();
    await Promise.all(electors.map((elector) => elector.stop()));
  });

  it("a head node whose terms ended in an outage looks for each role off the grid, at most 1.2·I apart, and takes every role back (docs/protocol.md#sticky-recovery)", async () => {
    const clock = new FakeClock(0);
    const transport = new ParticipantServiceTransport(clock);
    const electors = await headNode("head-1", transport, clock);
    await clock.advance(5 * I);
    expect(electors.every((elector) => elector.isPrimary())).toBe(true);
    const epochs = electors.map((elector) => elector.epoch!);
    // The service is out for everyone: every batch is answered 503, for longer than T. Each
    // role's new incarnation then looks (a read, or its announcement every T/2) every I or so.
    transport.failBatch = () => new HaRequestError("ParticipantHeartbeat: 503 StoreUnavailable", "StoreUnavailable", 503);
    const demotedAt: number[] = [];
    for (const elector of electors) elector.on("demoted", () => void demotedAt.push(clock.now()));
    await clock.advance(3 * T);
    expect(demotedAt).toHaveLength(ROLES.length);
    for (const utype of ROLES) {
      const looks = transport
        .between(Math.max(...demotedAt), clock.now())
        .filter((request) => [...(request.body?.reads ?? []), ...(request.body?.roles ?? [])].some((part) => part.utype === utype))
        .map((request) => request.at);
      expect(looks.length, utype).toBeGreaterThanOrEqual(8);
      const gaps = looks.slice(1).map((at, index) => at - looks[index]!);
      expect(Math.max(...gaps), `${utype}: ${gaps.join(", ")}`).toBeLessThanOrEqual(1.2 * I);
    }
    transport.failBatch = undefined;
    await clock.advance(2 * I);
    expect(electors.map((elector) => elector.isPrimary())).toEqual([true, true, true]);
    // Each role taken back under a new term: a higher epoch (the service's clock lifts it).
    electors.forEach((elector, index) => expect(elector.epoch).toBeGreaterThan(epochs[index]!));
    await Promise.all(electors.map((elector) => elector.stop()));
  });

  it("a standby participant named in a handover polls fast, off the grid, and takes over within about I/10 of the release", async () => {
    const clock = new FakeClock(0);
    const transport = new ParticipantServiceTransport(clock);
    const leader = new PrimaryElector({ utype: "scheduler", transport: new ParticipantServiceTransport(clock, transport.services), clock, address: "old:1", random: () => 0.5 }).start();
    // The standbys' grid is off the leader's renewals: the release falls late in their I.
    await clock.advance(I + 150);
    const standbys = ["scheduler", "broker"].map((utype) => new PrimaryElector({ utype, transport, clock, address: "new:1", random: () => 0.5 }).start());
    await clock.advance(3 * I + 37);
    const times: Record<string, number> = {};
    leader.on("demoted", () => void (times["demoted"] = clock.now()));
    standbys[0]!.on("elected", () => void (times["elected"] = clock.now()));
    await transport.services.service.handover("scheduler", undefined);
    await clock.advance(3 * I);
    expect(times["demoted"]).toBeDefined();
    // Fast polls are max(50 ms, I/10) apart: never held back to the participant's grid.
    expect(times["elected"]! - times["demoted"]!).toBeLessThanOrEqual(I / 10 + 10);
    await Promise.all([leader, ...standbys].map((elector) => elector.stop()));
  });

  it("three roles whose renewals travel together each survive what a lone elector survives: three lost tries in a row, each role's copies after F, 2F and 4F (docs/protocol.md#timing-rules)", async () => {
    const clock = new FakeClock(0);
    const transport = new ParticipantServiceTransport(clock);
    const electors = await headNode("head-1", transport, clock);
    await clock.advance(5 * I);
    expect(electors.every((elector) => elector.isPrimary())).toBe(true);
    const epochs = electors.map((elector) => elector.epoch);
    const floor = (T - 2 * I) / 8;
    // From the next renewal on, every try of every role is lost for 3F: the request carrying
    // all three renewals, and the copies after F and after 3F (each role's own, 2F after its
    // first copy). A lone elector's fourth copy goes at 7F; so must each role's.
    const renewed = (request: SentRequest): string[] =>
      request.heartbeat?.lease !== undefined ? [request.heartbeat.utype] : (request.body?.roles ?? []).filter((part) => part.lease !== undefined).map((part) => part.utype);
    let lossFrom: number | undefined;
    transport.lose = (request) => {
      if (renewed(request).length === 0) return false;
      lossFrom ??= request.at;
      return request.at < lossFrom + 3 * floor + 1;
    };
    const from = clock.now();
    await clock.advance(T);
    const tries = (utype: string): number[] => transport.between(from, clock.now()).filter((request) => renewed(request).includes(utype)).map((request) => request.at - lossFrom!);
    expect(ROLES.map((utype) => tries(utype).slice(0, 4))).toEqual(ROLES.map(() => [0, floor, 3 * floor, 7 * floor]));
    expect(electors.map((elector) => elector.stats().demotions)).toEqual([0, 0, 0]);
    expect(electors.map((elector) => elector.epoch)).toEqual(epochs);
    expect(electors.every((elector) => elector.isPrimary())).toBe(true);
    await Promise.all(electors.map((elector) => elector.stop()));
  });
});

import { beforeEach, describe, expect, it } from "vitest";
import type { MemberView } from "../../shared/contract/members.js";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";
import { MembersWatcher, type MemberEventName } from "../../shared/sdk/membership/members-watcher.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { MI, MT, memberList, memberView, ScriptedMembersTransport } from "../helpers/member-fakes.js";

const GROUP = "cluster";
const EVENTS: MemberEventName[] = ["memberJoined", "memberActive", "memberUnreachable", "memberLeaving", "memberRemoved"];

describe("MembersWatcher on a fake clock", () => {
  let clock: FakeClock;
  let transport: ScriptedMembersTransport;
  let watcher: MembersWatcher;
  let seen: string[];
  let random: number;

  beforeEach(() => {
    clock = new FakeClock(0);
    transport = new ScriptedMembersTransport(clock);
    random = 0.5;
    watcher = new MembersWatcher({ group: GROUP, transport, clock, random: () => random, wallClock: () => Date.UTC(2026, 10, 22), retryDelayInMs: MI });
    seen = [];
    for (const event of EVENTS) watcher.on(event, ({ member, session, state }) => void seen.push(`${event} ${member} ${session} ${state}`));
  });

  const node = (member: string, session: string, state: MemberView["state"], overrides: Partial<MemberView> = {}): MemberView => memberView({ member, session, state, ...overrides });
  /** Answers the next poll with these members and lets the events out. */
  async function poll(...members: MemberView[]): Promise<string[]> {
    const before = seen.length;
    transport.take("listMembers").respond(memberList(GROUP, members));
    await clock.advance(0);
    return seen.slice(before);
  }
  async function nextPoll(...members: MemberView[]): Promise<string[]> {
    await clock.advance(MI * 1.1);
    return poll(...members);
  }

  it("makes one list call per poll, about every I, jittered within ±10 %", async () => {
    watcher.start();
    await clock.advance(0);
    const first = transport.take("listMembers");
    expect(first.options.timeoutInMs).toBe(MI);
    first.respond(memberList(GROUP, []));
    random = 0;
    await clock.advance(0.9 * MI - 1);
    transport.expectIdle();
    await clock.advance(1);
    const second = transport.take("listMembers");
    // Once the service's timing is known, a slow answer is waited for up to T, not cut at I.
    expect(second.options.timeoutInMs).toBe(memberList(GROUP, []).timeoutMs);
    expect(second.options.timeoutInMs).toBeGreaterThan(MI);
    second.respond(memberList(GROUP, []));
    random = 0.999;
    await clock.advance(1.0998 * MI - 1);
    transport.expectIdle();
    await clock.advance(1);
    expect(transport.take("listMembers").sentAt).toBeCloseTo(0.9 * MI + 1.0998 * MI, 6);
  });

  it("tells every state of the member state machine once, in order, with member, session, address, state and time", async () => {
    const payloads: unknown[] = [];
    watcher.on("memberJoined", (event) => void payloads.push(event));
    watcher.start();
    await clock.advance(0);
    expect(await poll(node("a", "a1", "joining", { address: "h:1" }))).toEqual(["memberJoined a a1 joining"]);
    expect(payloads).toEqual([{ group: GROUP, member: "a", session: "a1", address: "h:1", state: "joining", at: "2026-11-22T00:00:00.000Z" }]);
    expect(await nextPoll(node("a", "a1", "active"))).toEqual(["memberActive a a1 active"]);
    expect(await nextPoll(node("a", "a1", "active"))).toEqual([]);
    expect(await nextPoll(node("a", "a1", "unreachable"))).toEqual(["memberUnreachable a a1 unreachable"]);
    expect(await nextPoll(node("a", "a1", "active", { heartbeats: 3 }))).toEqual(["memberActive a a1 active"]);
    expect(await nextPoll(node("a", "a1", "unreachable", { heartbeats: 3 }))).toEqual(["memberUnreachable a a1 unreachable"]);
    expect(await nextPoll(node("a", "a1", "leaving"))).toEqual(["memberLeaving a a1 leaving"]);
    expect(await nextPoll()).toEqual(["memberRemoved a a1 removed"]);
    expect(await nextPoll()).toEqual([]);
  });

  it("a member already in the group when it starts: joined, then its current state", async () => {
    watcher.start();
    await clock.advance(0);
    expect(await poll(node("a", "a1", "active"), node("b", "b1", "unreachable"))).toEqual([
      "memberJoined a a1 active",
      "memberActive a a1 active",
      "memberJoined b b1 unreachable",
      "memberUnreachable b b1 unreachable",
    ]);
  });

  it("a goodbye is leaving at once; leaving by age that no poll saw unreachable passes through unreachable", async () => {
    watcher.start();
    await clock.advance(0);
    await poll(node("a", "a1", "active"), node("b", "b1", "active"));
    expect(await nextPoll(node("a", "a1", "leaving", { leftAt: new Date(1).toISOString() }), node("b", "b1", "leaving"))).toEqual([
      "memberLeaving a a1 leaving",
      "memberUnreachable b b1 unreachable",
      "memberLeaving b b1 leaving",
    ]);
  });

  it("a step back of the service's ages (it noticed a gap of its own) is no state change: only a heartbeat brings a member back, nothing follows leaving", async () => {
    watcher.start();
    await clock.advance(0);
    await poll(node("a", "a1", "active", { heartbeats: 9 }), node("b", "b1", "active", { heartbeats: 5 }));
    expect(await nextPoll(node("a", "a1", "unreachable", { heartbeats: 9 }), node("b", "b1", "leaving", { heartbeats: 5 }))).toEqual([
      "memberUnreachable a a1 unreachable",
      "memberUnreachable b b1 unreachable",
      "memberLeaving b b1 leaving",
    ]);
    // Younger again, with no new heartbeat: told nothing.
    expect(await nextPoll(node("a", "a1", "active", { heartbeats: 9 }), node("b", "b1", "unreachable", { heartbeats: 5 }))).toEqual([]);
    // A real heartbeat: back to active.
    expect(await nextPoll(node("a", "a1", "active", { heartbeats: 10 }), node("b", "b1", "active", { heartbeats: 6 }))).toEqual(["memberActive a a1 active"]);
  });

  it("a restart is a new session: the old one's failure and removal are told before the new one joins", async () => {
    watcher.start();
    await clock.advance(0);
    await poll(node("a", "a1", "active"), node("b", "b1", "active"));
    const at = new Date(5).toISOString();
    expect(
      await nextPoll(
        node("a", "a2", "joining", { previous: { session: "a1", state: "unreachable", at } }),
        node("b", "b2", "joining", { previous: { session: "b1", state: "leaving", at } }),
      ),
    ).toEqual([
      "memberUnreachable a a1 unreachable",
      "memberRemoved a a1 removed",
      "memberJoined a a2 joining",
      "memberUnreachable b b1 unreachable",
      "memberLeaving b b1 leaving",
      "memberRemoved b b1 removed",
      "memberJoined b b2 joining",
    ]);
  });

  it("a pause of the watcher's own process produces no burst of false unreachable events", async () => {
    watcher.start();
    await clock.advance(0);
    await poll(node("a", "a1", "active"), node("b", "b1", "active"));
    clock.pause(20 * MT);
    expect(await nextPoll(node("a", "a1", "active"), node("b", "b1", "active"))).toEqual([]);
  });

  it("a failed poll is an error event; the next poll goes on from what was known", async () => {
    const errors: Error[] = [];
    watcher.on("error", (error) => void errors.push(error));
    watcher.start();
    await clock.advance(0);
    await poll(node("a", "a1", "active"));
    await clock.advance(MI * 1.1);
    transport.take("listMembers").fail(new HaRequestError("503 StoreUnavailable", "StoreUnavailable", 503));
    expect(await nextPoll(node("a", "a1", "unreachable"))).toEqual(["memberUnreachable a a1 unreachable"]);
    expect(errors.map((error) => error.message)).toEqual(["503 StoreUnavailable"]);
    expect(watcher.members()).toEqual([node("a", "a1", "unreachable")]);
  });

  it("stop() ends polling and aborts a poll in flight", async () => {
    watcher.start();
    await clock.advance(0);
    const inFlight = transport.take("listMembers");
    await watcher.stop();
    await clock.advance(10 * MI);
    transport.expectIdle();
    inFlight.respond(memberList(GROUP, [node("a", "a1", "active")]));
    await clock.advance(0);
    expect(seen).toEqual([]);
  });

  it("validates its options where they enter, naming the option: the same rules as the elector's and the session's", () => {
    expect(() => new MembersWatcher(null as never)).toThrow('Expected the MembersWatcher options to be an object such as { group: "cluster", endpoint: "http://127.0.0.1:7071/api" }.');
    expect(() => new MembersWatcher({ group: "a b", transport })).toThrow(/`group`/);
    expect(() => new MembersWatcher({ group: GROUP })).toThrow("Expected `endpoint` (the service URL, e.g. http://127.0.0.1:7071/api) or `transport` to be set.");
    expect(() => new MembersWatcher({ group: GROUP, transport: {} as never })).toThrow(/MembersTransport/);
    expect(() => new MembersWatcher({ group: GROUP, transport, retryDelayInMs: 0 })).toThrow(/`retryDelayInMs`/);
    expect(() => new MembersWatcher({ group: GROUP, transport, abortSignal: {} as never })).toThrow(/`abortSignal`/);
    // A clock without timers was taken as it was, to fail later inside start().
    expect(() => new MembersWatcher({ group: GROUP, transport, clock: { now: () => 0 } as never })).toThrow("Expected `clock` to have now(), setTimeout() and clearTimeout().");
    expect(() => new MembersWatcher({ group: GROUP, transport, random: 0.5 as never })).toThrow(/`random`/);
  });
});

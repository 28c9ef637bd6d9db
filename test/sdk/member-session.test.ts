import { beforeEach, describe, expect, it } from "vitest";
import type { MemberView } from "../../shared/contract/members.js";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";
import { MemberSession, type MemberSessionEvents } from "../../shared/sdk/membership/member-session.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { MI, MT, MTTL, memberAnswer, memberView, ScriptedMembersTransport, type PendingMemberCall } from "../helpers/member-fakes.js";

const GROUP = "cluster";
const MEMBER = "node-1";

describe("MemberSession on a fake clock", () => {
  let clock: FakeClock;
  let transport: ScriptedMembersTransport;
  let session: MemberSession;
  let events: string[];
  let errors: Error[];
  let sessions: number;

  beforeEach(() => {
    clock = new FakeClock(0);
    transport = new ScriptedMembersTransport(clock);
    sessions = 0;
    session = new MemberSession({ group: GROUP, member: MEMBER, address: "10.0.0.4:5800", transport, clock, newSession: () => `s${++sessions}`, retryDelayInMs: MI });
    events = [];
    errors = [];
    session.on("joined", ({ session: id }) => void events.push(`joined ${id}`));
    session.on("lost", ({ session: id, reason }) => void events.push(`lost ${id} ${reason}`));
    session.on("error", (error) => void errors.push(error));
  });

  const view = (id: string, overrides: Partial<MemberView> = {}): MemberView => memberView({ member: MEMBER, session: id, address: "10.0.0.4:5800", ...overrides });
  const accept = (call: PendingMemberCall, id: string, token: string, overrides: Partial<MemberView> = {}): void =>
    call.respond({ outcome: "accepted", answer: memberAnswer(GROUP, view(id, overrides)), token });
  /** Starts and gets s1 accepted with token t1 at time 0. */
  async function joinedAtZero(): Promise<void> {
    session.start();
    await clock.advance(0);
    accept(transport.take("memberHeartbeat"), "s1", "t1", { state: "joining", heartbeats: 1 });
    await clock.advance(0);
  }

  it("joins with a new session and its address, then heartbeats every I with the last token only", async () => {
    session.start();
    await clock.advance(0);
    const join = transport.take("memberHeartbeat");
    expect(join).toMatchObject({ group: GROUP, member: MEMBER, body: { session: "s1", address: "10.0.0.4:5800" } });
    accept(join, "s1", "t1", { state: "joining", heartbeats: 1 });
    await clock.advance(0);
    expect(events).toEqual(["joined s1"]);
    expect(session.isJoined()).toBe(true);
    for (let n = 2; n <= 4; n += 1) {
      await clock.advance(MI);
      const beat = transport.take("memberHeartbeat");
      expect(beat.body).toEqual({ session: "s1", token: `t${n - 1}` });
      expect(beat.sentAt).toBe((n - 1) * MI);
      accept(beat, "s1", `t${n}`);
    }
    await clock.advance(0);
    expect(events).toEqual(["joined s1"]);
    transport.expectIdle();
  });

  it("while the previous session is still active its join is refused (SessionHeld); it keeps its session and retries every I", async () => {
    session.start();
    await clock.advance(0);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const join = transport.take("memberHeartbeat");
      expect(join.body?.session).toBe("s1");
      join.respond({ outcome: "held", answer: memberAnswer(GROUP, view("s0", { state: "active" })) });
      await clock.advance(MI);
    }
    expect(errors.map((error) => error.message)).toEqual(Array(3).fill(expect.stringMatching(/409 SessionHeld: the member's previous session is still active; session s1 is accepted once that one is unreachable/)));
    accept(transport.take("memberHeartbeat"), "s1", "t1", { state: "joining", heartbeats: 1, previous: { session: "s0", state: "unreachable", at: new Date(0).toISOString() } });
    await clock.advance(0);
    expect(events).toEqual(["joined s1"]);
  });

  it("a join refused (SessionHeld) but answered after a later join of the session was accepted is stale: the session stays joined", async () => {
    // Found by the membership simulation (seed 3618648326): the refusal of an earlier join,
    // decided while the previous session was still active, arrived after the acceptance of
    // a later join, and the session was lost as replaced though its row was its own.
    const held = (call: PendingMemberCall): void => call.respond({ outcome: "held", answer: memberAnswer(GROUP, view("s0", { state: "active" })) });
    session.start();
    await clock.advance(0);
    held(transport.take("memberHeartbeat"));
    await clock.advance(MI);
    const early = transport.take("memberHeartbeat");
    await clock.advance(MI);
    const later = transport.take("memberHeartbeat");
    expect([early.body, later.body]).toEqual([
      { session: "s1", address: "10.0.0.4:5800" },
      { session: "s1", address: "10.0.0.4:5800" },
    ]);
    accept(later, "s1", "t1", { state: "joining", heartbeats: 1, previous: { session: "s0", state: "unreachable", at: new Date(2 * MI).toISOString() } });
    await clock.advance(0);
    held(early);
    await clock.advance(0);
    expect(events).toEqual(["joined s1"]);
    expect(session.isJoined()).toBe(true);
    expect(errors).toHaveLength(1);
    await clock.advance(MI);
    expect(transport.take("memberHeartbeat").body).toEqual({ session: "s1", token: "t1" });
    transport.expectIdle();
  });

  it("replaced (SessionHeld, or SessionEnded naming another session): lost, and a new session joins at once", async () => {
    await joinedAtZero();
    await clock.advance(MI);
    transport.take("memberHeartbeat").respond({ outcome: "held", answer: memberAnswer(GROUP, view("other")) });
    await clock.advance(0);
    expect(events).toEqual(["joined s1", "lost s1 replaced"]);
    const rejoin = transport.take("memberHeartbeat");
    expect(rejoin.body).toEqual({ session: "s2", address: "10.0.0.4:5800" });
    expect(rejoin.sentAt).toBe(MI);
    accept(rejoin, "s2", "t2", { state: "joining", heartbeats: 1 });
    await clock.advance(MI);
    transport.take("memberHeartbeat").respond({ outcome: "ended", answer: memberAnswer(GROUP, view("other")) });
    await clock.advance(0);
    expect(events).toEqual(["joined s1", "lost s1 replaced", "joined s2", "lost s2 replaced"]);
  });

  it("ended (its goodbye, leaving, removal): lost with reason ended, never a heartbeat of that session again", async () => {
    await joinedAtZero();
    await clock.advance(MI);
    transport.take("memberHeartbeat").respond({ outcome: "ended", answer: memberAnswer(GROUP, view("s1", { state: "leaving" })) });
    await clock.advance(0);
    expect(events).toEqual(["joined s1", "lost s1 ended"]);
    expect(transport.take("memberHeartbeat").body?.session).toBe("s2");
  });

  it("expired: with no heartbeat accepted for ttl since the last accepted one was sent, lost at sentAt + ttl, not later", async () => {
    await joinedAtZero();
    // Accepted, but answered 150 ms after it was sent: the session still counts from sentAt = I.
    await clock.advance(MI);
    const late = transport.take("memberHeartbeat");
    await clock.advance(150);
    accept(late, "s1", "t2");
    // From now on nothing is answered; every call runs out its budget, which never reaches past the deadline.
    const lostAt = new Promise<number>((resolve) => session.on("lost", () => resolve(clock.now())));
    while (events.length < 2) {
      await clock.advance(10);
      for (const call of transport.drain()) {
        if (call.body?.session !== "s1") continue;
        expect(call.sentAt + (call.options.timeoutInMs ?? Infinity)).toBeLessThanOrEqual(MI + MTTL);
      }
    }
    expect(events).toEqual(["joined s1", "lost s1 expired"]);
    expect(await lostAt).toBe(MI + MTTL);
  });

  it("a service that says it is down (503) for longer than ttl does not end the session: the service does not count that time either", async () => {
    await joinedAtZero();
    while (clock.now() < 2 * MTTL) {
      await clock.advance(MI);
      for (const call of transport.drain()) call.fail(new HaRequestError("503 StoreUnavailable", "StoreUnavailable", 503));
    }
    await clock.advance(MI);
    const back = transport.take("memberHeartbeat");
    expect(back.body).toEqual({ session: "s1", token: "t1" });
    accept(back, "s1", "t2");
    await clock.advance(0);
    expect(events).toEqual(["joined s1"]);
  });

  it("a lossy network during an outage does not cut the excused time into pieces: heartbeats lost between 503s do not count toward expiry", async () => {
    // Found by the membership simulation (seed 2915216664, service-outage): each timeout
    // between two 503s closed the "down" window, and the seams added up to ttl.
    await joinedAtZero();
    let sent = 0;
    while (clock.now() < 3 * MTTL) {
      await clock.advance(MI);
      for (const call of transport.drain()) {
        sent += 1;
        // Every other heartbeat is lost on the way: it times out, unanswered.
        if (sent % 2 === 1) call.fail(new HaRequestError("503 Service Unavailable", "UnexpectedResponse", 503));
      }
    }
    await clock.advance(MI);
    const back = transport.drain().at(-1)!;
    expect(back.body).toEqual({ session: "s1", token: "t1" });
    accept(back, "s1", "t2");
    await clock.advance(0);
    expect(events).toEqual(["joined s1"]);
  });

  it("a refused connection (nothing listens: the service is down) is excused like a 503; timeouts then count again", async () => {
    await joinedAtZero();
    const refused = (): Error =>
      new HaRequestError("could not reach", "NetworkError", undefined, { cause: new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:7071"), { code: "ECONNREFUSED" }) }) });
    // Refused from the first renewal (sent at I) until 2000 ms, then silence: the session expires ttl of counted time later.
    while (clock.now() < 2000) {
      await clock.advance(MI);
      for (const call of transport.drain()) call.fail(refused());
    }
    const lostAt = new Promise<number>((resolve) => session.on("lost", () => resolve(clock.now())));
    while (events.length < 2) {
      await clock.advance(10);
      transport.drain();
    }
    // Excused: from the first refused call's sending (I) to the last refusal's answer (2000).
    expect(await lostAt).toBe(MTTL + (2000 - MI));
    expect(events).toEqual(["joined s1", "lost s1 expired"]);
  });

  it("never waits for an answer to keep its cadence: a lost heartbeat costs one interval, not its timeout", async () => {
    await joinedAtZero();
    await clock.advance(MI);
    const lost = transport.take("memberHeartbeat");
    expect(lost.options.timeoutInMs).toBe((MT - MI) / 2);
    await clock.advance(MI);
    const next = transport.take("memberHeartbeat");
    expect(next.sentAt).toBe(2 * MI);
    expect(next.body).toEqual({ session: "s1", token: "t1" });
    accept(next, "s1", "t3");
    // The older one answered last: its token is not the newest, and the session keeps t3.
    accept(lost, "s1", "t2");
    await clock.advance(MI);
    expect(transport.take("memberHeartbeat").body).toEqual({ session: "s1", token: "t3" });
  });

  it("reports a failed heartbeat and keeps going; a conflict is retried at once", async () => {
    await joinedAtZero();
    await clock.advance(MI);
    transport.take("memberHeartbeat").fail(new HaRequestError("503 StoreUnavailable", "StoreUnavailable", 503));
    await clock.advance(MI);
    transport.take("memberHeartbeat").respond({ outcome: "conflict", answer: memberAnswer(GROUP, view("s1")) });
    await clock.advance(0);
    expect(transport.take("memberHeartbeat").sentAt).toBe(2 * MI);
    expect(errors.map((error) => error.message)).toEqual(["503 StoreUnavailable"]);
    expect(events).toEqual(["joined s1"]);
  });

  it("sends its address again when the service shows another one", async () => {
    await joinedAtZero();
    await clock.advance(MI);
    accept(transport.take("memberHeartbeat"), "s1", "t2", { address: "stale:1" });
    await clock.advance(MI);
    expect(transport.take("memberHeartbeat").body).toEqual({ session: "s1", address: "10.0.0.4:5800", token: "t2" });
  });

  it("stop() stops heartbeating and says goodbye with its session, again if the goodbye lost a race", async () => {
    await joinedAtZero();
    const stopped = session.stop();
    await clock.advance(0);
    const goodbye = transport.take("leaveGroup");
    expect(goodbye).toMatchObject({ group: GROUP, member: MEMBER, session: "s1", options: { timeoutInMs: MT - MI } });
    goodbye.respond({ outcome: "conflict", answer: memberAnswer(GROUP, view("s1")) });
    await clock.advance(0);
    transport.take("leaveGroup").respond({ outcome: "left", answer: memberAnswer(GROUP, view("s1", { state: "leaving" })) });
    await stopped;
    await clock.advance(10 * MI);
    transport.expectIdle();
    expect(events).toEqual(["joined s1"]);
  });

  it("stop() during a join that is still on its way says goodbye too: the join may have landed", async () => {
    session.start();
    await clock.advance(0);
    transport.take("memberHeartbeat");
    const stopped = session.stop();
    await clock.advance(0);
    transport.take("leaveGroup").respond({ outcome: "left", answer: memberAnswer(GROUP, null) });
    await stopped;
    transport.expectIdle();
  });

  it("validates its options where they enter, naming the option", () => {
    expect(() => new MemberSession(null as never)).toThrow('Expected the MemberSession options to be an object such as { group: "cluster", member: "node-1", endpoint: "http://127.0.0.1:7071/api" }.');
    expect(() => new MemberSession({ group: "a b", member: MEMBER, transport })).toThrow(/`group`/);
    expect(() => new MemberSession({ group: GROUP, member: "..", transport })).toThrow(/`member`/);
    expect(() => new MemberSession({ group: GROUP, member: MEMBER })).toThrow(/`endpoint`/);
    expect(() => new MemberSession({ group: GROUP, member: MEMBER, transport: {} as never })).toThrow(/MembersTransport/);
    expect(() => new MemberSession({ group: GROUP, member: MEMBER, transport, address: "" })).toThrow(/`address`/);
    expect(() => new MemberSession({ group: GROUP, member: MEMBER, transport, retryDelayInMs: 0 })).toThrow(/`retryDelayInMs`/);
    expect(() => new MemberSession({ group: GROUP, member: MEMBER, transport, clock: { now: () => 0 } as never })).toThrow("Expected `clock` to have now(), setTimeout() and clearTimeout().");
  });

  it("every event carries group and member", async () => {
    const seen: MemberSessionEvents["joined"][] = [];
    session.on("joined", (payload) => void seen.push(payload));
    await joinedAtZero();
    expect(seen).toEqual([{ group: GROUP, member: MEMBER, session: "s1", address: "10.0.0.4:5800" }]);
  });
});

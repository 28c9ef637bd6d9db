import { beforeEach, describe, expect, it } from "vitest";
import { InvocationContext } from "../../shared/http/azure-functions.js";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import type { MemberStore } from "../../shared/members/member-store.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { MemoryMemberStore } from "../../shared/store/members-memory-store.js";
import { CountingMemberStore } from "../helpers/counting-member-store.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { errorCodeOf, send, WALL_START, type Reply } from "../helpers/route-requests.js";

const I = 200;
const T = 1000;
const TTL = 3000;
const TIMING = { intervalMs: I, timeoutMs: T };
const MEMBERS = { ttlMs: TTL, retentionMs: 2000, maxPerGroup: 1000, sweepSchedule: "*/1 * * * * *", sweepPeriodMs: 1000 };
const SECRET = "a-test-secret-that-is-long-enough-for-hmac";

const memberOf = (reply: Reply): Record<string, unknown> | null => reply.body["member"] as Record<string, unknown> | null;
const tokenOf = (reply: Reply): string => reply.body["token"] as string;

describe("membership handlers over a counting store: the cost and the answer of each call", () => {
  let clock: FakeClock;
  let store: CountingMemberStore;
  let runtime: Runtime;

  beforeEach(() => {
    clock = new FakeClock(WALL_START);
    store = new CountingMemberStore(new MemoryMemberStore());
    runtime = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET, members: MEMBERS }, { leases: new MemoryLeaseStore(), clock, members: store });
  });

  const join = (member: string, session: string, extra: Record<string, unknown> = {}): Promise<Reply> => send(runtime, "PUT", `/members/g/${member}`, { session, ...extra });

  it("a join costs one partition query and one create, and answers the member joining with a token", async () => {
    const reply = await join("node-1", "s1", { address: "10.0.0.4:5800" });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      group: "g",
      member: {
        member: "node-1",
        session: "s1",
        address: "10.0.0.4:5800",
        state: "joining",
        joinedAt: new Date(WALL_START).toISOString(),
        renewedAt: new Date(WALL_START).toISOString(),
        leftAt: null,
        heartbeats: 1,
        ageMs: 0,
        previous: null,
      },
      intervalMs: I,
      timeoutMs: T,
      ttlMs: TTL,
      token: expect.any(String),
    });
    expect(store.calls).toEqual(["read", "create"]);
  });

  it("a steady-state heartbeat with its token costs exactly one store operation, and answers what a listing shows", async () => {
    let reply = await join("node-1", "s1", { address: "h:1" });
    for (let beat = 2; beat <= 4; beat += 1) {
      await clock.advance(I);
      store.reset();
      reply = await join("node-1", "s1", { token: tokenOf(reply) });
      expect(reply.status).toBe(200);
      expect(store.calls).toEqual(["renew"]);
      expect(memberOf(reply)).toMatchObject({ state: "active", heartbeats: beat, address: "h:1", ageMs: 0 });
    }
    store.reset();
    const listed = await send(runtime, "GET", "/members/g");
    expect(store.calls).toEqual(["listGroup"]);
    expect((listed.body["members"] as unknown[])[0]).toEqual(memberOf(reply));
  });

  it("a heartbeat without a token costs a query and a write, and answers the same", async () => {
    await join("node-1", "s1");
    await clock.advance(I);
    store.reset();
    const reply = await join("node-1", "s1");
    expect(store.calls).toEqual(["read", "replace"]);
    expect(memberOf(reply)).toMatchObject({ state: "active", heartbeats: 2 });
  });

  it("unreachable comes back to active on its next heartbeat: a token older than T takes the slow path", async () => {
    const first = await join("node-1", "s1");
    await clock.advance(T + 500);
    const listed = await send(runtime, "GET", "/members/g");
    expect((listed.body["members"] as unknown[])[0]).toMatchObject({ state: "unreachable", ageMs: T + 500 });
    store.reset();
    const back = await join("node-1", "s1", { token: tokenOf(first) });
    expect(back.status).toBe(200);
    expect(store.calls).toEqual(["read", "replace"]);
    expect(memberOf(back)).toMatchObject({ state: "active", heartbeats: 2 });
  });

  it("leaving by age never comes back, with or without its token: 409 SessionEnded, nothing written", async () => {
    const first = await join("node-1", "s1");
    await clock.advance(TTL + 1);
    store.reset();
    for (const body of [{ token: tokenOf(first) }, {}]) {
      const refused = await join("node-1", "s1", body);
      expect(refused.status).toBe(409);
      expect(errorCodeOf(refused)).toBe("SessionEnded");
      expect(memberOf(refused)).toMatchObject({ session: "s1", state: "leaving" });
    }
    expect(store.calls).toEqual(["read", "read"]);
  });

  it("a new session is refused while the old one is joining or active, and replaces it once unreachable", async () => {
    const old = await join("node-1", "s1");
    await clock.advance(I);
    await join("node-1", "s1", { token: tokenOf(old) });
    store.reset();
    const held = await join("node-1", "s2");
    expect(held.status).toBe(409);
    expect(errorCodeOf(held)).toBe("SessionHeld");
    expect(memberOf(held)).toMatchObject({ session: "s1", state: "active" });
    expect(store.calls).toEqual(["read"]);
    await clock.advance(T);
    expect(errorCodeOf(await join("node-1", "s2"))).toBe("SessionHeld");
    await clock.advance(1);
    const replaced = await join("node-1", "s2", { address: "h:2" });
    expect(replaced.status).toBe(200);
    expect(memberOf(replaced)).toMatchObject({
      session: "s2",
      state: "joining",
      heartbeats: 1,
      address: "h:2",
      previous: { session: "s1", state: "unreachable", at: new Date(clock.now()).toISOString() },
    });
    // The replaced session never comes back.
    const late = await join("node-1", "s1");
    expect(errorCodeOf(late)).toBe("SessionEnded");
    expect(memberOf(late)).toMatchObject({ session: "s2" });
  });

  it("goodbye: the session is leaving at once, then ended; a second goodbye is a no-op", async () => {
    await join("node-1", "s1");
    store.reset();
    const left = await send(runtime, "DELETE", "/members/g/node-1?session=s1");
    expect(left.status).toBe(200);
    expect(memberOf(left)).toMatchObject({ session: "s1", state: "leaving", leftAt: new Date(clock.now()).toISOString() });
    expect(store.calls).toEqual(["read", "replace"]);
    store.reset();
    expect((await send(runtime, "DELETE", "/members/g/node-1?session=s1")).status).toBe(200);
    expect(store.calls).toEqual(["read"]);
    expect(errorCodeOf(await join("node-1", "s1"))).toBe("SessionEnded");
    // A restart after a goodbye is welcome at once: the old session is leaving.
    expect(memberOf(await join("node-1", "s2"))).toMatchObject({ session: "s2", previous: { session: "s1", state: "leaving" } });
  });

  it("a goodbye for a member with no row is 200 with member null, and writes nothing", async () => {
    const reply = await send(runtime, "DELETE", "/members/g/ghost?session=s1");
    expect(reply).toEqual({ status: 200, body: { group: "g", member: null, intervalMs: I, timeoutMs: T, ttlMs: TTL } });
    expect(store.calls).toEqual(["read"]);
  });

  it("a goodbye naming another session is 409 SessionHeld and leaves the row alone", async () => {
    await join("node-1", "s1");
    const reply = await send(runtime, "DELETE", "/members/g/node-1?session=s2");
    expect(reply.status).toBe(409);
    expect(errorCodeOf(reply)).toBe("SessionHeld");
    expect(memberOf(reply)).toMatchObject({ session: "s1", state: "joining", leftAt: null });
  });

  it("lists a group in one partition query, sorted by member, every row judged at one instant", async () => {
    await join("node-2", "b1");
    await clock.advance(T + 1);
    await join("node-1", "a1");
    store.reset();
    const listed = await send(runtime, "GET", "/members/g");
    expect(store.calls).toEqual(["listGroup"]);
    expect(listed.body).toMatchObject({ group: "g", intervalMs: I, timeoutMs: T, ttlMs: TTL });
    expect((listed.body["members"] as Array<Record<string, unknown>>).map(({ member, state, ageMs }) => ({ member, state, ageMs }))).toEqual([
      { member: "node-1", state: "joining", ageMs: 0 },
      { member: "node-2", state: "unreachable", ageMs: T + 1 },
    ]);
    expect(await send(runtime, "GET", "/members/empty")).toMatchObject({ status: 200, body: { group: "empty", members: [] } });
  });

  it("lists every group with its members counted by state", async () => {
    await join("a", "s1");
    await send(runtime, "PUT", "/members/other/b", { session: "s2" });
    await send(runtime, "DELETE", "/members/other/b?session=s2");
    store.reset();
    const groups = await send(runtime, "GET", "/members");
    expect(store.calls).toEqual(["listAll"]);
    expect(groups.body).toEqual({
      groups: [
        { group: "g", members: { joining: 1, active: 0, unreachable: 0, leaving: 0 } },
        { group: "other", members: { joining: 0, active: 0, unreachable: 0, leaving: 1 } },
      ],
    });
  });

  it("bad input is a 400 naming the field, before any store call", async () => {
    const bad: Array<[string, string, unknown, RegExp]> = [
      ["PUT", "/members/bad%2Fslash/m", { session: "s" }, /group/],
      ["PUT", "/members/g/a%20b", { session: "s" }, /member must be/],
      ["PUT", "/members/g/m", { session: "s".repeat(129) }, /session/],
      ["PUT", "/members/g/m", {}, /session is required/],
      ["PUT", "/members/g/m", { session: "s", uuid: "u" }, /Unknown field "uuid"/],
      ["PUT", "/members/g/m", { session: "s", address: 7 }, /address/],
      ["PUT", "/members/g/m", "nope", /JSON object/],
      ["PUT", "/members/g/m?verbose=1", { session: "s" }, /Unknown query parameter "verbose"/],
      ["DELETE", "/members/g/m", undefined, /session is required/],
      ["DELETE", "/members/g/m?session=a%20b", undefined, /session must be/],
      ["GET", "/members/g?since=1", undefined, /Unknown query parameter/],
    ];
    for (const [method, path, body, message] of bad) {
      const reply = await send(runtime, method, path, body);
      expect(reply.status, `${method} ${path}`).toBe(400);
      expect(reply.body["error"], `${method} ${path}`).toMatchObject({ code: "InvalidRequest", message: expect.stringMatching(message) });
    }
    expect(store.calls).toEqual([]);
  });

  it("a malformed or foreign token is treated as absent: the slow path decides", async () => {
    await join("node-1", "s1");
    const other = await join("node-2", "s9");
    store.reset();
    for (const token of ["garbage", tokenOf(other), 42]) {
      const reply = await join("node-1", "s1", { token });
      expect(reply.status).toBe(200);
    }
    expect(store.calls).toEqual(["read", "replace", "read", "replace", "read", "replace"]);
  });

  it("a heartbeat that loses the race only to its own echo is answered as accepted (idempotent PUT)", async () => {
    const memory = new MemoryMemberStore();
    let armed = false;
    const racing: MemberStore = {
      ...Object.fromEntries((["read", "listGroup", "listAll", "create", "replace", "renew", "delete", "writeMarker"] as const).map((name) => [name, memory[name].bind(memory)])),
      kind: "memory",
      read: async (group, member, options) => {
        const found = await memory.read(group, member, options);
        if (armed && found.row !== undefined) {
          armed = false;
          const { etag, ...row } = found.row;
          await memory.replace({ ...row, renewedAt: clock.now(), heartbeats: row.heartbeats + 1 }, etag);
        }
        return found;
      },
    } as MemberStore;
    const raced = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET, members: MEMBERS }, { leases: new MemoryLeaseStore(), clock, members: racing });
    await send(raced, "PUT", "/members/g/node-1", { session: "s1" });
    await clock.advance(I);
    armed = true;
    const reply = await send(raced, "PUT", "/members/g/node-1", { session: "s1" });
    expect(reply.status).toBe(200);
    expect(memberOf(reply)).toMatchObject({ session: "s1", heartbeats: 2, state: "active" });
  });
});

describe("membership handlers over a store that is down", () => {
  const down: MemberStore = {
    kind: "table",
    read: async () => {
      throw new StoreUnavailableError("connect ECONNREFUSED 127.0.0.1:10002");
    },
    listGroup: async () => {
      throw new StoreUnavailableError("connect ECONNREFUSED 127.0.0.1:10002");
    },
    listAll: async () => {
      throw new StoreUnavailableError("connect ECONNREFUSED 127.0.0.1:10002");
    },
  } as unknown as MemberStore;
  const runtime = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET, members: MEMBERS }, { leases: new MemoryLeaseStore(), clock: new FakeClock(WALL_START), members: down });

  it.each([
    ["PUT", "/members/g/m", { session: "s" }],
    ["DELETE", "/members/g/m?session=s", undefined],
    ["GET", "/members/g", undefined],
    ["GET", "/members", undefined],
  ])("%s %s answers 503 StoreUnavailable with no store detail", async (method, path, body) => {
    const warnings: unknown[] = [];
    const reply = await send(runtime, method, path, body, new InvocationContext({ logHandler: (_level, ...args) => warnings.push(...args) }));
    expect(reply.status).toBe(503);
    expect(reply.body).toEqual({ error: { code: "StoreUnavailable", message: expect.any(String) } });
    expect(JSON.stringify(reply.body)).not.toMatch(/ECONNREFUSED/);
    expect(String(warnings)).toMatch(/ECONNREFUSED/);
  });

  it("a runtime built without a membership store answers 503 on member routes, and keeps nothing", async () => {
    const bare = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { leases: new MemoryLeaseStore(), clock: new FakeClock(WALL_START) });
    expect((await send(bare, "PUT", "/members/g/m", { session: "s" })).status).toBe(503);
  });
});

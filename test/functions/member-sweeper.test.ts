import { beforeEach, describe, expect, it } from "vitest";
import { timers } from "../../functions/timers.js";
import { InvocationContext } from "../../shared/http/azure-functions.js";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import type { MemberStore } from "../../shared/members/member-store.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { MemoryMemberStore } from "../../shared/store/members-memory-store.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { errorCodeOf, send, WALL_START, type Reply } from "../helpers/route-requests.js";

const I = 200;
const T = 1000;
const TTL = 3000;
const RETENTION = 1000;
const PERIOD = 500;
const MEMBERS = { ttlMs: TTL, retentionMs: RETENTION, maxPerGroup: 1000, sweepSchedule: "*/1 * * * * *", sweepPeriodMs: PERIOD };
const SECRET = "a-test-secret-that-is-long-enough-for-hmac";
const sweepMembers = timers.find((timer) => timer.name === "sweepMembers")!;

describe("the sweeper (the sweepMembers timer function) on an injected clock", () => {
  let clock: FakeClock;
  let memory: MemoryMemberStore;
  let runtime: Runtime;
  let warnings: string[];
  let logs: string[];

  const build = (store: MemberStore, members: Partial<typeof MEMBERS> = {}): Runtime =>
    createRuntime({ timing: { intervalMs: I, timeoutMs: T }, storeTimeoutMs: 2000, leaseSecret: SECRET, members: { ...MEMBERS, ...members } }, { leases: new MemoryLeaseStore(), clock, members: store });
  const sweep = (on: Runtime = runtime): Promise<void> =>
    sweepMembers.handler(
      on,
      new InvocationContext({
        logHandler: (level, ...args) => (level === "warning" ? warnings : logs).push(args.map(String).join(" ")),
      }),
    );
  const beat = (member: string, session: string): Promise<Reply> => send(runtime, "PUT", `/members/g/${member}`, { session });
  const states = async (): Promise<Record<string, string>> => {
    const listed = await send(runtime, "GET", "/members/g");
    return Object.fromEntries((listed.body["members"] as Array<{ member: string; state: string }>).map(({ member, state }) => [member, state]));
  };
  /** The `alive` members heartbeat every I for `ms`, and `sweeper` sweeps every period. */
  async function run(ms: number, alive: Record<string, string>, sweeper: Runtime = runtime): Promise<void> {
    for (let elapsed = 0; elapsed < ms; elapsed += I) {
      for (const [member, session] of Object.entries(alive)) await beat(member, session);
      if (elapsed % PERIOD < I) await sweep(sweeper);
      await clock.advance(I);
    }
  }

  beforeEach(() => {
    clock = new FakeClock(WALL_START);
    memory = new MemoryMemberStore();
    runtime = build(memory);
    warnings = [];
    logs = [];
  });

  it("removes a member that stopped heartbeating once leaving past the retention; its session never comes back", async () => {
    const alive = { a: "a1", b: "b1" };
    await run(1000, { ...alive, dead: "d1" });
    await run(T + 100, alive);
    expect(await states()).toMatchObject({ dead: "unreachable" });
    await run(TTL - T, alive);
    expect(await states()).toMatchObject({ dead: "leaving" });
    await run(RETENTION + PERIOD, alive);
    expect(await states()).toEqual({ a: "active", b: "active" });
    expect(logs.join("\n")).toMatch(/removed g\/dead \(retention\)/);
    expect(errorCodeOf(await beat("dead", "d1"))).toBe("SessionEnded");
    expect((await beat("dead", "d2")).status).toBe(200);
  });

  it("never removes every member of a group at once: it warns, and they stay leaving", async () => {
    await run(1000, { a: "a1", b: "b1" });
    await run(TTL + RETENTION + 2 * PERIOD, {});
    expect(await states()).toEqual({ a: "leaving", b: "leaving" });
    expect(warnings.join("\n")).toMatch(/every member looks failed \(a, b\): suspect the service, not the members/);
  });

  it("an outage of the service of several T reports no failure: ages restart when it resumes, and the gap is logged", async () => {
    const everyone = { a: "a1", b: "b1", c: "c1" };
    await run(1000, everyone);
    // The functions are down for 10·T: no heartbeat gets through, no sweep runs.
    await clock.advance(10 * T);
    expect(await states()).toEqual({ a: "active", b: "active", c: "active" });
    // They resume: every member's next heartbeat is a renewal, never SessionEnded.
    for (const [member, session] of Object.entries(everyone)) expect((await beat(member, session)).status).toBe(200);
    await sweep();
    expect(warnings.join("\n")).toMatch(/g: the service did not sweep for 1\d{4} ms; member ages do not count that gap/);
    await run(2 * TTL, everyone);
    expect(await states()).toEqual({ a: "active", b: "active", c: "active" });
  });

  it("after the outage, a member that did not come back is unreachable T after the service resumed, not at once", async () => {
    await run(1000, { a: "a1", b: "b1", gone: "g1" });
    await clock.advance(10 * T);
    await sweep();
    await run(T - I, { a: "a1", b: "b1" });
    expect(await states()).toMatchObject({ gone: "active" });
    await run(2 * I, { a: "a1", b: "b1" });
    expect(await states()).toMatchObject({ gone: "unreachable" });
  });

  it("deletes If-Match: a member that heartbeats between the sweep's listing and its delete is not deleted", async () => {
    // Swept meanwhile by a sweeper that keeps every row, so that flaky goes leaving by age.
    const keeping = build(memory, { retentionMs: 60_000 });
    await run(1000, { a: "a1", b: "b1", flaky: "f1" }, keeping);
    await run(TTL + RETENTION + 50, { a: "a1", b: "b1" }, keeping);
    expect(await states()).toMatchObject({ flaky: "leaving" });
    // The sweep lists flaky as past the retention; flaky's heartbeat lands before the delete.
    let raced = false;
    const racing: MemberStore = {
      kind: memory.kind,
      read: (...args) => memory.read(...args),
      listGroup: (...args) => memory.listGroup(...args),
      listAll: (...args) => memory.listAll(...args),
      create: (...args) => memory.create(...args),
      replace: (...args) => memory.replace(...args),
      renew: (...args) => memory.renew(...args),
      writeMarker: (...args) => memory.writeMarker(...args),
      delete: async (group, member, etag, options) => {
        if (member === "flaky") {
          const { row } = await memory.read(group, member);
          raced = (await memory.replace({ ...row!, renewedAt: clock.now(), heartbeats: row!.heartbeats + 1, leftAt: null }, row!.etag)).ok;
        }
        return memory.delete(group, member, etag, options);
      },
    };
    await sweep(build(racing));
    expect(raced).toBe(true);
    expect(Object.keys(await states()).sort()).toEqual(["a", "b", "flaky"]);
  });

  it("bounds a group: past HA_MEMBERS_MAX_PER_GROUP the oldest failed rows go, never an active one", async () => {
    const keeping = build(memory, { retentionMs: 60_000 });
    await run(1000, { a: "a1", old: "o1" }, keeping);
    await run(TTL - 500, { a: "a1", young: "y1" }, keeping);
    await run(T + 600, { a: "a1" }, keeping);
    expect(await states()).toEqual({ a: "active", old: "leaving", young: "unreachable" });
    await sweep(build(memory, { retentionMs: 60_000, maxPerGroup: 2 }));
    expect(await states()).toEqual({ a: "active", young: "unreachable" });
    expect(logs.join("\n")).toMatch(/g\/old \(bound\)/);
  });
});

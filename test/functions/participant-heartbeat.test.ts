/**
 * POST /api/heartbeat (docs/api.md#participant-heartbeat) through the route table and the
 * dispatcher both hosts use: every part answers exactly what its own route answers (status
 * and body, Retry-After as `retryAfter`), for every outcome, from the same mapping code; a
 * part that fails or is outside the caller's grants answers for itself; a bad body is a
 * 400 naming the field and does nothing; a group part's cursor answers `unchanged`.
 */
import { describe, expect, it } from "vitest";
import { MAX_PARTICIPANT_BODY_BYTES } from "../../shared/contract/input-rules.js";
import { loadAuthConfig } from "../../shared/config/auth-config.js";
import { ConfigError } from "../../shared/config/config-error.js";
import { createAccess } from "../../shared/http/access.js";
import { InvocationContext } from "../../shared/http/azure-functions.js";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import { OverloadedError } from "../../shared/service/overloaded-error.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import { MemoryMemberStore } from "../../shared/store/members-memory-store.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { CountingMemberStore } from "../helpers/counting-member-store.js";
import { CountingStore } from "../helpers/counting-store.js";
import { failingFor } from "../helpers/failing-names.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { startTestHost } from "../helpers/local-host.js";
import { send, sendWithHeaders, WALL_START, type Reply } from "../helpers/route-requests.js";

const TIMING = { intervalMs: 1000, timeoutMs: 5000 };
const SECRET = "a-test-secret-that-is-long-enough-for-hmac";

interface World {
  readonly runtime: Runtime;
  readonly clock: FakeClock;
  readonly leases: CountingStore;
  readonly members: CountingMemberStore;
}

/** A fresh service on memory stores; `fail` makes every store call about one utype or group fail. */
function world(fail?: { name: string; error: Error }): World {
  const clock = new FakeClock(WALL_START);
  const leases = new CountingStore(fail === undefined ? new MemoryLeaseStore() : failingFor(new MemoryLeaseStore(), fail.name, fail.error));
  const members = new CountingMemberStore(fail === undefined ? new MemoryMemberStore() : failingFor(new MemoryMemberStore(), fail.name, fail.error));
  const runtime = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { leases, members, clock });
  return { runtime, clock, leases, members };
}

const quiet = (): InvocationContext => new InvocationContext({ logHandler: () => undefined });
const heartbeat = (runtime: Runtime, body: unknown, context = quiet()): Promise<Reply> => send(runtime, "POST", "/heartbeat", body, context);

type Part = "roles" | "reads" | "members" | "groups";

/** The single request a part stands for, and the part itself. */
interface Case {
  readonly name: string;
  readonly single: [method: string, path: string, body?: unknown];
  readonly list: Part;
  readonly part: Record<string, unknown>;
  /** Run on both worlds first, through the single routes. */
  readonly before?: (runtime: Runtime, clock: FakeClock) => Promise<void>;
  readonly fail?: { name: string; error: Error };
}

const hold = async (runtime: Runtime): Promise<void> => {
  expect((await send(runtime, "PUT", "/primary/scheduler", { uuid: "a" })).status).toBe(200);
};
const join = async (runtime: Runtime): Promise<void> => {
  expect((await send(runtime, "PUT", "/members/hpc/head-1", { session: "s1" })).status).toBe(200);
};

const CASES: Case[] = [
  { name: "a role acquired (200 with the lease)", single: ["PUT", "/primary/scheduler", { uuid: "a", address: "h:1" }], list: "roles", part: { utype: "scheduler", uuid: "a", address: "h:1" } },
  { name: "a role held by another (409 LeaseHeld)", before: hold, single: ["PUT", "/primary/scheduler", { uuid: "b", announce: true }], list: "roles", part: { utype: "scheduler", uuid: "b", announce: true } },
  {
    name: "a role whose term ended (409 LeaseRevoked)",
    before: async (runtime, clock) => {
      await hold(runtime);
      await clock.advance(5001);
      await send(runtime, "PUT", "/primary/scheduler", { uuid: "b" });
    },
    single: ["PUT", "/primary/scheduler", { uuid: "a" }],
    list: "roles",
    part: { utype: "scheduler", uuid: "a" },
  },
  { name: "a read (200)", before: hold, single: ["GET", "/primary/scheduler?standbys=true"], list: "reads", part: { utype: "scheduler", standbys: true } },
  { name: "a member joined (200 with the token)", single: ["PUT", "/members/hpc/head-1", { session: "s1", address: "h:1" }], list: "members", part: { group: "hpc", member: "head-1", session: "s1", address: "h:1" } },
  { name: "a member held by another session (409 SessionHeld)", before: join, single: ["PUT", "/members/hpc/head-1", { session: "s2" }], list: "members", part: { group: "hpc", member: "head-1", session: "s2" } },
  {
    name: "a member whose session ended (409 SessionEnded)",
    before: async (runtime) => {
      await join(runtime);
      await send(runtime, "DELETE", "/members/hpc/head-1?session=s1");
    },
    single: ["PUT", "/members/hpc/head-1", { session: "s1" }],
    list: "members",
    part: { group: "hpc", member: "head-1", session: "s1" },
  },
  ...(["roles", "reads", "members", "groups"] as const).flatMap((list): Case[] => {
    const single: Case["single"] =
      list === "roles" ? ["PUT", "/primary/broken", { uuid: "a" }] : list === "reads" ? ["GET", "/primary/broken"] : list === "members" ? ["PUT", "/members/broken/m", { session: "s" }] : ["GET", "/members/broken"];
    const part = list === "roles" ? { utype: "broken", uuid: "a" } : list === "reads" ? { utype: "broken" } : list === "members" ? { group: "broken", member: "m", session: "s" } : { group: "broken" };
    return [
      { name: `a ${list} part whose store is unavailable (503 StoreUnavailable)`, single, list, part, fail: { name: "broken", error: new StoreUnavailableError("connect ECONNREFUSED 127.0.0.1:10002") } },
      { name: `a ${list} part shed (503 Overloaded, Retry-After)`, single, list, part, fail: { name: "broken", error: new OverloadedError("The service is at capacity (test); retry after 2 s.", 2) } },
      { name: `a ${list} part whose setting is bad (503 Misconfigured)`, single, list, part, fail: { name: "broken", error: new ConfigError("HA_SOMETHING", "HA_SOMETHING is wrong: set it right.") } },
    ];
  }),
];

describe("each part answers exactly what its own route answers", () => {
  it.each(CASES)("$name", async ({ single, list, part, before, fail }) => {
    const alone = world(fail);
    const batched = world(fail);
    await before?.(alone.runtime, alone.clock);
    await before?.(batched.runtime, batched.clock);
    const [method, path, body] = single;
    const expected = await sendWithHeaders(alone.runtime, method, path, body, quiet());
    const answer = await heartbeat(batched.runtime, { [list]: [part] });
    expect(answer.status).toBe(200);
    const entries = answer.body[list] as Array<Record<string, unknown>>;
    expect(entries).toHaveLength(1);
    const retryAfter = expected.headers["retry-after"];
    expect(entries[0]).toEqual({
      ...Object.fromEntries(Object.entries(part).filter(([key]) => ["utype", "group", "member"].includes(key))),
      status: expected.status,
      body: list === "groups" && expected.status === 200 ? { ...expected.body, cursor: expect.any(String) } : expected.body,
      ...(retryAfter === undefined ? {} : { retryAfter: Number(retryAfter) }),
    });
    // Every other list is there, empty.
    for (const other of ["roles", "reads", "members", "groups"].filter((name) => name !== list)) expect(answer.body[other]).toEqual([]);
  });

  it("a part that meets a bug answers 500 InternalError as the local host answers its route's bug, logged with the part's place; the other parts still answer", async () => {
    const leases = failingFor(new MemoryLeaseStore(), "buggy", new TypeError("bug in the store"));
    const runtime = createRuntime({ timing: TIMING, storeTimeoutMs: 2000, leaseSecret: SECRET }, { leases, members: new MemoryMemberStore() });
    const host = await startTestHost({ runtime: async () => runtime });
    try {
      const post = async (path: string, method: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
        const response = await fetch(`${host.host.url}${path}`, { method, body: JSON.stringify(body), headers: { "content-type": "application/json" } });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      };
      const alone = await post("/primary/buggy", "PUT", { uuid: "a" });
      expect(alone.status).toBe(500);
      const batched = await post("/heartbeat", "POST", { roles: [{ utype: "fine", uuid: "a" }, { utype: "buggy", uuid: "a" }] });
      expect(batched.status).toBe(200);
      const roles = batched.body["roles"] as Array<Record<string, unknown>>;
      expect(roles[1]).toEqual({ utype: "buggy", status: alone.status, body: alone.body });
      expect(roles[0]).toMatchObject({ utype: "fine", status: 200 });
      expect(JSON.stringify(batched.body)).not.toMatch(/bug in the store|\.ts:\d+/);
      expect(host.logs.join("\n")).toMatch(/participantHeartbeat: roles\[1\]: unexpected error/);
    } finally {
      await host.close();
    }
  });
});

describe("parts fail and are refused one by one", () => {
  it("one role's store call fails: that part is 503 StoreUnavailable (logged with its place), the other roles, the member and the group 200", async () => {
    const { runtime, leases } = world({ name: "broker", error: new StoreUnavailableError("connect ECONNREFUSED 127.0.0.1:10002") });
    const warnings: unknown[] = [];
    const context = new InvocationContext({ logHandler: (_level, ...args) => warnings.push(...args) });
    const answer = await heartbeat(
      runtime,
      {
        roles: ["scheduler", "broker", "session"].map((utype) => ({ utype, uuid: "head-1" })),
        members: [{ group: "hpc", member: "head-1", session: "s1" }],
        groups: [{ group: "hpc" }],
      },
      context,
    );
    expect(answer.status).toBe(200);
    const roles = answer.body["roles"] as Array<Record<string, unknown>>;
    expect(roles.map((role) => [role["utype"], role["status"]])).toEqual([
      ["scheduler", 200],
      ["broker", 503],
      ["session", 200],
    ]);
    expect(roles[1]?.["body"]).toEqual({ error: { code: "StoreUnavailable", message: "The lease store is unavailable; retry shortly." } });
    expect((answer.body["members"] as Array<Record<string, unknown>>)[0]).toMatchObject({ status: 200 });
    expect((answer.body["groups"] as Array<Record<string, unknown>>)[0]).toMatchObject({ status: 200 });
    expect(warnings.filter((line) => /ECONNREFUSED/.test(String(line)))).toEqual(["participantHeartbeat: roles[1]: connect ECONNREFUSED 127.0.0.1:10002"]);
    expect(leases.calls.length).toBeGreaterThan(0);
  });

  it("a role or member outside the caller's grants answers its route's 403 and never reaches the store; the granted parts, reads and groups run", async () => {
    const access = createAccess(loadAuthConfig({ HA_API_KEYS: "head-a=head-a-key-0123456789", HA_GRANTS: '[{"callers":["key:head-a"],"hold":["mine.*"],"join":["mine"]}]' }));
    const headers = { "x-functions-key": "head-a-key-0123456789" };
    const alone = world();
    const refusedRole = await sendWithHeaders(alone.runtime, "PUT", "/primary/theirs.scheduler", { uuid: "a" }, quiet(), headers, access);
    const refusedMember = await sendWithHeaders(alone.runtime, "PUT", "/members/theirs/head-1", { session: "s1" }, quiet(), headers, access);
    expect([refusedRole.status, refusedMember.status]).toEqual([403, 403]);

    const { runtime, leases } = world();
    const answer = await sendWithHeaders(
      runtime,
      "POST",
      "/heartbeat",
      {
        roles: [
          { utype: "mine.scheduler", uuid: "a" },
          { utype: "theirs.scheduler", uuid: "a" },
        ],
        reads: [{ utype: "theirs.broker" }],
        members: [
          { group: "theirs", member: "head-1", session: "s1" },
          { group: "mine", member: "head-1", session: "s1" },
        ],
        groups: [{ group: "theirs" }],
      },
      quiet(),
      headers,
      access,
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      roles: [
        { utype: "mine.scheduler", status: 200 },
        { utype: "theirs.scheduler", status: 403, body: refusedRole.body },
      ],
      reads: [{ utype: "theirs.broker", status: 200 }],
      members: [
        { group: "theirs", member: "head-1", status: 403, body: refusedMember.body },
        { group: "mine", member: "head-1", status: 200 },
      ],
      groups: [{ group: "theirs", status: 200 }],
    });
    // The refused parts cost nothing: only mine.scheduler's acquisition (read, history read, create with its mark) and the read of theirs.broker.
    expect([...leases.calls].sort()).toEqual(["create", "read", "read", "readTerms"]);
    expect(await send(runtime, "GET", "/primary/theirs.scheduler")).toMatchObject({ body: { primary: null } });
    expect((await send(runtime, "GET", "/members/theirs")).body["members"]).toEqual([]);
    expect((await send(runtime, "GET", "/members/mine")).body["members"]).toHaveLength(1);
  });

  it("without an authenticated caller the whole request is 401, before any store call", async () => {
    const access = createAccess(loadAuthConfig({ HA_API_KEYS: "head-a=head-a-key-0123456789" }));
    const { runtime, leases } = world();
    const answer = await sendWithHeaders(runtime, "POST", "/heartbeat", { roles: [{ utype: "x", uuid: "a" }] }, quiet(), {}, access);
    expect(answer.status).toBe(401);
    expect(leases.calls).toEqual([]);
  });
});

describe("a group part's cursor", () => {
  it("answers unchanged (no members) while the group's members, sessions, states and addresses stay the same, and the listing again when one changes", async () => {
    const { runtime, clock } = world();
    await join(runtime);
    // Its second heartbeat makes it active: a change a watcher sees.
    await clock.advance(1000);
    await send(runtime, "PUT", "/members/hpc/head-1", { session: "s1" });
    const first = (await heartbeat(runtime, { groups: [{ group: "hpc" }] })).body["groups"] as Array<{ body: Record<string, unknown> }>;
    const cursor = first[0]?.body["cursor"] as string;
    expect(first[0]?.body).toMatchObject({ group: "hpc", members: [{ member: "head-1", state: "active" }], cursor: expect.any(String) });
    // A renewal moves ages and counts, not what a watcher reacts to.
    await clock.advance(1000);
    await send(runtime, "PUT", "/members/hpc/head-1", { session: "s1" });
    const same = (await heartbeat(runtime, { groups: [{ group: "hpc", since: cursor }] })).body["groups"] as Array<Record<string, unknown>>;
    expect(same[0]).toEqual({ group: "hpc", status: 200, body: { group: "hpc", intervalMs: 1000, timeoutMs: 5000, ttlMs: 15000, cursor, unchanged: true } });
    // A new member changes it.
    await send(runtime, "PUT", "/members/hpc/worker-1", { session: "w1" });
    const changed = (await heartbeat(runtime, { groups: [{ group: "hpc", since: cursor }] })).body["groups"] as Array<{ body: Record<string, unknown> }>;
    expect(changed[0]?.body["unchanged"]).toBeUndefined();
    expect(changed[0]?.body["cursor"]).not.toBe(cursor);
    expect((changed[0]?.body["members"] as unknown[]).length).toBe(2);
    // A member going unreachable changes it too.
    const next = changed[0]?.body["cursor"] as string;
    await clock.advance(5001);
    const stale = (await heartbeat(runtime, { groups: [{ group: "hpc", since: next }] })).body["groups"] as Array<{ body: Record<string, unknown> }>;
    expect(stale[0]?.body["unchanged"]).toBeUndefined();
    expect((stale[0]?.body["members"] as Array<{ state: string }>).map((member) => member.state)).toEqual(["unreachable", "unreachable"]);
  });

  it("a since that is no cursor (not a string, absurdly long) is treated as absent: the listing", async () => {
    const { runtime } = world();
    for (const since of [5, null, "x".repeat(65), ""]) {
      const groups = (await heartbeat(runtime, { groups: [{ group: "hpc", since }] })).body["groups"] as Array<{ status: number; body: Record<string, unknown> }>;
      expect(groups[0]).toMatchObject({ status: 200, body: { members: [], cursor: expect.any(String) } });
    }
  });
});

describe("a bad body is 400 naming the field, and nothing is done", () => {
  const good = { utype: "scheduler", uuid: "a" };
  it.each([
    [{ roles: [good, { utype: "broker", uuid: 3 }] }, /^roles\[1\]\.uuid is required/],
    [{ roles: [good, { utype: "b/x", uuid: "a" }] }, /^roles\[1\]\.utype must be 1–128 characters/],
    [{ roles: [good, { uuid: "a" }] }, /^roles\[1\]\.utype is required/],
    [{ roles: [{ ...good, address: 5 }] }, /^roles\[0\]\.address must be a string/],
    [{ roles: [{ ...good, address: "x".repeat(513) }] }, /^roles\[0\]\.address must be at most 512/],
    [{ roles: [{ ...good, announce: "yes" }] }, /^roles\[0\]\.announce must be true or false/],
    [{ roles: [{ ...good, priority: 1.5 }] }, /^roles\[0\]\.priority must be an integer from -1000000 to 1000000/],
    [{ roles: [{ ...good, preempt: 1 }] }, /^roles\[0\]\.preempt must be true or false/],
    [{ roles: [{ ...good, epoch: 3 }] }, /^Unknown field "epoch" in roles\[0\]: it takes only utype, uuid, address, lease, announce, priority and preempt/],
    [{ roles: [good, "scheduler"] }, /^roles\[1\] must be a JSON object/],
    [{ roles: good }, /^roles must be a list/],
    [{ reads: [{ utype: ".." }] }, /^reads\[0\]\.utype must not be "\." or "\.\."/],
    [{ reads: [{ utype: "broker", standbys: "true" }] }, /^reads\[0\]\.standbys must be true or false/],
    [{ roles: [good], reads: [{ utype: "scheduler" }] }, /^reads\[0\]\.utype: "scheduler" appears twice \(also roles\[0\]\.utype\)/],
    [{ roles: [good, good] }, /^roles\[1\]\.utype: "scheduler" appears twice \(also roles\[0\]\.utype\)/],
    [{ members: [{ group: "hpc", member: "m", session: "" }] }, /^members\[0\]\.session is required/],
    [{ members: [{ group: "hpc", session: "s" }] }, /^members\[0\]\.member is required/],
    [{ members: [{ member: "m", session: "s" }] }, /^members\[0\]\.group is required/],
    [{ members: [{ group: "hpc", member: "m", session: "s", address: "a\nb" }] }, /^members\[0\]\.address must not contain control characters/],
    [
      {
        members: [
          { group: "hpc", member: "m", session: "s" },
          { group: "hpc", member: "m", session: "t" },
        ],
      },
      /^members\[1\]\.member: "hpc\/m" appears twice \(also members\[0\]\.member\)/,
    ],
    [{ groups: [{ group: "hpc" }, { group: "hpc" }] }, /^groups\[1\]\.group: "hpc" appears twice/],
    [{ groups: [{ group: "hpc", watch: true }] }, /^Unknown field "watch" in groups\[0\]/],
    [{ groups: [{}] }, /^groups\[0\]\.group is required/],
    [{ roles: Array.from({ length: 17 }, (_, index) => ({ utype: `r${index}`, uuid: "a" })) }, /^roles has 17 parts; the limit is 16/],
    [
      { roles: Array.from({ length: 16 }, (_, index) => ({ utype: `r${index}`, uuid: "a" })), reads: Array.from({ length: 16 }, (_, index) => ({ utype: `q${index}` })), groups: [{ group: "g" }] },
      /^The body has 33 parts; the limit is 32 in all/,
    ],
    [{}, /^The body has no part/],
    [{ roles: [] }, /^The body has no part/],
    [{ roles: [good], role: [] }, /^Unknown field "role": the body takes only roles, reads, members and groups/],
    ["not json", /^The request body must be a JSON object/],
    [[good], /^The request body must be a JSON object/],
  ])("%j → %s", async (body, message) => {
    const { runtime, leases, members } = world();
    const answer = await heartbeat(runtime, body);
    expect(answer.status).toBe(400);
    expect(answer.body["error"]).toMatchObject({ code: "InvalidRequest", message: expect.stringMatching(message) });
    expect(leases.calls).toEqual([]);
    expect(members.calls).toEqual([]);
  });

  it("a query parameter is refused too", async () => {
    const answer = await send(world().runtime, "POST", "/heartbeat?verbose=1", { roles: [good] });
    expect(answer.status).toBe(400);
    expect(answer.body["error"]).toMatchObject({ message: 'Unknown query parameter "verbose".' });
  });

  it("an encoded body is 415 naming this route's limit, before any store call", async () => {
    const { runtime, leases } = world();
    const answer = await sendWithHeaders(runtime, "POST", "/heartbeat", { roles: [good] }, quiet(), { "content-encoding": "gzip" });
    expect(answer.status).toBe(415);
    expect(answer.body["error"]).toMatchObject({ code: "UnsupportedMediaType", message: expect.stringMatching(/at most 65536 bytes/) });
    expect(leases.calls).toEqual([]);
  });

  it("takes a body over 4 KiB up to 64 KiB (32 parts of long addresses), and refuses one over 64 KiB with 413 before any store call", async () => {
    const { runtime, leases, members } = world();
    const address = "é".repeat(512);
    const roles = Array.from({ length: 16 }, (_, index) => ({ utype: `role-${index}`, uuid: "a", address }));
    const memberParts = Array.from({ length: 16 }, (_, index) => ({ group: "hpc", member: `m-${index}`, session: "s", address }));
    const body = { roles, members: memberParts };
    const size = Buffer.byteLength(JSON.stringify(body));
    expect(size).toBeGreaterThan(4096 * 8);
    expect(size).toBeLessThan(MAX_PARTICIPANT_BODY_BYTES);
    const answer = await heartbeat(runtime, body);
    expect(answer.status).toBe(200);
    expect((answer.body["roles"] as Array<{ status: number }>).map((role) => role.status)).toEqual(Array(16).fill(200));
    leases.reset();
    members.reset();
    const tooLarge = await heartbeat(runtime, { roles: [{ utype: "x", uuid: "a", lease: "t".repeat(MAX_PARTICIPANT_BODY_BYTES) }] });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body["error"]).toMatchObject({ code: "PayloadTooLarge", message: expect.stringMatching(/the limit is 65536/) });
    expect([...leases.calls, ...members.calls]).toEqual([]);
  });
});

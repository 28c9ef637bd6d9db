import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ParticipantHeartbeatBody, PartResult } from "../../shared/contract/participant.js";
import { CorruptedMessageError } from "../../shared/sdk/transport/corrupted-message-error.js";
import { ForbiddenError } from "../../shared/sdk/auth/forbidden-error.js";
import { HaClient } from "../../shared/sdk/transport/ha-client.js";
import type { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";
import { memberAnswer, memberList, memberView } from "../helpers/member-fakes.js";
import { leaseView, primaryView } from "../helpers/sdk-fakes.js";

interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

/** A service stand-in: every request is logged, and answered by `route`. */
describe("HaClient.participantHeartbeat (docs/api.md#participant-heartbeat) against a stand-in service", () => {
  let server: Server;
  let client: HaClient;
  let route: (method: string, url: string, body: unknown) => Reply;
  const seen: string[] = [];
  const bodies: unknown[] = [];

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response) => {
      let text = "";
      request.on("data", (chunk: Buffer) => (text += chunk.toString()));
      request.on("end", () => {
        const body: unknown = text === "" ? undefined : JSON.parse(text);
        seen.push(`${request.method} ${request.url}`);
        bodies.push(body);
        const reply = route(request.method ?? "", request.url ?? "", body);
        response.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
        response.end(JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen.length = 0;
    bodies.length = 0;
    client = new HaClient({ endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`, credential: null });
  });

  const error = (code: string, message: string): { error: { code: string; message: string } } => ({ error: { code, message } });
  const held = { ...error("LeaseHeld", "another holder"), ...leaseView("scheduler", primaryView({ uuid: "other", epoch: 3 })) };
  const accepted = { ...leaseView("scheduler", primaryView({ uuid: "u1", epoch: 4 })), lease: "token-2" };
  const body: ParticipantHeartbeatBody = {
    roles: [{ utype: "scheduler", uuid: "u1", lease: "token-1" }],
    reads: [{ utype: "broker" }],
    members: [{ group: "hpc", member: "head-1", session: "s1", token: "m1" }],
    groups: [{ group: "hpc", since: "c0" }],
  };

  /** A part's answer and the single call's answer to the same status and body read the same. */
  it.each<[string, Reply, (client: HaClient) => Promise<unknown>, (results: Awaited<ReturnType<HaClient["participantHeartbeat"]>>) => PartResult<unknown>]>([
    ["an accepted renewal", { status: 200, body: accepted }, (c) => c.heartbeat("scheduler", { uuid: "u1", lease: "token-1" }), (r) => r.roles[0]!],
    ["a lost lease (409 LeaseHeld)", { status: 409, body: held }, (c) => c.heartbeat("scheduler", { uuid: "u1", lease: "token-1" }), (r) => r.roles[0]!],
    ["a 503 with Retry-After", { status: 503, body: error("StoreUnavailable", "the store did not answer"), headers: { "retry-after": "2" } }, (c) => c.getPrimary("broker"), (r) => r.reads[0]!],
    ["a 403 for a part outside the grants", { status: 403, body: error("Forbidden", "may not hold broker") }, (c) => c.getPrimary("broker"), (r) => r.reads[0]!],
    ["a member held (409 SessionHeld)", { status: 409, body: { ...error("SessionHeld", "still active"), ...memberAnswer("hpc", memberView({ member: "head-1", session: "s0" })) } }, (c) => c.memberHeartbeat("hpc", "head-1", { session: "s1", token: "m1" }), (r) => r.members[0]!],
    ["a listing", { status: 200, body: memberList("hpc", [memberView({ member: "head-1", session: "s1" })]) }, (c) => c.listMembers("hpc"), (r) => r.groups[0]!],
  ])("reads %s as the single call does", async (_name, reply, single, pick) => {
    // The same status and body as each part's answer (a listing gets its cursor).
    const wrap = (part: Reply): Reply => {
      const retryAfter = part.headers?.["retry-after"];
      const entry = { status: part.status, body: part.body, ...(retryAfter === undefined ? {} : { retryAfter: Number(retryAfter) }) };
      const listing = part.status === 200 && typeof part.body === "object" && part.body !== null && "members" in part.body;
      return {
        status: 200,
        body: {
          roles: [{ utype: "scheduler", ...entry }],
          reads: [{ utype: "broker", ...entry }],
          members: [{ group: "hpc", member: "head-1", ...entry }],
          groups: [{ group: "hpc", ...(listing ? { status: 200, body: { ...(part.body as object), cursor: "c1" } } : entry) }],
        },
      };
    };
    route = (method) => (method === "POST" ? wrap(reply) : reply);
    const results = await client.participantHeartbeat(body);
    const part = pick(results);
    const alone: PartResult<unknown> = await single(client).then(
      (value) => ({ ok: true as const, value }),
      (thrown: unknown) => ({ ok: false as const, error: thrown }),
    );
    expect(seen).toEqual(["POST /api/heartbeat", expect.stringMatching(/^(GET|PUT) \/api\/(primary|members)\//)]);
    if (alone.ok) {
      expect(part.ok).toBe(true);
      const value = part.ok ? part.value : undefined;
      // A group part's listing carries its cursor besides.
      expect(value).toEqual(typeof value === "object" && value !== null && "cursor" in value ? { ...(alone.value as object), cursor: "c1" } : alone.value);
    } else {
      expect(part.ok).toBe(false);
      const [a, b] = [(part as { error: Error }).error, alone.error as Error];
      expect(a.constructor).toBe(b.constructor);
      expect(a.message).toBe(b.message);
      expect((a as HaRequestError).retryAfterMs).toBe((b as HaRequestError).retryAfterMs);
    }
  });

  it("sends the parts as the wire says, and reads every kind of part at once: accepted, 503 with Retry-After, held, unchanged", async () => {
    route = () => ({
      status: 200,
      body: {
        roles: [{ utype: "scheduler", status: 200, body: accepted }],
        reads: [{ utype: "broker", status: 503, body: error("Overloaded", "too busy"), retryAfter: 2 }],
        members: [{ group: "hpc", member: "head-1", status: 403, body: error("Forbidden", "may not join hpc") }],
        groups: [{ group: "hpc", status: 200, body: { group: "hpc", intervalMs: 200, timeoutMs: 1000, ttlMs: 3000, cursor: "c0", unchanged: true } }],
      },
    });
    const results = await client.participantHeartbeat(body);
    expect(seen).toEqual(["POST /api/heartbeat"]);
    expect(bodies[0]).toEqual(body);
    expect(results.roles[0]).toEqual({ ok: true, value: { outcome: "accepted", view: leaseView("scheduler", primaryView({ uuid: "u1", epoch: 4 })), lease: "token-2" } });
    const read = results.reads[0]!;
    expect(read.ok).toBe(false);
    expect((read as { error: HaRequestError }).error).toMatchObject({ status: 503, code: "Overloaded", retryAfterMs: 2000, message: "GetPrimary(broker): 503 Overloaded: too busy" });
    expect((results.members[0] as { error: unknown }).error).toBeInstanceOf(ForbiddenError);
    expect(results.groups[0]).toEqual({ ok: true, value: { group: "hpc", intervalMs: 200, timeoutMs: 1000, ttlMs: 3000, cursor: "c0", unchanged: true } });
  });

  it.each([
    ["a missing part", { roles: [], reads: [{ utype: "broker", status: 200, body: leaseView("broker", null) }] }, /1 roles asked, 0 answered/],
    ["parts in another order", { reads: [{ utype: "b", status: 200, body: leaseView("b", null) }, { utype: "a", status: 200, body: leaseView("a", null) }] }, /reads\[0\] answers utype "b", asked utype "a"/],
    ["a status that is none", { reads: [{ utype: "a", status: "ok" }, { utype: "b", status: 200 }] }, /reads\[0\]\.status must be an HTTP status/],
    ["not an object", [], /the body is not a JSON object/],
  ])("refuses an answer with %s as a corrupted message: no part is trusted", async (_name, answer, problem) => {
    route = () => ({ status: 200, body: answer });
    const asked: ParticipantHeartbeatBody = _name === "a missing part" ? { roles: [{ utype: "s", uuid: "u" }], reads: [{ utype: "broker" }] } : { reads: [{ utype: "a" }, { utype: "b" }] };
    const failed = client.participantHeartbeat(asked);
    await expect(failed).rejects.toBeInstanceOf(CorruptedMessageError);
    await expect(failed).rejects.toThrow(problem);
  });

  it("a whole request refused is thrown (503 without parts), named ParticipantHeartbeat", async () => {
    route = () => ({ status: 503, body: error("Misconfigured", "no store"), headers: { "retry-after": "5" } });
    await expect(client.participantHeartbeat({ reads: [{ utype: "a" }] })).rejects.toMatchObject({ status: 503, retryAfterMs: 5000, message: "ParticipantHeartbeat: 503 Misconfigured: no store" });
  });

  it("a service without the route (404) is asked part by part through the single routes, from then on without trying it again", async () => {
    route = (method, url) => {
      if (url === "/api/heartbeat") return { status: 404, body: error("NotFound", "no such route") };
      if (url === "/api/primary/a") return { status: 200, body: leaseView("a", null) };
      return { status: 200, body: memberList("hpc", []) };
    };
    const asked: ParticipantHeartbeatBody = { reads: [{ utype: "a" }], groups: [{ group: "hpc", since: "c9" }] };
    const first = await client.participantHeartbeat(asked);
    expect(first.reads[0]).toEqual({ ok: true, value: leaseView("a", null) });
    // A listing through its own route has no cursor: the next poll sends none.
    expect(first.groups[0]).toEqual({ ok: true, value: { ...memberList("hpc", []), cursor: "" } });
    const second = await client.participantHeartbeat(asked);
    expect(second).toEqual(first);
    expect(seen.filter((line) => line === "POST /api/heartbeat")).toEqual(["POST /api/heartbeat"]);
    expect(seen.filter((line) => line !== "POST /api/heartbeat").sort()).toEqual(["GET /api/members/hpc", "GET /api/members/hpc", "GET /api/primary/a", "GET /api/primary/a"]);
  });

  it("checks the parts before sending, naming the field", async () => {
    await expect(client.participantHeartbeat({ roles: [{ utype: "a b", uuid: "u" }] })).rejects.toThrow(/`utype`/);
    await expect(client.participantHeartbeat({})).rejects.toThrow(/at least one part/);
    expect(seen).toEqual([]);
  });
});

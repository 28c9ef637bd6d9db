import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operations } from "../../functions/routes.js";
import { startLocalHost, type LocalHost } from "../../shared/host/local-host.js";
import { createRuntime } from "../../shared/http/runtime.js";
import { CorruptedMessageError } from "../../shared/sdk/transport/corrupted-message-error.js";
import { HaClient } from "../../shared/sdk/transport/ha-client.js";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { MemoryMemberStore } from "../../shared/store/members-memory-store.js";

const timing = { intervalMs: 200, timeoutMs: 1500, ttlMs: 4500 };

describe("HaClient's membership calls against the real service", () => {
  let host: LocalHost;
  let client: HaClient;
  beforeAll(async () => {
    const runtime = createRuntime({ timing: { intervalMs: 200, timeoutMs: 1500 }, storeTimeoutMs: 2000, leaseSecret: undefined }, { leases: new MemoryLeaseStore(), members: new MemoryMemberStore() });
    host = await startLocalHost({ operations, runtime: async () => runtime, port: 0, log: () => undefined });
    client = new HaClient({ endpoint: host.url });
  });
  afterAll(() => host.close());

  it("joins, renews with the token, refuses a second session (held), says goodbye, and refuses the ended session", async () => {
    const joined = await client.memberHeartbeat("grp", "node-1", { session: "s1", address: "10.0.0.1:80" });
    if (joined.outcome !== "accepted") throw new Error(joined.outcome);
    expect(joined.answer).toMatchObject({ group: "grp", member: { member: "node-1", session: "s1", state: "joining", address: "10.0.0.1:80" }, ...timing });
    const renewed = await client.memberHeartbeat("grp", "node-1", { session: "s1", token: joined.token });
    expect(renewed).toMatchObject({ outcome: "accepted", answer: { member: { state: "active", heartbeats: 2 } } });
    expect(await client.memberHeartbeat("grp", "node-1", { session: "s2" })).toMatchObject({ outcome: "held", answer: { member: { session: "s1" } } });
    expect(await client.leaveGroup("grp", "node-1", "s2")).toMatchObject({ outcome: "held" });
    expect(await client.leaveGroup("grp", "node-1", "s1")).toMatchObject({ outcome: "left", answer: { member: { state: "leaving" } } });
    expect(await client.memberHeartbeat("grp", "node-1", { session: "s1" })).toMatchObject({ outcome: "ended" });
    expect(await client.leaveGroup("grp", "nobody", "s1")).toEqual({ outcome: "left", answer: { group: "grp", member: null, ...timing } });
    expect(await client.listMembers("grp")).toEqual({ group: "grp", members: [expect.objectContaining({ member: "node-1", state: "leaving" })], ...timing });
    expect(await client.listGroups()).toEqual({ groups: [{ group: "grp", members: { joining: 0, active: 0, unreachable: 0, leaving: 1 } }] });
  });

  it("refuses bad ids before sending, naming them", async () => {
    await expect(client.memberHeartbeat("a b", "m", { session: "s" })).rejects.toThrow(/`group`/);
    await expect(client.leaveGroup("g", "m", "")).rejects.toThrow(/`session`/);
  });
});

describe("HaClient's membership calls against a service that answers wrongly", () => {
  let server: Server;
  let client: HaClient;
  let answer: { status: number; body: unknown } = { status: 200, body: {} };
  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      response.writeHead(answer.status, { "content-type": "application/json" });
      response.end(JSON.stringify(answer.body));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    client = new HaClient({ endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api` });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const view = { member: "m", session: "s", address: null, state: "active", joinedAt: "2026-11-22T00:00:00Z", renewedAt: "2026-11-22T00:00:00Z", leftAt: null, heartbeats: 2, ageMs: 5, previous: null };

  it.each([
    ["another group", { group: "other", member: view, ...timing, token: "t" }, /asked about group "g"/],
    ["another member", { group: "g", member: { ...view, member: "x" }, ...timing, token: "t" }, /asked about member "m"/],
    ["another session accepted", { group: "g", member: { ...view, session: "x" }, ...timing, token: "t" }, /names another session/],
    ["no token", { group: "g", member: view, ...timing }, /no token/],
    ["an unknown state", { group: "g", member: { ...view, state: "zombie" }, ...timing, token: "t" }, /member.state/],
    ["a ttl not above T", { group: "g", member: view, ...timing, ttlMs: 1500, token: "t" }, /ttlMs > timeoutMs/],
  ])("an accepted heartbeat naming %s is a CorruptedMessageError", async (_name, body, message) => {
    answer = { status: 200, body };
    const error = await client.memberHeartbeat("g", "m", { session: "s" }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CorruptedMessageError);
    expect((error as Error).message).toMatch(message);
  });

  it("a 409 with a code it does not know is a refusal, not an outcome", async () => {
    answer = { status: 409, body: { error: { code: "LeaseHeld", message: "no" }, group: "g", member: view, ...timing } };
    await expect(client.memberHeartbeat("g", "m", { session: "s" })).rejects.toBeInstanceOf(HaRequestError);
  });
});

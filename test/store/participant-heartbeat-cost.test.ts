/**
 * A participant heartbeat costs the store exactly what its parts cost as single requests
 * (docs/api.md#participant-heartbeat): for a steady-state participant with 3 roles (each
 * renewed with its token), a member heartbeat (with its token) and a group poll, 3 writes,
 * 1 write and 1 query, counted on the wire on Azurite and the Cosmos emulator, and by
 * method on the memory store. The saving is in requests, never in store operations.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { LeaseStore } from "../../shared/lease/lease-store.js";
import type { MemberStore } from "../../shared/members/member-store.js";
import { createRuntime, type Runtime } from "../../shared/http/runtime.js";
import { MemoryMemberStore } from "../../shared/store/members-memory-store.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { createFreshMemberTableStore, createFreshTableStore } from "../helpers/azurite.js";
import { CountingMemberStore } from "../helpers/counting-member-store.js";
import { CountingStore } from "../helpers/counting-store.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { send, WALL_START } from "../helpers/route-requests.js";
import { storesOnTheWire } from "../helpers/wire-counts.js";

const ROLES = ["scheduler", "broker", "session"];

interface Costs {
  /** The five single requests: 3 × PUT /primary/{utype}, PUT /members/hpc/head-1, GET /members/hpc. */
  readonly singles: number;
  /** The same five as one POST /api/heartbeat. */
  readonly participant: number;
}

/** Steady state (3 roles held, the member active, every token in hand); then the five parts alone, and together. */
async function participantCosts(leases: LeaseStore, members: MemberStore, requests: () => number): Promise<Costs> {
  const clock = new FakeClock(WALL_START);
  const runtime: Runtime = createRuntime({ timing: { intervalMs: 1000, timeoutMs: 5000 }, storeTimeoutMs: 10_000, leaseSecret: "a-test-secret-that-is-long-enough-for-hmac" }, { leases, members, clock });
  const tokens = new Map<string, string>();
  const renew = async (): Promise<void> => {
    for (const utype of ROLES) {
      const answer = await send(runtime, "PUT", `/primary/${utype}`, { uuid: "head-1", lease: tokens.get(utype) });
      expect(answer.status).toBe(200);
      tokens.set(utype, answer.body["lease"] as string);
    }
    const member = await send(runtime, "PUT", "/members/hpc/head-1", { session: "s1", token: tokens.get("member") });
    expect(member.status).toBe(200);
    tokens.set("member", member.body["token"] as string);
  };
  await renew();
  await clock.advance(1000);
  await renew();
  await clock.advance(1000);

  const before = requests();
  await renew();
  expect((await send(runtime, "GET", "/members/hpc")).body["members"]).toHaveLength(1);
  const singles = requests() - before;
  await clock.advance(1000);

  const start = requests();
  const answer = await send(runtime, "POST", "/heartbeat", {
    roles: ROLES.map((utype) => ({ utype, uuid: "head-1", lease: tokens.get(utype) })),
    members: [{ group: "hpc", member: "head-1", session: "s1", token: tokens.get("member") }],
    groups: [{ group: "hpc" }],
  });
  const participant = requests() - start;
  expect(answer.status).toBe(200);
  expect([...(answer.body["roles"] as Array<{ status: number }>), ...(answer.body["members"] as Array<{ status: number }>), ...(answer.body["groups"] as Array<{ status: number }>)].map((part) => part.status)).toEqual([200, 200, 200, 200, 200]);
  return { singles, participant };
}

describe("a participant heartbeat costs the store what its parts cost alone", () => {
  const wire = storesOnTheWire();
  afterAll(() => wire.close());

  it("on the memory store: 3 renewals, 1 member renewal, 1 group listing, alone and together", async () => {
    const leases = new CountingStore(new MemoryLeaseStore());
    const members = new CountingMemberStore(new MemoryMemberStore());
    const costs = await participantCosts(leases, members, () => leases.calls.length + members.calls.length);
    expect(costs).toEqual({ singles: 5, participant: 5 });
    // The participant's own five, by method.
    expect([...leases.calls.slice(-3)]).toEqual(["renew", "renew", "renew"]);
    expect([...members.calls.slice(-2)].sort()).toEqual(["listGroup", "renew"]);
  });

  it("on Azure Table Storage (Azurite): five requests alone, five together", async () => {
    const { azurite, requests } = await wire.table();
    const costs = await participantCosts(await createFreshTableStore(azurite), await createFreshMemberTableStore(azurite), requests);
    console.log(`Table (Azurite) requests: ${JSON.stringify(costs)}`);
    expect(costs).toEqual({ singles: 5, participant: 5 });
  });

  it("on Azure Cosmos DB (the emulator): the same document requests alone and together (4 writes and the group's query)", async () => {
    const { configured, requests } = await wire.cosmos();
    const costs = await participantCosts(configured.store, configured.members, requests);
    console.log(`Cosmos (emulator) document requests: ${JSON.stringify(costs)}`);
    // The group's query is a feed read of its partition: the SDK may need one more request to see its last page.
    expect(costs.singles).toSatisfy((n: number) => n === 5 || n === 6);
    expect(costs.participant).toBe(costs.singles);
  });
});

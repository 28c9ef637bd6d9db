import { afterAll, describe, expect, it } from "vitest";
import { MemberService } from "../../shared/members/member-service.js";
import type { MemberStore } from "../../shared/members/member-store.js";
import { MemberTokenSigner } from "../../shared/members/member-token.js";
import { defaultMembershipRules } from "../../shared/members/membership-rules.js";
import { createFreshMemberTableStore } from "../helpers/azurite.js";
import { storesOnTheWire } from "../helpers/wire-counts.js";

const HEARTBEATS = 20;

/**
 * The cost of a steady-state member heartbeat counted on the wire, per store: the requests
 * that reach Azurite (through a counting proxy) and the document requests that reach the
 * Cosmos emulator, for HEARTBEATS heartbeats that each present the last answer's token.
 */
async function steadyHeartbeats(store: MemberStore, requests: () => number): Promise<{ join: number; perHeartbeat: number }> {
  const service = new MemberService({ store, clock: { now: () => Date.now() }, rules: defaultMembershipRules({ intervalMs: 1000, timeoutMs: 5000 }), tokens: new MemberTokenSigner(), storeTimeoutMs: 5000 });
  const before = requests();
  let result = await service.heartbeat({ group: "cost", member: "node-1", session: "s1" });
  const join = requests() - before;
  const steady = requests();
  for (let n = 0; n < HEARTBEATS; n += 1) {
    if (result.outcome !== "accepted") throw new Error(result.outcome);
    result = await service.heartbeat({ group: "cost", member: "node-1", session: "s1", token: result.token });
  }
  expect(result).toMatchObject({ outcome: "accepted", answer: { member: { heartbeats: HEARTBEATS + 1, state: "active" } } });
  return { join, perHeartbeat: (requests() - steady) / HEARTBEATS };
}

describe("a steady-state member heartbeat costs one store request, counted on the wire", () => {
  const wire = storesOnTheWire();
  afterAll(() => wire.close());

  it("on Azure Table Storage (Azurite): one Merge", async () => {
    const { azurite, requests } = await wire.table();
    const cost = await steadyHeartbeats(await createFreshMemberTableStore(azurite), requests);
    console.log(`Table (Azurite): join ${cost.join} requests, steady heartbeat ${cost.perHeartbeat} request(s) each over ${HEARTBEATS}`);
    expect(cost).toEqual({ join: 2, perHeartbeat: 1 });
  });

  it("on Azure Cosmos DB (the emulator): one Patch", async () => {
    const { configured, requests } = await wire.cosmos();
    const cost = await steadyHeartbeats(configured.members, requests);
    console.log(`Cosmos (emulator): join ${cost.join} document requests, steady heartbeat ${cost.perHeartbeat} request(s) each over ${HEARTBEATS}`);
    // A join is the slow path: the partition query (the SDK may need a second request to see its last page) and the create.
    expect(cost.perHeartbeat).toBe(1);
    expect(cost.join).toBeLessThanOrEqual(3);
  });

  it("on PostgreSQL: one conditional UPDATE", async () => {
    const { configured, requests } = await wire.postgres();
    const cost = await steadyHeartbeats(configured.members, requests);
    console.log(`PostgreSQL: join ${cost.join} statements, steady heartbeat ${cost.perHeartbeat} statement(s) each over ${HEARTBEATS}`);
    expect(cost).toEqual({ join: 2, perHeartbeat: 1 });
  });
});

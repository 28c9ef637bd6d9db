import { afterEach, describe, expect, it } from "vitest";
import { operations } from "../../functions/routes.js";
import { startLocalHost, type LocalHost } from "../../shared/host/local-host.js";
import { createRuntime } from "../../shared/http/runtime.js";
import { HaClient } from "../../shared/sdk/transport/ha-client.js";
import type { MemberEvent } from "../../shared/sdk/membership/members-watcher.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { MemoryMemberStore } from "../../shared/store/members-memory-store.js";
import { ScriptedTransport } from "../helpers/sdk-fakes.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { waitUntil } from "../helpers/sdk-cli-process.js";

describe("PrimaryElector's membership option: the leader and the members from one object", () => {
  let host: LocalHost | undefined;
  afterEach(async () => host?.close());

  it("joins the utype's group as it competes, watches it, and says goodbye after releasing the lease on stop()", async () => {
    const runtime = createRuntime({ timing: { intervalMs: 100, timeoutMs: 500 }, storeTimeoutMs: 2000, leaseSecret: undefined, members: { ttlMs: 1500, retentionMs: 1500, maxPerGroup: 10, sweepSchedule: "* * * * * *", sweepPeriodMs: 1000 } }, { leases: new MemoryLeaseStore(), members: new MemoryMemberStore() });
    host = await startLocalHost({ operations, runtime: async () => runtime, port: 0, log: () => undefined });
    const elector = new PrimaryElector({ utype: "svc", endpoint: host.url, address: "10.0.0.4:5800", membership: { member: "node-1" } });
    const joined: MemberEvent[] = [];
    elector.membership!.watcher.on("memberJoined", (event) => void joined.push(event));
    let elected = false;
    elector.on("elected", () => (elected = true));
    elector.start();
    await waitUntil(() => elected && joined.length > 0, "elected and seen joining its own group");
    expect(elector.membership!.group).toBe("svc");
    expect(joined[0]).toMatchObject({ group: "svc", member: "node-1", address: "10.0.0.4:5800", session: elector.membership!.session.session });
    expect(elector.membership!.members().map((member) => member.member)).toEqual(["node-1"]);
    await elector.stop();
    const client = new HaClient({ endpoint: host.url });
    expect((await client.getPrimary("svc")).primary).toBeNull();
    expect((await client.listMembers("svc")).members).toEqual([expect.objectContaining({ member: "node-1", state: "leaving", leftAt: expect.any(String) })]);
  });

  it("takes the group from the option, and refuses a transport that cannot do membership", () => {
    const clock = new FakeClock(0);
    const client = new HaClient({ endpoint: "http://127.0.0.1:9/api" });
    expect(new PrimaryElector({ utype: "svc", transport: client, clock, membership: { member: "n", group: "cluster" } }).membership?.group).toBe("cluster");
    expect(() => new PrimaryElector({ utype: "svc", transport: new ScriptedTransport(clock), clock, membership: { member: "n" } })).toThrow(/MembersTransport/);
    expect(() => new PrimaryElector({ utype: "svc", transport: client, clock, membership: { member: "a b" } })).toThrow(/`membership.member`/);
    expect(() => new PrimaryElector({ utype: "svc", transport: client, clock, membership: "n" as never })).toThrow('Expected `membership` to be an object such as { member: "node-1" }.');
    expect(new PrimaryElector({ utype: "svc", transport: client, clock }).membership).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import type { HeartbeatResult } from "../../shared/sdk/index.js";
import { PrimaryElector } from "../../shared/sdk/election/primary-elector.js";
import { FakeClock, settle } from "../helpers/fake-clock.js";
import { leaseView, primaryView, ScriptedTransport, T } from "../helpers/sdk-fakes.js";

const accepted = (utype: string, uuid: string): HeartbeatResult => ({
  outcome: "accepted",
  view: leaseView(utype, primaryView({ uuid, epoch: 1, expiresInMs: T })),
  lease: `token-${utype}`,
});

/**
 * The renewal budget's round-trip estimate belongs to the transport, not to one elector
 * (docs/protocol.md#timing-rules): every elector on one HaClient learns from every answer,
 * so a service that has turned slow is followed at once by primaries that have not yet seen
 * a slow answer of their own, instead of each sending copies after the floor.
 */
describe("electors on one transport share the renewal budget's estimate", () => {
  it("a primary whose own answers were fast waits as long as the slow answers seen by another elector on its transport say", async () => {
    const clock = new FakeClock();
    const transport = new ScriptedTransport(clock);
    const slow = new PrimaryElector({ utype: "a", transport, clock, announce: false, random: () => 0, newUuid: () => "uuid-a" }).start();
    const fast = new PrimaryElector({ utype: "b", transport, clock, announce: false, random: () => 0, newUuid: () => "uuid-b" }).start();
    await clock.advance(0);
    transport.take("getPrimary", "a").respond(leaseView("a", null));
    transport.take("getPrimary", "b").respond(leaseView("b", null));
    await clock.advance(0);
    const acquireA = transport.take("heartbeat", "a");
    const acquireB = transport.take("heartbeat", "b");
    // b's acquire is answered at once; a's 900 ms later: the service has turned slow.
    acquireB.respond(accepted("b", "uuid-b"));
    await settle();
    await clock.advance(900);
    acquireA.respond(accepted("a", "uuid-a"));
    await settle();
    expect([slow.isPrimary(), fast.isPrimary()]).toEqual([true, true]);
    // b renews I after its acquire and gets no answer.
    await clock.advance(100);
    const renewals = (): number => transport.all.filter((call) => call.method === "heartbeat" && call.utype === "b" && call.request?.lease !== undefined).length;
    expect(renewals()).toBe(1);
    // Alone, b's estimate (one answer of 0 ms) would send a copy after the floor, (T − 2I)/8 = 375 ms.
    await clock.advance(400);
    expect(renewals()).toBe(1);
    // The shared samples (0 and 900 ms) hold a round trip over the floor: the service is
    // queueing, so the budget is the maximum, max(I, (T − I)/2) = 2000 ms, and the copy goes then.
    await clock.advance(1599);
    expect(renewals()).toBe(1);
    await clock.advance(1);
    expect(renewals()).toBe(2);
    await Promise.all([slow.stop(), fast.stop()].map((stopping) => Promise.race([stopping, clock.advance(T)])));
  });

  it("a copy's budget is read again when it passes: a slow answer to another elector meanwhile makes it wait for the maximum, not join the queue", async () => {
    const clock = new FakeClock(0);
    const transport = new ScriptedTransport(clock);
    const a = new PrimaryElector({ utype: "a", transport, clock, announce: false, random: () => 0, newUuid: () => "uuid-a" }).start();
    await clock.advance(0);
    transport.take("getPrimary", "a").respond(leaseView("a", null));
    await clock.advance(0);
    transport.take("heartbeat", "a").respond(accepted("a", "uuid-a"));
    await clock.advance(300);
    const b = new PrimaryElector({ utype: "b", transport, clock, announce: false, random: () => 0, newUuid: () => "uuid-b" }).start();
    await clock.advance(0);
    transport.take("getPrimary", "b").respond(leaseView("b", null));
    await clock.advance(0);
    transport.take("heartbeat", "b").respond(accepted("b", "uuid-b"));
    await settle();
    expect([a.isPrimary(), b.isPrimary()]).toEqual([true, true]);
    const copiesOf = (utype: string): number[] => transport.all.filter((call) => call.method === "heartbeat" && call.utype === utype && call.request?.lease !== undefined).map((call) => call.sentAt);
    // a renews at 1000 and b at 1300, with the floor (T − 2I)/8 = 375 ms as their budget (fast answers so far).
    await clock.advance(1000 - clock.now());
    const renewalA = transport.take("heartbeat", "a");
    await clock.advance(300);
    transport.take("heartbeat", "b");
    // a's renewal is answered at 1500, after 500 ms (its copy went at 1375): over the floor, so the service is queueing.
    await clock.advance(200);
    renewalA.respond(accepted("a", "uuid-a"));
    await settle();
    expect(transport.takeCutOffCopies()).toBe(1);
    // b's floor passes at 1675: its budget is now the maximum, 2000 ms, and the copy waits for it.
    await clock.advance(1799);
    expect(copiesOf("b")).toEqual([1300]);
    await clock.advance(1);
    expect(copiesOf("b")).toEqual([1300, 3300]);
    await Promise.all([a.stop(), b.stop()].map((stopping) => Promise.race([stopping, clock.advance(T)])));
  });
});

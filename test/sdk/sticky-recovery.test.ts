import { describe, expect, it } from "vitest";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";
import { ForbiddenError } from "../../shared/sdk/auth/forbidden-error.js";
import { UnauthorizedError } from "../../shared/sdk/auth/unauthorized-error.js";
import { isOutage } from "../../shared/sdk/loop/poll-delays.js";
import { CorruptedMessageError } from "../../shared/sdk/transport/corrupted-message-error.js";
import { EndpointNotFoundError } from "../../shared/sdk/transport/endpoint-not-found-error.js";
import type { HeartbeatResult, LeaseView, ReleaseResult } from "../../shared/sdk/index.js";
import { PrimaryElector, type ElectorEvents, type PrimaryElectorOptions } from "../../shared/sdk/election/primary-elector.js";
import { I, T, leaseView, primaryView, ScriptedTransport, type PendingCall } from "../helpers/sdk-fakes.js";
import { FakeClock, settle } from "../helpers/fake-clock.js";

/**
 * Sticky recovery (docs/protocol.md#sticky-recovery) on the injected clock: when the service
 * was out for everyone, the role goes back to the participant that held it, and a standby
 * that lost contact (two failed calls in a row while the holder renewed) holds back for
 * max(its last failed call + T, its next answer + 2·I) so that the holder finds the service
 * first; a lost message holds back less or nothing (contact-hold-back.test.ts has the whole
 * table); a holder cut off alone is still replaced at T.
 */

const UTYPE = "scheduler";
const down = (): HaRequestError => new HaRequestError("503 StoreUnavailable", "StoreUnavailable", 503);

type Recorded = { [E in keyof ElectorEvents]: { event: E; at: number; payload: ElectorEvents[E] } }[keyof ElectorEvents];

function setup(options: Partial<PrimaryElectorOptions> = {}) {
  const clock = new FakeClock();
  const transport = new ScriptedTransport(clock);
  let counter = 0;
  const elector = new PrimaryElector({ utype: UTYPE, transport, clock, newUuid: () => `uuid-${++counter}`, random: () => 0, announce: false, ...options });
  const events: Recorded[] = [];
  for (const event of ["elected", "demoted", "primaryChanged"] as const) {
    elector.on(event, (payload: unknown) => void events.push({ event, at: clock.now(), payload } as Recorded));
  }
  elector.on("error", () => undefined);
  const answer = async (call: PendingCall, value: LeaseView | HeartbeatResult | ReleaseResult): Promise<void> => {
    call.respond(value);
    await settle();
  };
  const accepted = (uuid: string, epoch: number): HeartbeatResult => ({
    outcome: "accepted",
    view: leaseView(UTYPE, primaryView({ uuid, epoch, expiresInMs: T })),
    lease: `token-${uuid}-${epoch}`,
  });
  /** Fails every call still open, as an outage does, until the clock reaches `until`. */
  const outageUntil = async (until: number): Promise<void> => {
    while (clock.now() < until) {
      for (const call of transport.all) if (!call.settled) call.fail(down());
      await clock.advance(Math.min(10, until - clock.now()));
    }
    for (const call of transport.all) if (!call.settled) call.fail(down());
    await settle();
  };
  const electedEvents = () => events.filter((e) => e.event === "elected").map((e) => e.payload as ElectorEvents["elected"]);
  return { clock, transport, elector, events, answer, accepted, outageUntil, electedEvents };
}

describe("sticky recovery: the holder takes its role back after an outage for everyone", () => {
  it("a holder whose renewals got no answer looks every I and, at its first answer, takes the role back under a new uuid and epoch", async () => {
    const { clock, transport, elector, answer, accepted, outageUntil, electedEvents, events } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
    const acquire = transport.take("heartbeat");
    await answer(acquire, accepted("uuid-1", 4));
    const deadline = acquire.sentAt + T - I;
    // The service goes away for 3·T: every renewal, then every look, fails.
    await outageUntil(acquire.sentAt + 3 * T);
    expect(elector.isPrimary()).toBe(false);
    expect(events.filter((e) => e.event === "demoted").map((e) => [e.at, e.payload])).toEqual([[deadline, { reason: "lease-expired", uuid: "uuid-1", epoch: 4 }]]);
    // Looks at its deadline and every I after it (U = 0): none backed off.
    const looks = transport.all.filter((call) => call.method === "getPrimary" && call.sentAt >= deadline).map((call) => call.sentAt - deadline);
    expect(looks).toEqual(Array.from({ length: looks.length }, (_, n) => n * I));
    expect(looks.length).toBe(Math.floor((3 * T - (T - I)) / I) + 1);
    // Back: the next look shows the role vacant, its last term ours (epoch 4).
    await clock.advance(I);
    const back = transport.all.find((call) => !call.settled)!;
    expect(back.method).toBe("getPrimary");
    await answer(back, leaseView(UTYPE, null, undefined, 4));
    // At once, not after a hold-back: the role was this process's.
    const reclaim = transport.all.find((call) => !call.settled)!;
    expect(reclaim.method).toBe("heartbeat");
    expect(reclaim.sentAt).toBe(back.sentAt);
    expect(reclaim.request).toEqual({ uuid: "uuid-2", address: null });
    await answer(reclaim, accepted("uuid-2", 5));
    expect(elector.isPrimary()).toBe(true);
    // A new epoch: the work stopped at the deadline never resumes under the old one.
    expect(electedEvents().map(({ uuid, epoch }) => [uuid, epoch])).toEqual([
      ["uuid-1", 4],
      ["uuid-2", 5],
    ]);
  });

  it("renewals refused until the deadline (a 401: a key rotated) count as failed too: nothing is released, and the ex-holder takes the role back once answered, if nobody took it", async () => {
    const { clock, transport, elector, answer, accepted, electedEvents } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
    const acquire = transport.take("heartbeat");
    await answer(acquire, accepted("uuid-1", 4));
    const deadline = acquire.sentAt + T - I;
    const refused = (): Error => new UnauthorizedError("UpdateHeartBeat(scheduler)", "http://127.0.0.1:7071/api", undefined);
    while (clock.now() < deadline + 2 * I) {
      for (const call of transport.all) if (!call.settled) call.fail(refused());
      await clock.advance(10);
    }
    expect(elector.isPrimary()).toBe(false);
    expect(transport.all.filter((call) => call.method === "release")).toEqual([]);
    // The key works again: the look shows the role vacant at its last term's epoch.
    while (transport.all.every((call) => call.settled)) await clock.advance(10);
    const look = transport.all.find((call) => !call.settled)!;
    expect(look.method).toBe("getPrimary");
    await answer(look, leaseView(UTYPE, null, undefined, 4));
    const reclaim = transport.all.find((call) => !call.settled)!;
    expect([reclaim.method, reclaim.sentAt, reclaim.request]).toEqual(["heartbeat", look.sentAt, { uuid: "uuid-2", address: null }]);
    await answer(reclaim, accepted("uuid-2", 5));
    expect(electedEvents().map(({ uuid, epoch }) => [uuid, epoch])).toEqual([
      ["uuid-1", 4],
      ["uuid-2", 5],
    ]);
  });

  it("an ex-holder that finds its old lease still live (a renewal landed as its term ended) releases it with its token and takes the role back at once, lost contact or not", async () => {
    const { clock, transport, elector, answer, accepted, outageUntil } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
    const acquire = transport.take("heartbeat");
    await answer(acquire, accepted("uuid-1", 2));
    await outageUntil(acquire.sentAt + T - I + 1);
    expect(elector.uuid).toBe("uuid-2");
    await clock.advance(I - 1);
    const look = transport.all.find((call) => !call.settled)!;
    // The old lease is live for another 4 s: a copy of the last renewal landed just before the deadline.
    await answer(look, leaseView(UTYPE, primaryView({ uuid: "uuid-1", epoch: 2, expiresInMs: 4000 })));
    const release = transport.all.find((call) => !call.settled)!;
    expect([release.method, release.uuid, release.options.lease, release.sentAt]).toEqual(["release", "uuid-1", "token-uuid-1-2", look.sentAt]);
    await answer(release, { outcome: "released", view: leaseView(UTYPE, null, undefined, 2) });
    const reclaim = transport.all.find((call) => !call.settled)!;
    expect([reclaim.method, reclaim.request, reclaim.sentAt]).toEqual(["heartbeat", { uuid: "uuid-2", address: null }, look.sentAt]);
    await answer(reclaim, accepted("uuid-2", 3));
    expect(elector.epoch).toBe(3);
  });

  it("…and the same when its acquire is refused by that lease (one instance saw it expired, the next did not): found by the simulation", async () => {
    const { clock, transport, elector, answer, accepted, outageUntil } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
    const acquire = transport.take("heartbeat");
    await answer(acquire, accepted("uuid-1", 2));
    await outageUntil(acquire.sentAt + T - I + 1);
    await clock.advance(I - 1);
    await answer(transport.all.find((call) => !call.settled)!, leaseView(UTYPE, null, undefined, 2));
    const refused = transport.all.find((call) => !call.settled)!;
    expect([refused.method, refused.request?.uuid]).toEqual(["heartbeat", "uuid-2"]);
    await answer(refused, { outcome: "held", view: leaseView(UTYPE, primaryView({ uuid: "uuid-1", epoch: 2, expiresInMs: 150 })) });
    const release = transport.all.find((call) => !call.settled)!;
    expect([release.method, release.uuid, release.options.lease]).toEqual(["release", "uuid-1", "token-uuid-1-2"]);
    await answer(release, { outcome: "released", view: leaseView(UTYPE, null, undefined, 2) });
    await clock.advance(0);
    const reclaim = transport.all.find((call) => !call.settled)!;
    expect([reclaim.method, reclaim.request?.uuid, reclaim.sentAt]).toEqual(["heartbeat", "uuid-2", refused.sentAt]);
    await answer(reclaim, accepted("uuid-2", 3));
    expect(elector.epoch).toBe(3);
  });

  it("…and if that release gets no answer, takes the old lease over at its expiry", async () => {
    const { clock, transport, elector, answer, accepted, outageUntil } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
    const acquire = transport.take("heartbeat");
    await answer(acquire, accepted("uuid-1", 2));
    await outageUntil(acquire.sentAt + T - I + 1);
    await clock.advance(I - 1);
    const look = transport.all.find((call) => !call.settled)!;
    await answer(look, leaseView(UTYPE, primaryView({ uuid: "uuid-1", epoch: 2, expiresInMs: 200 })));
    transport.all.find((call) => !call.settled && call.method === "release")!.fail(new HaRequestError("503 StoreUnavailable", "StoreUnavailable", 503));
    await settle();
    await clock.advance(look.sentAt + 201 - clock.now());
    const takeover = transport.all.find((call) => !call.settled && call.method === "heartbeat")!;
    expect(takeover.sentAt - look.sentAt).toBe(201);
    expect(takeover.request).toEqual({ uuid: "uuid-2", address: null });
  });

  it("an ex-holder whose first answer shows another term since is a standby like any other", async () => {
    const { clock, transport, elector, answer, accepted, outageUntil } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
    const acquire = transport.take("heartbeat");
    await answer(acquire, accepted("uuid-1", 2));
    await outageUntil(acquire.sentAt + 2 * T);
    await clock.advance(I);
    // Cut off alone: a standby took the role over meanwhile (epoch 3), and that term has just run out.
    await answer(transport.all.find((call) => !call.settled)!, leaseView(UTYPE, null, undefined, 3));
    // Not ours to take back, and this process lost contact: held back like any standby.
    await clock.advance(2 * I - 1);
    expect(transport.all.filter((call) => !call.settled).map((call) => call.method)).toEqual(["getPrimary"]);
  });
});

describe("sticky recovery: a standby that lost contact holds back", () => {
  /** A standby that saw "holder" live (epoch 3), then an outage of `forMs` in which every poll failed. */
  async function standbyThroughOutage(forMs: number, options: Partial<PrimaryElectorOptions> = {}) {
    const ctx = setup(options);
    const { clock, transport, elector, answer, outageUntil } = ctx;
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "holder", epoch: 3, expiresInMs: T })));
    const outageAt = clock.now() + I / 2;
    await clock.advance(I / 2);
    await outageUntil(outageAt + forMs);
    const failed = transport.all.filter((call) => call.settled && call.sentAt < clock.now() && call.method === "getPrimary" && call.sentAt >= outageAt);
    expect(failed.length).toBeGreaterThan(0);
    const lastFailedSentAt = Math.max(...failed.map((call) => call.sentAt));
    return { ...ctx, outageAt, lastFailedSentAt };
  }

  /** The next poll, answered with `view` (within 1 ms of its sending); returns when the answer arrived. */
  async function nextPollAnswered(ctx: ReturnType<typeof setup>, view: LeaseView): Promise<number> {
    while (!ctx.transport.all.some((call) => !call.settled)) await ctx.clock.advance(1);
    const poll = ctx.transport.all.find((call) => !call.settled)!;
    expect(poll.method).toBe("getPrimary");
    const at = ctx.clock.now();
    await ctx.answer(poll, view);
    return at;
  }

  it("takes no expired lease before max(its last failed call + T, its first answer + 2·I): the returning holder renews first", async () => {
    const ctx = await standbyThroughOutage(3 * T);
    const { clock, transport, answer, accepted, lastFailedSentAt } = ctx;
    // The service answers again: the role is vacant, its last term "holder"'s (epoch 3).
    const regainedAt = await nextPollAnswered(ctx, leaseView(UTYPE, null, undefined, 3));
    const holdBackEnd = Math.max(lastFailedSentAt + T, regainedAt + 2 * I);
    expect(holdBackEnd).toBe(lastFailedSentAt + T);
    // Polls go on (every I); none of them is followed by an acquire while "holder" may come back.
    while (clock.now() < holdBackEnd - I) {
      await nextPollAnswered(ctx, leaseView(UTYPE, null, undefined, 3));
      expect(transport.all.filter((call) => call.method === "heartbeat")).toEqual([]);
    }
    // Nobody came back: the takeover goes exactly when the hold-back ends, at most T after the return.
    await clock.advance(holdBackEnd - clock.now() - 1);
    expect(transport.all.filter((call) => call.method === "heartbeat")).toEqual([]);
    await clock.advance(1);
    const takeover = transport.all.find((call) => call.method === "heartbeat")!;
    expect(takeover.sentAt).toBe(holdBackEnd);
    await answer(takeover, accepted("uuid-1", 4));
    expect(ctx.elector.epoch).toBe(4);
  });

  it("a poll still out when the hold-back ends is not cut off for the takeover: if it fails, the service is out again and the hold-back goes on (found by the simulation)", async () => {
    // U = 0.5: polls every 1.1·I, so one falls inside the last 1.1·I before the hold-back's end.
    const ctx = await standbyThroughOutage(3 * T, { random: () => 0.5 });
    const { clock, transport, lastFailedSentAt } = ctx;
    const vacant = leaseView(UTYPE, null, undefined, 3);
    await nextPollAnswered(ctx, vacant);
    const end = lastFailedSentAt + T;
    // Polls answered until one is sent within 1.1·I of the hold-back's end; that one hangs.
    for (;;) {
      while (!transport.all.some((call) => !call.settled)) await clock.advance(1);
      const poll = transport.all.find((call) => !call.settled)!;
      if (poll.sentAt > end - 1.1 * I) break;
      await ctx.answer(poll, vacant);
    }
    const hanging = transport.all.find((call) => !call.settled)!;
    expect([hanging.method, hanging.sentAt < end]).toEqual(["getPrimary", true]);
    await clock.advance(end + 1 - clock.now());
    expect(hanging.settled).toBe(false);
    expect(transport.all.filter((call) => call.method === "heartbeat")).toEqual([]);
    // It fails: the service went away again. No takeover until it answers, and 2·I after that answer.
    await ctx.outageUntil(clock.now() + 3 * I);
    expect(transport.all.filter((call) => call.method === "heartbeat")).toEqual([]);
  });

  it("when the holder comes back within the hold-back, the standby never takes the role", async () => {
    const ctx = await standbyThroughOutage(3 * T);
    const { clock, transport } = ctx;
    await nextPollAnswered(ctx, leaseView(UTYPE, null, undefined, 3));
    // The holder took its role back (a new uuid and epoch, on the same machine).
    for (let n = 0; n < 10; n += 1) await nextPollAnswered(ctx, leaseView(UTYPE, primaryView({ uuid: "holder-again", epoch: 4, expiresInMs: T })));
    await clock.advance(T);
    expect(transport.all.filter((call) => call.method === "heartbeat")).toEqual([]);
  });

  it("found the service late (its backoff): waits 2·I after its first answer, so the holder still renews first", async () => {
    // U = 0.999: the failure backoff is just under 4·I, so the first answer comes more than T − 2·I after the last failed call.
    const ctx = await standbyThroughOutage(3 * T, { random: () => 0.999 });
    const { clock, transport, lastFailedSentAt } = ctx;
    const regainedAt = await nextPollAnswered(ctx, leaseView(UTYPE, null, undefined, 3));
    expect(regainedAt - lastFailedSentAt).toBeGreaterThan(3998);
    expect(regainedAt + 2 * I).toBeGreaterThan(lastFailedSentAt + T);
    await nextPollAnswered(ctx, leaseView(UTYPE, null, undefined, 3));
    await clock.advance(regainedAt + 2 * I - clock.now() - 1);
    expect(transport.all.filter((call) => call.method === "heartbeat")).toEqual([]);
    await clock.advance(2);
    expect(transport.all.find((call) => call.method === "heartbeat")?.sentAt).toBeCloseTo(regainedAt + 2 * I, 6);
  });

  it("a lease that runs out while the standby's polls fail is not taken until the service has answered again", async () => {
    const ctx = await standbyThroughOutage(2 * T);
    // The takeover was armed for the holder's expiry (T after the first poll), in the middle of the outage.
    expect(ctx.transport.all.filter((call) => call.method === "heartbeat")).toEqual([]);
    const regainedAt = await nextPollAnswered(ctx, leaseView(UTYPE, primaryView({ uuid: "holder", epoch: 3, expiresInMs: 100 })));
    // The holder is back and renewing: the takeover at its expiry (100 ms) is still held back.
    await ctx.clock.advance(101);
    expect(ctx.transport.all.filter((call) => call.method === "heartbeat")).toEqual([]);
    expect(regainedAt).toBeGreaterThan(0);
  });

  it("a standby whose calls were refused (a 4xx), not left unanswered, is not held back: it takes over at the expiry", async () => {
    const { clock, transport, elector, answer } = setup();
    elector.start();
    await clock.advance(0);
    const start = clock.now();
    await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "holder", epoch: 3, expiresInMs: 2500 })));
    for (let n = 1; n <= 2; n += 1) {
      await clock.advance(I);
      transport.take("getPrimary").fail(new UnauthorizedError("GetPrimary(scheduler)", "http://127.0.0.1:7071/api", undefined));
      await settle();
    }
    // The refusals back the next poll off to 4·I (after the expiry): only the takeover is sent.
    await clock.advance(start + 2501 - clock.now());
    const takeover = transport.take("heartbeat");
    expect(takeover.sentAt - start).toBe(2501);
  });

  it("a standby with contact all along takes over at the holder's expiry: a holder cut off alone is replaced at T", async () => {
    const { clock, transport, answer, elector } = setup();
    elector.start();
    await clock.advance(0);
    const start = clock.now();
    for (let n = 0; n < 3; n += 1) {
      if (n > 0) await clock.advance(I);
      await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "holder", epoch: 3, expiresInMs: 2500 - n * I })));
    }
    await clock.advance(start + 2501 - clock.now());
    expect(transport.take("heartbeat").sentAt - start).toBe(2501);
  });

  it("a takeover at the end of a hold-back that gets no answer keeps it on until 2·I after the next answer: the service may be out again before the holder found it", async () => {
    const ctx = await standbyThroughOutage(3 * T);
    const { clock, transport, lastFailedSentAt } = ctx;
    const vacant = leaseView(UTYPE, null, undefined, 3);
    await nextPollAnswered(ctx, vacant);
    // Polls answered (the role vacant) until the hold-back ends and the takeover goes.
    for (;;) {
      while (!transport.all.some((call) => !call.settled)) await clock.advance(1);
      const call = transport.all.find((pending) => !pending.settled)!;
      if (call.method === "heartbeat") break;
      await ctx.answer(call, vacant);
    }
    const takeover = transport.all.find((call) => !call.settled)!;
    expect(takeover.sentAt).toBe(lastFailedSentAt + T);
    // The service is out again: the takeover gets no answer. The answer after it shows the role
    // still vacant, and no takeover goes for 2·I after it: the holder gets its look.
    takeover.fail(down());
    await settle();
    const answeredAt = await nextPollAnswered(ctx, vacant);
    while (clock.now() < answeredAt + 2 * I - 1) {
      await clock.advance(1);
      const call = transport.all.find((pending) => !pending.settled);
      if (call !== undefined) await ctx.answer(call, vacant);
    }
    expect(transport.all.filter((call) => call.method === "heartbeat")).toEqual([takeover]);
    await clock.advance(1);
    expect(transport.all.filter((call) => call.method === "heartbeat").map((call) => call.sentAt)).toEqual([takeover.sentAt, answeredAt + 2 * I]);
  });

  it("a role nobody ever held (epoch 0) is acquired at once, lost contact or not", async () => {
    const { clock, transport, elector, answer } = setup();
    elector.start();
    await clock.advance(0);
    transport.take("getPrimary").fail(down());
    await clock.advance(I);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
    expect(transport.take("heartbeat").request).toEqual({ uuid: "uuid-1", address: null });
  });

  it("a planned handover to it is taken at once, lost contact or not", async () => {
    const { clock, transport, elector, answer } = setup();
    elector.start();
    await clock.advance(0);
    transport.take("getPrimary").fail(down());
    await clock.advance(I);
    const reserved = { ...leaseView(UTYPE, null, undefined, 6), handover: { to: "uuid-1", requestedAt: new Date(0).toISOString(), phase: "reserved" as const, until: new Date(T).toISOString() } };
    await answer(transport.take("getPrimary"), reserved);
    expect(transport.take("heartbeat").request).toEqual({ uuid: "uuid-1", address: null });
  });

  it("a 503 Overloaded is a live service shedding load, not an outage: no hold-back after it", async () => {
    const { clock, transport, elector, answer } = setup();
    elector.start();
    await clock.advance(0);
    transport.take("getPrimary").fail(new HaRequestError("503 Overloaded", "Overloaded", 503, { retryAfterMs: 1000 }));
    await clock.advance(I);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null, undefined, 6));
    expect(transport.take("heartbeat").request).toEqual({ uuid: "uuid-1", address: null });
  });
});

describe("sticky recovery: a lost message is not lost contact", () => {
  const timeout = (): HaRequestError => new HaRequestError("GetPrimary(scheduler): no answer within 1000 ms", "Timeout", undefined);

  /**
   * A standby whose polls (every I: U = 0) are answered with "holder"'s lease expiring at
   * `expiresAt` (its holder renews no more: it crashed), from t = 0, except the polls listed in
   * `lost`, which get no answer; until the takeover is sent, which it returns.
   */
  async function crashedHolder(expiresAt: number, lost: readonly number[]) {
    const ctx = setup();
    const { clock, transport, elector, answer } = ctx;
    elector.start();
    await clock.advance(0);
    const start = clock.now();
    for (let polls = 0; ; polls += 1) {
      while (!transport.all.some((call) => !call.settled)) await clock.advance(1);
      const call = transport.all.find((pending) => !pending.settled)!;
      if (call.method === "heartbeat") return { ...ctx, start, takeover: call };
      expect(call.method).toBe("getPrimary");
      if (lost.includes(polls)) {
        call.fail(timeout());
        await settle();
        continue;
      }
      const left = start + expiresAt - clock.now();
      await answer(call, left > 0 ? leaseView(UTYPE, primaryView({ uuid: "holder", epoch: 3, expiresInMs: left })) : leaseView(UTYPE, null, undefined, 3));
    }
  }

  it("one lost poll after the holder stopped renewing (a crash) is a lost message: the takeover goes at the expiry, not T after that poll", async () => {
    // The lease was renewed 500 ms before the first poll and ends at 4 500 ms; the poll at
    // 3 000 ms (after an answer that showed it 2.5·I old: overdue) gets no answer. Before, that
    // one lost poll held the takeover back to 3 000 + T = 8 000 ms, past the expiry + I.
    const { start, takeover, transport } = await crashedHolder(4500, [3]);
    expect(transport.all.filter((call) => call.method === "getPrimary").map((call) => [call.sentAt - start, call.settled])).toEqual([
      [0, true],
      [I, true],
      [2 * I, true],
      [3 * I, true],
      [4 * I, true],
    ]);
    expect(takeover.sentAt - start).toBe(4501);
  });

  it("one lost poll while the holder still renewed (perhaps a short outage that ends its term) holds back to 2·I after the next answer, not T after it", async () => {
    // The answer before the lost poll (at I) showed the lease 2.2·I old at 0: being renewed. The
    // holder's term may have ended in an outage this poll met; the holder then takes its role
    // back at its deadline or its next look, within 2·I of this standby's next answer (at 2·I).
    const { start, takeover } = await crashedHolder(2800, [1]);
    expect(takeover.sentAt - start).toBe(2 * I + 2 * I);
  });

  it("two lost calls in a row after the holder stopped renewing hold back to 2·I after the next answer, not T after the last", async () => {
    // Polls at 3 000 and 4 000 ms get no answer (the second backs the next off to 2·I): the
    // holder may have lost its term in an outage before, too short for this standby to meet.
    const { start, takeover } = await crashedHolder(4500, [3, 4]);
    expect(takeover.sentAt - start).toBe(6 * I + 2 * I);
  });
});

describe("an acquire answered Conflict whose view shows this uuid as the live holder", () => {
  it("acquires again at once (its other copy won the race), not a poll later: found by the simulation's sticky judge", async () => {
    const { clock, transport, elector, answer, accepted } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null, undefined, 1));
    const first = transport.take("heartbeat");
    await answer(first, { outcome: "conflict", view: leaseView(UTYPE, primaryView({ uuid: "uuid-1", epoch: 2, expiresInMs: T })) });
    await clock.advance(0);
    const again = transport.take("heartbeat");
    expect([again.sentAt, again.request]).toEqual([first.sentAt, { uuid: "uuid-1", address: null }]);
    await answer(again, accepted("uuid-1", 2));
    expect(elector.epoch).toBe(2);
  });
});

describe("resign() with no cool-down (run after it had to stop its command) keeps the role sticky", () => {
  it("resigned as the lease ran low in an outage: the release goes unanswered, and at the service's return the new uuid takes the role back at once", async () => {
    const { clock, transport, elector, answer, accepted, outageUntil, electedEvents } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
    const acquire = transport.take("heartbeat");
    await answer(acquire, accepted("uuid-1", 4));
    // The service goes away; with the lease low, `run` stopped its command and gives the term up.
    await outageUntil(acquire.sentAt + T - I - 800);
    expect(elector.resign()).toBe(true);
    await outageUntil(acquire.sentAt + 3 * T);
    await clock.advance(I);
    const look = transport.all.find((call) => !call.settled)!;
    expect(look.method).toBe("getPrimary");
    const answeredAt = clock.now();
    await answer(look, leaseView(UTYPE, null, undefined, 4));
    const reclaim = transport.all.find((call) => !call.settled)!;
    expect([reclaim.method, reclaim.sentAt, reclaim.request?.uuid]).toEqual(["heartbeat", answeredAt, "uuid-2"]);
    await answer(reclaim, accepted("uuid-2", 5));
    expect(electedEvents().map(({ epoch }) => epoch)).toEqual([4, 5]);
  });

  it("resign({ cooldownMs }) is a step-down for a standby to take: nothing to take back", async () => {
    const { clock, transport, elector, answer, accepted, outageUntil } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
    const acquire = transport.take("heartbeat");
    await answer(acquire, accepted("uuid-1", 4));
    expect(elector.resign({ cooldownMs: T })).toBe(true);
    await outageUntil(acquire.sentAt + 3 * T);
    await clock.advance(I);
    await answer(transport.all.find((call) => !call.settled)!, leaseView(UTYPE, null, undefined, 4));
    // Lost contact, and the vacant role is not its own to take back: held back like any standby's.
    expect(transport.all.filter((call) => !call.settled).map((call) => call.method)).toEqual([]);
  });
});

describe("what counts as lost contact (docs/protocol.md#sticky-recovery): no answer and 5xx answers, never a refusal", () => {
  it.each([
    ["no answer in time", new HaRequestError("GetPrimary(scheduler): no answer", "Timeout", undefined), true],
    ["a refused connection", new HaRequestError("GetPrimary(scheduler): ECONNREFUSED", "NetworkError", undefined), true],
    ["the service's 408 (the request did not reach it in time)", new HaRequestError("408 RequestTimeout", "RequestTimeout", 408), true],
    ["503 StoreUnavailable", down(), true],
    ["500 InternalError", new HaRequestError("500 InternalError", "InternalError", 500), true],
    ["503 Overloaded (a live service shedding load)", new HaRequestError("503 Overloaded", "Overloaded", 503, { retryAfterMs: 1000 }), false],
    ["429 (throttled)", new HaRequestError("429 TooManyRequests", "TooManyRequests", 429), false],
    ["401", new UnauthorizedError("GetPrimary(scheduler)", "http://127.0.0.1:7071/api", undefined), false],
    ["403", new ForbiddenError("UpdateHeartBeat(scheduler)", "managed identity b", undefined), false],
    ["404 (an endpoint without /api)", new EndpointNotFoundError("GetPrimary(scheduler)", "http://127.0.0.1:7071", undefined), false],
    ["400", new HaRequestError("400 InvalidRequest", "InvalidRequest", 400), false],
    ["a corrupted answer", new CorruptedMessageError("GetPrimary(scheduler): not JSON", 200), false],
  ])("%s", (_name, error, outage) => {
    expect(isOutage(error)).toBe(outage);
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CorruptedMessageError } from "../../shared/sdk/transport/corrupted-message-error.js";
import { EndpointNotFoundError } from "../../shared/sdk/transport/endpoint-not-found-error.js";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";
import type { HeartbeatResult, LeaseView, ReleaseResult } from "../../shared/sdk/index.js";
import { PrimaryElector, type ElectorEvents, type PrimaryElectorOptions } from "../../shared/sdk/election/primary-elector.js";
import { SlowRoundTripWarning } from "../../shared/sdk/election/slow-round-trip-warning.js";
import { UnauthorizedError } from "../../shared/sdk/auth/unauthorized-error.js";
import { ForbiddenError } from "../../shared/sdk/auth/forbidden-error.js";
import { I, T, leaseView, primaryView, ScriptedTransport, type PendingCall } from "../helpers/sdk-fakes.js";
import { FakeClock, settle } from "../helpers/fake-clock.js";
import { collectUncaught } from "../helpers/uncaught.js";

const UTYPE = "scheduler";

type Recorded = { [E in keyof ElectorEvents]: { event: E; at: number; payload: ElectorEvents[E] } }[keyof ElectorEvents];

function setup(options: Partial<PrimaryElectorOptions> = {}) {
  const clock = new FakeClock();
  const transport = new ScriptedTransport(clock);
  let counter = 0;
  const elector = new PrimaryElector({
    utype: UTYPE,
    transport,
    clock,
    newUuid: () => `uuid-${++counter}`,
    // No jitter unless a test asks for it: standby polls exactly every I.
    random: () => 0,
    // These tests pin every call a follower makes; its announcements (a heartbeat instead of
    // a poll about every T/2) are tested in "a standby's announcements" below.
    announce: false,
    ...options,
  });
  const events: Recorded[] = [];
  for (const event of ["elected", "demoted", "primaryChanged", "error"] as const) {
    elector.on(event, (payload: unknown) => void events.push({ event, at: clock.now(), payload } as Recorded));
  }
  const answer = async (call: PendingCall, value: LeaseView | HeartbeatResult | ReleaseResult): Promise<void> => {
    call.respond(value);
    await settle();
  };
  const accepted = (uuid: string, epoch: number, lease = `token-${epoch}`, timing = { intervalMs: I, timeoutMs: T }): HeartbeatResult => ({
    outcome: "accepted",
    view: leaseView(UTYPE, primaryView({ uuid, epoch, address: options.address ?? null, expiresInMs: timing.timeoutMs }), timing),
    lease,
  });
  /** start() → GetPrimary answers "none" → UpdateHeartBeat accepted with `epoch`. */
  const becomePrimary = async (epoch = 1): Promise<void> => {
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary", UTYPE), leaseView(UTYPE, null));
    const put = transport.take("heartbeat", UTYPE);
    await answer(put, accepted(put.request!.uuid, epoch));
  };
  const names = () => events.filter((e) => e.event !== "error").map((e) => e.event);
  return { clock, transport, elector, events, answer, accepted, becomePrimary, names };
}

describe("PrimaryElector state transitions (injected clock and transport, no sleeps)", () => {
  it("acquires an empty lease: GetPrimary, then UpdateHeartBeat without a token, then elected", async () => {
    const { clock, transport, elector, events, answer, accepted } = setup({ address: "10.0.0.4:5800" });
    elector.start();
    await clock.advance(0);
    expect(elector.isPrimary()).toBe(false);
    await answer(transport.take("getPrimary", UTYPE), leaseView(UTYPE, null));
    const put = transport.take("heartbeat", UTYPE);
    expect(put.request).toEqual({ uuid: "uuid-1", address: "10.0.0.4:5800" });
    await answer(put, accepted("uuid-1", 1));
    expect(elector.isPrimary()).toBe(true);
    expect(elector.epoch).toBe(1);
    expect(events.map((e) => [e.event, e.payload])).toEqual([
      ["primaryChanged", { primary: null, epoch: 0 }],
      ["primaryChanged", { primary: expect.objectContaining({ uuid: "uuid-1", epoch: 1, address: "10.0.0.4:5800" }), epoch: 1 }],
      ["elected", { uuid: "uuid-1", epoch: 1, signal: expect.any(AbortSignal) }],
    ]);

    // One fast-path heartbeat per I, carrying the token of the last accepted one. The
    // address is omitted: the service keeps the stored one, and the body stays small.
    await clock.advance(I - 1);
    transport.expectIdle();
    await clock.advance(1);
    const renewal = transport.take("heartbeat", UTYPE);
    expect(renewal.request).toEqual({ uuid: "uuid-1", lease: "token-1" });
    await answer(renewal, accepted("uuid-1", 1, "token-1b"));
    await clock.advance(I);
    expect(transport.take("heartbeat").request?.lease).toBe("token-1b");
  });

  it("a standby arms its takeover for the holder's expiresInMs, not for its next poll", async () => {
    const { clock, transport, elector, events, answer, accepted } = setup();
    elector.start();
    await clock.advance(0);
    const start = clock.now();
    await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "other", epoch: 4, expiresInMs: 1700 })));
    expect(events.map((e) => e.event)).toEqual(["primaryChanged"]);
    await clock.advance(I);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "other", epoch: 4, expiresInMs: 700 })));
    // Due at 1 701 ms: the service takes over only once the lease is older than T.
    await clock.advance(700);
    transport.expectIdle();
    await clock.advance(1);
    const put = transport.take("heartbeat");
    expect(put.sentAt - start).toBe(1701);
    expect(put.request).toEqual({ uuid: "uuid-1", address: null });
    await answer(put, accepted("uuid-1", 5));
    expect(elector.isPrimary()).toBe(true);
    expect(elector.epoch).toBe(5);
    expect(events.at(-1)).toMatchObject({ event: "elected", payload: { uuid: "uuid-1", epoch: 5 } });
  });

  it("a poll still unanswered when the takeover falls due is cut off: the takeover does not wait for it", async () => {
    const { clock, transport, elector, events, answer } = setup();
    elector.start();
    await clock.advance(0);
    const start = clock.now();
    await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "other", epoch: 4, expiresInMs: 1700 })));
    await clock.advance(I);
    const hanging = transport.take("getPrimary");
    expect(hanging.options.timeoutInMs).toBe(I);
    await clock.advance(700);
    transport.expectIdle();
    await clock.advance(1);
    // At 1 701 ms, not when the poll's own budget runs out (2 000 ms).
    expect(transport.take("heartbeat").sentAt - start).toBe(1701);
    expect(hanging.settled).toBe(true);
    // Cut off by the elector itself, so no failure and no error.
    expect(elector.stats().failures).toBe(0);
    expect(events.filter((e) => e.event === "error")).toEqual([]);
  });

  it("a standby whose takeover loses (409) re-arms for the new holder's expiry, even when no poll is answered usably", async () => {
    const { clock, transport, elector, answer, accepted } = setup();
    elector.start();
    await clock.advance(0);
    const start = clock.now();
    await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "other", expiresInMs: 300 })));
    await clock.advance(301);
    const lost = transport.take("heartbeat");
    expect(lost.sentAt - start).toBe(301);
    await answer(lost, { outcome: "conflict", view: leaseView(UTYPE, primaryView({ uuid: "third", epoch: 2, expiresInMs: 2500 })) });
    expect(elector.isPrimary()).toBe(false);
    // Every poll's answer is corrupted from here on, so only the 409's view can tell when
    // "third" expires: the takeover must be sent at 301 + 2500 + 1 ms, polls going on
    // meanwhile. (Polls that get no answer at all hold the takeover back instead: see
    // "sticky recovery" below.)
    const corrupted = new CorruptedMessageError("GetPrimary(scheduler): the 200 response body is not JSON.", 200);
    for (const pollAt of [301 + I, 301 + 2 * I]) {
      await clock.advance(start + pollAt - clock.now());
      transport.take("getPrimary").fail(corrupted);
    }
    await clock.advance(start + 2801 - clock.now());
    transport.expectIdle();
    await clock.advance(1);
    const takeover = transport.take("heartbeat");
    expect(takeover.sentAt - start).toBe(2802);
    expect(takeover.request).toEqual({ uuid: "uuid-1", address: null });
    await answer(takeover, accepted("uuid-1", 3));
    expect(elector.epoch).toBe(3);
  });

  it("a 409 on renewal demotes at once, with a new uuid, and keeps competing", async () => {
    const { clock, transport, elector, events, answer, becomePrimary } = setup();
    await becomePrimary(3);
    await clock.advance(I);
    await answer(transport.take("heartbeat"), {
      outcome: "held",
      view: leaseView(UTYPE, primaryView({ uuid: "usurper", epoch: 4, expiresInMs: 4900 })),
    });
    expect(elector.isPrimary()).toBe(false);
    expect(elector.epoch).toBeUndefined();
    expect(elector.uuid).toBe("uuid-2");
    const demoted = events.find((e) => e.event === "demoted");
    expect(demoted?.payload).toEqual({ reason: "rejected", uuid: "uuid-1", epoch: 3 });
    expect(events.at(-1)).toMatchObject({ event: "primaryChanged", payload: { primary: { uuid: "usurper" } } });
    // Rejected: the lease is not ours, so nothing is released; polling resumes after I.
    await clock.advance(I);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "usurper", epoch: 4, expiresInMs: 4000 })));
    transport.expectIdle();
  });

  it("reaches the deadline sentAt + (T − I) while heartbeats hang, and demotes exactly then", async () => {
    const { clock, transport, elector, events, becomePrimary } = setup();
    await becomePrimary();
    const sentAt = transport.all[1]!.sentAt;
    const deadline = sentAt + (T - I);
    // The service answered the acquire at once: the renewal budget is its floor F = (T − 2I)/8.
    // Unanswered, the renewal is sent again after F, 2F, 4F (the earlier copies still
    // awaited), each copy bounded by the deadline.
    const floor = (T - 2 * I) / 8;
    await clock.advance(deadline - 1 - clock.now());
    expect(elector.isPrimary()).toBe(true);
    const copies = [1, 2, 3, 4].map(() => transport.take("heartbeat"));
    expect(copies.map((copy) => copy.sentAt - sentAt)).toEqual([I, I + floor, I + 3 * floor, I + 7 * floor]);
    expect(copies.map((copy) => copy.options.timeoutInMs)).toEqual(copies.map((copy) => deadline - copy.sentAt));
    expect(copies.map((copy) => copy.request)).toEqual(Array(4).fill({ uuid: "uuid-1", lease: "token-1" }));
    expect(copies.some((copy) => copy.settled)).toBe(false);
    await clock.advance(1);
    expect(elector.isPrimary()).toBe(false);
    expect(copies.every((copy) => copy.settled)).toBe(true);
    expect(events.filter((e) => e.event === "demoted").map((e) => [e.at - sentAt, e.payload])).toEqual([
      [T - I, { reason: "lease-expired", uuid: "uuid-1", epoch: 1 }],
    ]);
    // Each copy that went unanswered for its budget is a failed call; the cut-off at the deadline is not.
    expect(events.filter((e) => e.event === "error").map((e) => (e.payload as HaRequestError).code)).toEqual(["Timeout", "Timeout", "Timeout"]);
    // The renewals got no answer: no release (it would only add to a failing service's
    // load). The new incarnation looks at once, and every I after that while it gets no
    // answer (no backoff: it must find the service within about I of its return, to take
    // its role back; docs/protocol.md#sticky-recovery).
    expect(elector.uuid).toBe("uuid-2");
    expect(elector.stats().failures).toBe(3);
    const look = transport.take("getPrimary");
    expect(look.sentAt).toBe(deadline);
    look.fail(new HaRequestError("GetPrimary(scheduler): 503 StoreUnavailable", "StoreUnavailable", 503));
    await clock.advance(I - 1);
    transport.expectIdle();
    await clock.advance(1);
    expect(transport.take("getPrimary").request).toBeUndefined();
    transport.expectIdle();
  });

  it("after a pause longer than T it never reports the lost lease, and its next event is demoted", async () => {
    const { clock, transport, elector, events, answer, accepted, becomePrimary, names } = setup();
    await becomePrimary(7);
    await clock.advance(I);
    const renewal = transport.take("heartbeat");
    // The process freezes with the renewal out; the service accepted it, but the answer
    // is read only after the pause.
    clock.pause(T + 2000);
    expect(elector.isPrimary()).toBe(false);
    expect(elector.epoch).toBeUndefined();
    renewal.respond(accepted("uuid-1", 7, "token-late"));
    await clock.advance(0);
    expect(names()).toEqual(["primaryChanged", "primaryChanged", "elected", "demoted"]);
    expect(events.find((e) => e.event === "demoted")?.payload).toMatchObject({ reason: "lease-expired", uuid: "uuid-1" });
    expect(elector.isPrimary()).toBe(false);
    // It competes again as a new incarnation, never with the lost lease's token.
    const calls = [transport.take("release"), transport.take("getPrimary")];
    expect(calls.map((c) => c.method)).toEqual(["release", "getPrimary"]);
    await answer(calls[1]!, leaseView(UTYPE, null));
    const put = transport.take("heartbeat");
    expect(put.request).toEqual({ uuid: "uuid-2", address: null });
    await answer(put, accepted("uuid-2", 8));
    expect(elector.epoch).toBe(8);
  });

  it("an acquire accepted only after its own deadline is not an election; it asks again at once", async () => {
    const { clock, transport, elector, names, answer, accepted } = setup({ retryDelayInMs: 100 });
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
    const put = transport.take("heartbeat");
    // The budget is max(I, (T − I)/2) = 2000 ms; a transport that answers later anyway still proves nothing.
    expect(put.options.timeoutInMs).toBe(2000);
    clock.pause(T - I);
    put.respond(accepted("uuid-1", 1));
    await settle();
    expect(elector.isPrimary()).toBe(false);
    expect(names()).not.toContain("elected");
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "uuid-1", expiresInMs: I })));
    const again = transport.take("heartbeat");
    expect(again.request).toEqual({ uuid: "uuid-1", address: null });
    await answer(again, accepted("uuid-1", 1));
    expect(elector.isPrimary()).toBe(true);
  });

  it("counts a corrupted answer as a failed call and stays primary only until its deadline", async () => {
    const { clock, transport, elector, events, becomePrimary } = setup();
    await becomePrimary();
    for (let n = 1; n <= 3; n += 1) {
      await clock.advance(I);
      transport.take("heartbeat").fail(new CorruptedMessageError('UpdateHeartBeat(scheduler): corrupted message (asked for utype "scheduler", the answer is about "broker").', 200));
      await settle();
      expect(elector.isPrimary()).toBe(true);
    }
    expect(events.filter((e) => e.event === "error").map((e) => (e.payload as Error).name)).toEqual(Array(3).fill("CorruptedMessageError"));
    await clock.advance(I);
    expect(elector.isPrimary()).toBe(false);
    expect(events.at(-1)).toMatchObject({ event: "demoted", payload: { reason: "lease-expired" } });
    // Failed renewals ended the term: nothing is released, and the new incarnation looks at
    // once (to take its role back if nobody else took it meanwhile), every I while it fails.
    transport.take("getPrimary").fail(new CorruptedMessageError("GetPrimary(scheduler): the 200 response body is not JSON.", 200));
    await clock.advance(I - 1);
    transport.expectIdle();
    await clock.advance(1);
    expect(transport.take("getPrimary").utype).toBe(UTYPE);
    transport.expectIdle();
  });

  it("a corrupted GetPrimary never leads a follower to acquire", async () => {
    const { clock, transport, elector } = setup();
    elector.start();
    await clock.advance(0);
    transport.take("getPrimary").fail(new CorruptedMessageError("GetPrimary(scheduler): the 200 response body is not JSON.", 200));
    await settle();
    transport.expectIdle();
    expect(elector.stats().failures).toBe(1);
  });

  it("stop(): demoted {stopped}, its handlers awaited while the lease is kept, then released", async () => {
    const { clock, transport, elector, events, answer, accepted, becomePrimary } = setup();
    let finishWork!: () => void;
    elector.on("demoted", () => new Promise<void>((resolve) => (finishWork = resolve)));
    await becomePrimary(2);
    let stopped = false;
    const stopping = elector.stop().then(() => (stopped = true));
    await settle();
    expect(events.at(-1)).toMatchObject({ event: "demoted", payload: { reason: "stopped", uuid: "uuid-1", epoch: 2 } });
    expect(elector.isPrimary()).toBe(false);
    // While the user's work winds down the lease is still renewed, never released early.
    await clock.advance(I);
    await answer(transport.take("heartbeat"), accepted("uuid-1", 2));
    transport.expectIdle();
    expect(stopped).toBe(false);
    finishWork();
    await settle();
    const release = transport.take("release");
    expect(release.uuid).toBe("uuid-1");
    // The proven form: the token of the last accepted renewal, so a standby may take over at once.
    expect(release.options.lease).toBe("token-2");
    await answer(release, { outcome: "released", view: leaseView(UTYPE, null) });
    await stopping;
    expect(events.at(-1)).toMatchObject({ event: "primaryChanged", payload: { primary: null } });
    await clock.advance(10 * T);
    transport.expectIdle();
    expect(events.filter((e) => e.event === "demoted")).toHaveLength(1);
  });

  it("stop(): a lease that runs out while the handlers run is released with its token after them, with no second event", async () => {
    const { clock, transport, elector, events, becomePrimary } = setup();
    let finishWork!: () => void;
    elector.on("demoted", () => new Promise<void>((resolve) => (finishWork = resolve)));
    await becomePrimary(4);
    const deadline = clock.now() + (T - I);
    const stopping = elector.stop();
    await settle();
    // Every renewal goes unanswered until the deadline passes.
    while (clock.now() < deadline) {
      await clock.advance(Math.min(I, deadline - clock.now()));
      expect(transport.all.filter((call) => call.method === "release")).toEqual([]);
    }
    await clock.advance(I);
    const renewals = transport.all.filter((call) => call.method === "heartbeat").slice(1);
    expect(renewals.length).toBeGreaterThanOrEqual(2);
    expect(renewals.every((call) => call.settled)).toBe(true);
    for (let n = 0; n < renewals.length; n += 1) transport.take("heartbeat");
    transport.expectIdle();
    finishWork();
    await settle();
    const release = transport.take("release");
    // Harmless if the lease is gone already; spares a standby the rest of T if it is not.
    expect([release.uuid, release.options.lease]).toEqual(["uuid-1", "token-4"]);
    release.respond({ outcome: "released", view: leaseView(UTYPE, null) });
    await stopping;
    expect(events.filter((e) => e.event === "demoted").map((e) => (e.payload as { reason: string }).reason)).toEqual(["stopped"]);
  });

  it("stop() as a follower releases nothing and emits no demotion", async () => {
    const { clock, transport, elector, names, answer } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "other" })));
    await elector.stop();
    await clock.advance(10 * T);
    transport.expectIdle();
    expect(names()).toEqual(["primaryChanged"]);
    expect(elector.isPrimary()).toBe(false);
  });

  it("aborting the signal stops it like stop()", async () => {
    const controller = new AbortController();
    const { clock, transport, elector, events, answer, becomePrimary } = setup({ abortSignal: controller.signal });
    await becomePrimary();
    controller.abort();
    await settle();
    expect(events.at(-1)).toMatchObject({ event: "demoted", payload: { reason: "stopped" } });
    await answer(transport.take("release"), { outcome: "released", view: leaseView(UTYPE, null) });
    await elector.stop();
    await clock.advance(10 * T);
    transport.expectIdle();
  });

  it("takes I and T from the service's answers, never assumes them", async () => {
    const timing = { intervalMs: 200, timeoutMs: 1500 };
    const { clock, transport, elector, answer, accepted } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "other", expiresInMs: 1500 }), timing));
    await clock.advance(200);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null, timing));
    const put = transport.take("heartbeat");
    await answer(put, accepted("uuid-1", 1, "t", timing));
    expect(elector.timing).toEqual(timing);
    await clock.advance(200);
    transport.take("heartbeat");
    await clock.advance(1300 - 200 - 1);
    expect(elector.isPrimary()).toBe(true);
    await clock.advance(1);
    expect(elector.isPrimary()).toBe(false);
  });

  it("affinity: competes only while the other utype's primary is at its address, and steps down when that stops", async () => {
    const { clock, transport, elector, events, answer, accepted } = setup({ address: "host-a:80", affinity: "broker" });
    elector.start();
    await clock.advance(0);
    // The broker's primary is elsewhere: poll, but do not compete.
    await answer(transport.take("getPrimary", "broker"), leaseView("broker", primaryView({ uuid: "b", address: "host-b:80" })));
    transport.expectIdle();
    await clock.advance(I);
    await answer(transport.take("getPrimary", "broker"), leaseView("broker", primaryView({ uuid: "b", address: "host-a:80" })));
    await answer(transport.take("getPrimary", UTYPE), leaseView(UTYPE, null));
    const put = transport.take("heartbeat", UTYPE);
    await answer(put, accepted("uuid-1", 1));
    expect(elector.isPrimary()).toBe(true);
    await clock.advance(I);
    await answer(transport.take("heartbeat", UTYPE), accepted("uuid-1", 1));
    await answer(transport.take("getPrimary", "broker"), leaseView("broker", primaryView({ uuid: "b", address: "host-a:80" })));
    expect(elector.isPrimary()).toBe(true);
    await clock.advance(I);
    await answer(transport.take("heartbeat", UTYPE), accepted("uuid-1", 1));
    await answer(transport.take("getPrimary", "broker"), leaseView("broker", primaryView({ uuid: "b2", address: "host-c:80" })));
    expect(elector.isPrimary()).toBe(false);
    expect(events.find((e) => e.event === "demoted")?.payload).toMatchObject({ reason: "affinity-lost", uuid: "uuid-1" });
    const release = transport.take("release");
    expect([release.uuid, release.options.lease]).toEqual(["uuid-1", "token-1"]);
  });

  it("stats(): round-trip percentiles, failures, time without a primary, and a warning when round trips eat the margin", async () => {
    const { clock, transport, elector, events, answer, accepted, becomePrimary } = setup();
    await clock.advance(0);
    await becomePrimary();
    const slow = (T - I) / 10 + 50;
    await clock.advance(I);
    for (let n = 0; n < 12; n += 1) {
      const call = transport.take("heartbeat");
      // The round trips rise step by step, so the renewal budget (which follows them) is never overrun.
      const roundTrip = n < 4 ? 300 : slow;
      await clock.advance(roundTrip);
      await answer(call, accepted("uuid-1", 1));
      await clock.advance(I - roundTrip);
    }
    const stats = elector.stats();
    expect(stats.heartbeatRoundTrip.count).toBe(13);
    expect(stats.heartbeatRoundTrip.p50Ms).toBe(slow);
    expect(stats.heartbeatRoundTrip.p99Ms).toBe(slow);
    expect(stats.failures).toBe(0);
    expect(stats.elections).toBe(1);
    const warnings = events.filter((e) => e.event === "error").map((e) => e.payload);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toBeInstanceOf(SlowRoundTripWarning);
    expect((warnings[0] as Error).message).toMatch(/p99 \d+ ms is more than a tenth of the T − I margin \(4000 ms\)/);
  });

  it("stats(): withoutPrimaryMs counts an outage in which every call fails, from when the lease last seen ran out", async () => {
    const { clock, transport, elector, answer } = setup();
    elector.start();
    await clock.advance(0);
    const start = clock.now();
    await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "other", expiresInMs: 3000 })));
    // 11 s in which every call fails: the polls. (The takeover due at 3 001 ms is held back:
    // contact was lost, and "other" may be cut off just the same; docs/protocol.md#sticky-recovery.)
    const unavailable = new HaRequestError("503 StoreUnavailable", "StoreUnavailable", 503);
    while (clock.now() - start < 11_000) {
      await clock.advance(100);
      for (const call of transport.all) if (!call.settled) call.fail(unavailable);
    }
    expect(transport.all.filter((call) => call.method === "heartbeat")).toHaveLength(0);
    expect(elector.stats().withoutPrimaryMs).toBe(11_000 - 3000);
    while (transport.all.every((call) => call.settled)) await clock.advance(1);
    const back = transport.all.find((call) => !call.settled)!;
    await answer(back, leaseView(UTYPE, primaryView({ uuid: "third", epoch: 2, expiresInMs: 4000 })));
    const withoutMs = elector.stats().withoutPrimaryMs;
    expect(withoutMs).toBe(back.sentAt - start - 3000);
    // Covered again: the answer showed a live lease.
    await clock.advance(500);
    expect(elector.stats().withoutPrimaryMs).toBe(withoutMs);
  });

  it("stats(): a primary renewing its lease is never without one, and the count ends at stop()", async () => {
    const { clock, transport, elector, answer, accepted, becomePrimary } = setup();
    await becomePrimary();
    for (let n = 0; n < 3; n += 1) {
      await clock.advance(I);
      await answer(transport.take("heartbeat"), accepted("uuid-1", 1));
    }
    expect(elector.stats().withoutPrimaryMs).toBe(0);
    const stopping = elector.stop();
    await settle();
    await answer(transport.take("release"), { outcome: "released", view: leaseView(UTYPE, null) });
    await stopping;
    await clock.advance(10 * T);
    expect(elector.stats().withoutPrimaryMs).toBe(0);
  });

  it("stats(): counts the time during which it saw no primary", async () => {
    const { clock, transport, elector, answer } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
    const put = transport.take("heartbeat");
    await clock.advance(250);
    await answer(put, { outcome: "conflict", view: leaseView(UTYPE, primaryView({ uuid: "other" })) });
    expect(elector.stats().withoutPrimaryMs).toBe(250);
  });
});

describe("PrimaryElector and errors no retry can fix (a wrong key, a wrong endpoint)", () => {
  it("reports each through `error`, keeps trying, and backs off: I, 2·I, 4·I, … up to T; after an answer, every I again", async () => {
    const { clock, transport, elector, events, answer } = setup();
    elector.start();
    await clock.advance(0);
    const start = clock.now();
    // Before any answer the retry delay (1000 ms) stands in for I, and five times it for T.
    const expectedAt = [0, 1000, 3000, 7000, 12_000, 17_000];
    for (const at of expectedAt) {
      if (at > 0) {
        await clock.advance(start + at - 1 - clock.now());
        transport.expectIdle();
        await clock.advance(1);
      }
      const poll = transport.take("getPrimary");
      expect(poll.sentAt - start).toBe(at);
      poll.fail(new UnauthorizedError("GetPrimary(scheduler)", "http://127.0.0.1:7071/api", undefined));
      await settle();
    }
    const reported = events.filter((e) => e.event === "error").map((e) => e.payload);
    expect(reported).toHaveLength(expectedAt.length);
    expect(reported.every((error) => error instanceof UnauthorizedError && !error.retryable)).toBe(true);
    expect(elector.stats().failures).toBe(expectedAt.length);
    // The key was rotated back: one answer, and polls go every I again.
    await clock.advance(start + 22_000 - clock.now());
    await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "other" })));
    await clock.advance(I - 1);
    transport.expectIdle();
    await clock.advance(1);
    transport.take("getPrimary");
  });

  it("a write refused by the grants (403) backs off however the reads are answered: I, 2·I, 4·I, … up to T, reads included", async () => {
    const { clock, transport, elector, events, answer } = setup();
    elector.start();
    const start = clock.now();
    // Each poll's read is answered (nobody holds the role) and the acquire it leads to refused.
    const sent: number[] = [];
    for (let n = 0; n < 7; n += 1) {
      const poll = await nextCall(clock, transport);
      expect(poll.method).toBe("getPrimary");
      sent.push(poll.sentAt - start);
      await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
      transport.take("heartbeat").fail(forbidden());
      await settle();
      transport.expectIdle();
    }
    const gaps = sent.slice(1).map((at, index) => at - sent[index]!);
    // Before the fix the answered read reset the count: a read and a write every I for ever.
    expect(gaps).toEqual([I, 2 * I, 4 * I, T, T, T]);
    expect(events.filter((e) => e.event === "error").every((e) => e.payload instanceof ForbiddenError)).toBe(true);

    // The grant was added: a write's answer (here 409, another holder) ends the backoff.
    await nextCall(clock, transport);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
    const acquire = transport.take("heartbeat");
    await answer(acquire, { outcome: "held", view: leaseView(UTYPE, primaryView({ uuid: "other", expiresInMs: T })) });
    expect((await nextCall(clock, transport)).sentAt - acquire.sentAt).toBe(I);
  });

  it("a refused write's backoff holds while another holds the role: the answered polls do not end it", async () => {
    const { clock, transport, elector, answer } = setup({ announce: true });
    elector.start();
    const start = clock.now();
    // Its first poll announces it (a write), and every announcement after (about every T/2)
    // is refused; the polls between are answered: the role is held by another for long.
    const sent: number[] = [];
    const methods: string[] = [];
    let writes = 0;
    while (clock.now() < start + 8 * T) {
      const call = await nextCall(clock, transport);
      sent.push(call.sentAt);
      methods.push(call.method);
      if (call.method === "heartbeat") {
        writes += 1;
        expect(call.request?.announce).toBe(true);
        transport.take("heartbeat").fail(forbidden());
        await settle();
      } else {
        await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "other", expiresInMs: 10 * T })));
      }
    }
    // Every I for 8·T would be about 40 calls; backing off, the waits reach T and stay there.
    const gaps = sent.slice(1).map((at, index) => at - sent[index]!);
    expect(writes).toBeGreaterThanOrEqual(3);
    expect(gaps.slice(-4)).toEqual([T, T, T, T]);
    expect(sent.length).toBeLessThanOrEqual(14);
    // The refused announcements (due every T/2) do not take every poll: it still reads the role.
    expect(methods.join(" ")).not.toMatch(/heartbeat heartbeat/);
  });

  it("a program that would rather stop on them does so from its error handler (as docs/sdk.md shows)", async () => {
    const { clock, transport, elector } = setup();
    elector.on("error", (error) => {
      if (error instanceof HaRequestError && !error.retryable) void elector.stop();
    });
    elector.start();
    await clock.advance(0);
    transport.take("getPrimary").fail(new EndpointNotFoundError("GetPrimary(scheduler)", "http://127.0.0.1:7071/primary/scheduler", undefined));
    await elector.stop();
    await clock.advance(10 * T);
    transport.expectIdle();
  });

  it("a follower whose calls fail (503s, timeouts) backs off: about 2·I, then 4·I (never more than T), jittered", async () => {
    // U = 0.999: each wait is just under its ceiling (2·I, then 4·I), never below I.
    const { clock, transport, elector } = setup({ random: () => 0.999 });
    elector.start();
    await clock.advance(0);
    const sent: number[] = [];
    const start = clock.now();
    transport.take("getPrimary").fail(new HaRequestError("GetPrimary(scheduler): 503 StoreUnavailable", "StoreUnavailable", 503));
    for (let n = 0; n < 5; n += 1) {
      await clock.advance(4 * I);
      const call = transport.take("getPrimary");
      sent.push(call.sentAt - start);
      if (n === 1) call.fail(new HaRequestError("GetPrimary(scheduler): no answer within 1000 ms.", "Timeout", undefined));
      else call.fail(new HaRequestError("GetPrimary(scheduler): 503 StoreUnavailable", "StoreUnavailable", 503));
      transport.expectIdle();
    }
    const gaps = sent.map((at, index) => at - (sent[index - 1] ?? 0));
    expect(gaps.map((gap) => Math.round(gap))).toEqual([1999, 3998, 3998, 3998, 3998]);
    // Before the fix it polled every I: 5 calls in the first 5 s instead of 2.
    expect(elector.stats().failures).toBe(6);
  });

  it("one answer ends the backoff: the next poll is I later again", async () => {
    const { clock, transport, elector, answer } = setup({ random: () => 0.999 });
    elector.start();
    await clock.advance(0);
    // The waits of the test above: 2·I, 4·I, 4·I (each × 0.9995).
    for (const wait of [1999, 3998, 3998]) {
      transport.take("getPrimary").fail(new HaRequestError("GetPrimary(scheduler): 503 StoreUnavailable", "StoreUnavailable", 503));
      await clock.advance(wait);
    }
    const answered = transport.take("getPrimary");
    await answer(answered, leaseView(UTYPE, primaryView({ uuid: "other", expiresInMs: 4000 })));
    await clock.advance(1.2 * I);
    expect(transport.take("getPrimary").sentAt - answered.sentAt).toBeCloseTo(1.1998 * I, 0);
  });

  it("honours Retry-After on a 503: no call of a follower before it, not even a due takeover", async () => {
    const { clock, transport, elector, answer } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "other", expiresInMs: 1500 })));
    await clock.advance(I);
    const refusedAt = clock.now();
    transport
      .take("getPrimary")
      .fail(new HaRequestError("GetPrimary(scheduler): 503 Overloaded: at capacity", "Overloaded", 503, { retryAfterMs: 3000 }));
    // The takeover was due at 1 501 ms and the backoff at I: both wait for the Retry-After.
    await clock.advance(3000 - 1);
    transport.expectIdle();
    await clock.advance(1);
    const next = transport.take("heartbeat");
    expect(next.sentAt - refusedAt).toBe(3000);
  });

  it("a primary's renewals stay on time through 503 Overloaded with Retry-After: safety before backoff", async () => {
    const { clock, transport, elector, becomePrimary } = setup();
    await becomePrimary();
    const overloaded = (): HaRequestError => new HaRequestError("UpdateHeartBeat(scheduler): 503 Overloaded: at capacity", "Overloaded", 503, { retryAfterMs: 10_000 });
    await clock.advance(I);
    const first = transport.take("heartbeat");
    first.fail(overloaded());
    await clock.advance(I);
    const second = transport.take("heartbeat");
    expect(second.sentAt - first.sentAt).toBe(I);
    expect(second.request).toMatchObject({ lease: "token-1" });
    second.fail(overloaded());
    await clock.advance(I);
    expect(transport.take("heartbeat").sentAt - second.sentAt).toBe(I);
    expect(elector.isPrimary()).toBe(true);
  });
});

describe("PrimaryElector: a standby's announcements", () => {
  it("a standby announces itself on its first poll as each uuid, then once its last announcement is T/2 old; every other poll is a read (docs/protocol.md#standbys)", async () => {
    const { clock, transport, elector, answer, accepted } = setup({ announce: true });
    const held = leaseView(UTYPE, primaryView({ uuid: "other", expiresInMs: 10 * T }));
    elector.start();
    const start = clock.now();
    const calls: string[] = [];
    const standBy = async (until: number): Promise<void> => {
      for (;;) {
        const call = await nextCall(clock, transport);
        const line = `${call.sentAt - start} ${call.method === "heartbeat" ? `announce ${call.request?.uuid}` : "read"}`;
        if (call.sentAt - start > until) return void expect(line).toBe(`${until + I} read`);
        calls.push(line);
        if (call.method === "heartbeat") expect(call.request?.announce).toBe(true);
        await answer(transport.take(call.method), call.method === "heartbeat" ? { outcome: "held", view: held } : held);
      }
    };
    await standBy(3 * T);
    // Polls every I (no jitter): an announcement at the first poll at least T/2 (2.5·I) after the last.
    expect(calls).toEqual(["0 announce uuid-1", "1000 read", "2000 read", "3000 announce uuid-1", "4000 read", "5000 read", "6000 announce uuid-1", "7000 read", "8000 read", "9000 announce uuid-1", "10000 read", "11000 read", "12000 announce uuid-1", "13000 read", "14000 read", "15000 announce uuid-1"]);

    // The role falls free: the announcement at 18000 is answered Conflict with no primary (an
    // announcement never starts a term), so a plain acquire follows at once, and is accepted;
    // the first renewal loses to a rival. The next incarnation, uuid-2, polls again within T/2
    // of uuid-1's last announcement, and that first poll is its announcement all the same.
    await answer(transport.take("getPrimary"), held);
    expect((await nextCall(clock, transport)).sentAt - start).toBe(17_000);
    await answer(transport.take("getPrimary"), held);
    const announcement = await nextCall(clock, transport);
    expect([announcement.sentAt - start, announcement.request]).toMatchObject([18_000, { uuid: "uuid-1", announce: true }]);
    await answer(transport.take("heartbeat"), { outcome: "conflict", view: leaseView(UTYPE, null) });
    const acquire = transport.take("heartbeat");
    expect(acquire.request).toMatchObject({ uuid: "uuid-1" });
    expect(acquire.request?.announce).toBeUndefined();
    await answer(acquire, accepted("uuid-1", 1));
    await clock.advance(I);
    await answer(transport.take("heartbeat"), { outcome: "held", view: held });
    expect(elector.uuid).toBe("uuid-2");
    const first = await nextCall(clock, transport);
    expect(first.sentAt - announcement.sentAt).toBeLessThan(T / 2);
    expect(first.method).toBe("heartbeat");
    expect(first.request).toMatchObject({ uuid: "uuid-2", announce: true });
  });
});

describe("PrimaryElector: standby polls are spread (jitter)", () => {
  it("each standby poll waits I·(1 + 0.2·U); the takeover keeps its exact time, renewals keep I", async () => {
    const draws = [0.5, 0.25, 0.999];
    const { clock, transport, elector, answer, accepted } = setup({ random: () => draws.shift() ?? 0 });
    elector.start();
    await clock.advance(0);
    const start = clock.now();
    const other = (expiresInMs: number): LeaseView => leaseView(UTYPE, primaryView({ uuid: "other", expiresInMs }));
    await answer(transport.take("getPrimary"), other(2500));
    // The next poll waits I·(1 + 0.2·0.5) = 1 100 ms.
    await clock.advance(1099);
    transport.expectIdle();
    await clock.advance(1);
    const second = transport.take("getPrimary");
    expect(second.sentAt - start).toBe(1100);
    await answer(second, other(1400));
    // Then I·1.05 = 1 050 ms.
    await clock.advance(1049);
    transport.expectIdle();
    await clock.advance(1);
    const third = transport.take("getPrimary");
    expect(third.sentAt - start).toBe(2150);
    await answer(third, other(350));
    // The next poll would wait I·1.1998; the takeover is not stretched: at 2 501 ms.
    await clock.advance(start + 2500 - clock.now());
    transport.expectIdle();
    await clock.advance(1);
    const takeover = transport.take("heartbeat");
    expect(takeover.sentAt - start).toBe(2501);
    await answer(takeover, accepted("uuid-1", 2));
    const renewals: number[] = [];
    for (let n = 0; n < 3; n += 1) {
      await clock.advance(I);
      const renewal = transport.take("heartbeat");
      renewals.push(renewal.sentAt - takeover.sentAt);
      await answer(renewal, accepted("uuid-1", 2));
    }
    expect(renewals).toEqual([I, 2 * I, 3 * I]);
  });

  it("a standby demoted by a 409 waits a jittered I before its first poll", async () => {
    const { clock, transport, answer, becomePrimary } = setup({ random: () => 0.5 });
    await becomePrimary(3);
    await clock.advance(I);
    await answer(transport.take("heartbeat"), { outcome: "held", view: leaseView(UTYPE, primaryView({ uuid: "usurper", epoch: 4 })) });
    const demotedAt = clock.now();
    await clock.advance(1.1 * I - 1);
    transport.expectIdle();
    await clock.advance(1);
    expect(transport.take("getPrimary").sentAt - demotedAt).toBe(1.1 * I);
  });
});

describe("PrimaryElector: the term's signal in `elected`", () => {
  it.each([
    ["rejected", "a 409 on renewal"],
    ["lease-expired", "the deadline"],
  ] as const)("is aborted with %s (%s) before the demoted handlers run", async (reason, _how) => {
    const { clock, transport, elector, answer, becomePrimary } = setup();
    let signal: AbortSignal | undefined;
    elector.on("elected", (payload) => void (signal = payload.signal));
    const seenByDemoted: unknown[] = [];
    elector.on("demoted", () => void seenByDemoted.push(signal?.reason));
    await becomePrimary(3);
    expect(signal?.aborted).toBe(false);
    await clock.advance(I);
    if (reason === "rejected") {
      await answer(transport.take("heartbeat"), { outcome: "held", view: leaseView(UTYPE, primaryView({ uuid: "usurper", epoch: 4 })) });
    } else {
      await clock.advance(T);
    }
    expect(seenByDemoted).toEqual([expect.objectContaining({ name: "TermEndedError", reason, uuid: "uuid-1", epoch: 3 })]);
    expect(() => signal!.throwIfAborted()).toThrow(`The term of uuid-1 at epoch 3 ended (${reason}).`);
  });

  it("the README worker: stop() aborts the signal, the lease is renewed while the work winds down, released after it", async () => {
    const { clock, transport, elector, answer, accepted, becomePrimary } = setup();
    const log: string[] = [];
    let work: Promise<void> = Promise.resolve();
    // As the README worker: the work runs on the term's signal, and the demoted handler returns it.
    elector.on("elected", ({ signal }) => {
      work = (async () => {
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        log.push("work winding down");
        await new Promise<void>((resolve) => clock.setTimeout(resolve, 1500));
        log.push("work done");
      })();
    });
    elector.on("demoted", () => work);
    await becomePrimary(2);
    const stopping = elector.stop().then(() => log.push("stopped"));
    await settle();
    expect(log).toEqual(["work winding down"]);
    await clock.advance(I);
    await answer(transport.take("heartbeat"), accepted("uuid-1", 2, "token-2b"));
    transport.expectIdle();
    await clock.advance(500);
    expect(log).toEqual(["work winding down", "work done"]);
    const release = transport.take("release");
    expect(release.options.lease).toBe("token-2b");
    await answer(release, { outcome: "released", view: leaseView(UTYPE, null) });
    await stopping;
    expect(log).toEqual(["work winding down", "work done", "stopped"]);
  });
});

describe("PrimaryElector and the end of a term (docs/protocol.md)", () => {
  it("a 409 LeaseRevoked on renewal demotes with `revoked`, releases nothing, and competes again as a new uuid", async () => {
    const { clock, transport, elector, events, answer, becomePrimary } = setup();
    await becomePrimary(3);
    await clock.advance(I);
    const revokedView = leaseView(UTYPE, primaryView({ uuid: "uuid-1", epoch: 3, expiresInMs: 4000, revoked: true }));
    await answer(transport.take("heartbeat"), { outcome: "revoked", view: revokedView });
    expect(elector.isPrimary()).toBe(false);
    expect(elector.uuid).toBe("uuid-2");
    expect(events.find((e) => e.event === "demoted")?.payload).toEqual({ reason: "revoked", uuid: "uuid-1", epoch: 3 });
    // The revoked lease runs out on its own (the user's work may still be stopping): no
    // release. The new uuid polls every I and takes over once the lease has expired.
    for (let expiresInMs = 3000; expiresInMs >= 0; expiresInMs -= I) {
      await clock.advance(I);
      await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "uuid-1", epoch: 3, expiresInMs, revoked: true })));
      transport.expectIdle();
    }
    await clock.advance(1);
    const put = transport.take("heartbeat");
    expect(put.request?.uuid).toBe("uuid-2");
  });

  it("resign(): demoted {resigned} with the term's signal aborted, released with its token, and a new uuid competes for a new epoch", async () => {
    const { clock, transport, elector, events, answer, accepted, becomePrimary } = setup();
    expect(elector.resign()).toBe(false); // not started, nothing held
    let signal: AbortSignal | undefined;
    elector.on("elected", (payload) => void (signal ??= payload.signal));
    await becomePrimary(4);
    expect(elector.resign()).toBe(true);
    expect(elector.resign()).toBe(false); // once per term
    await clock.advance(0);
    expect(elector.isPrimary()).toBe(false);
    expect(signal?.aborted).toBe(true);
    expect(events.filter((e) => e.event === "demoted").map((e) => e.payload)).toEqual([{ reason: "resigned", uuid: "uuid-1", epoch: 4 }]);
    const release = transport.take("release");
    expect([release.uuid, release.options.lease]).toEqual(["uuid-1", "token-4"]);
    await answer(release, { outcome: "released", view: leaseView(UTYPE, null) });
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
    const put = transport.take("heartbeat");
    expect(put.request?.uuid).toBe("uuid-2");
    await answer(put, accepted("uuid-2", 5));
    expect(elector.epoch).toBe(5);
  });

  it("an announcement that goes unanswered is not sent again at once: the next attempt is a poll, then the acquire", async () => {
    const ctx = setup({ announce: true });
    ctx.elector.start();
    await ctx.clock.advance(0);
    const announce = ctx.transport.take("heartbeat");
    expect(announce.request).toMatchObject({ uuid: "uuid-1", announce: true });
    announce.fail(new HaRequestError("UpdateHeartBeat(scheduler): no answer", "Timeout", undefined));
    await ctx.clock.advance(I);
    await ctx.answer(ctx.transport.take("getPrimary"), leaseView(UTYPE, null));
    expect(ctx.transport.take("heartbeat").request).toEqual({ uuid: "uuid-1", address: null });
  });

  describe("resign({ cooldownMs }): step down, watch, and compete again only after the cool-down", () => {
    const COOLDOWN = 3 * I;

    /** Primary at epoch 4, resigned with the cool-down, release answered; returns at the first poll after it. */
    const resigned = async (ctx: ReturnType<typeof setup>): Promise<void> => {
      await ctx.becomePrimary(4);
      expect(ctx.elector.resign({ cooldownMs: COOLDOWN })).toBe(true);
      await ctx.clock.advance(0);
      await ctx.answer(ctx.transport.take("release"), { outcome: "released", view: leaseView(UTYPE, null) });
    };

    it("keeps polling while nobody holds the role, and acquires only once the cool-down is over", async () => {
      const ctx = setup();
      await resigned(ctx);
      const resignedAt = ctx.clock.now();
      const changes: unknown[] = [];
      ctx.elector.on("primaryChanged", (payload) => void changes.push(payload.primary?.uuid ?? null));
      // The first poll, at once: another primary shows (it watches), then polls every I.
      await ctx.answer(ctx.transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "standby", epoch: 5, expiresInMs: 4500 })));
      ctx.transport.expectIdle();
      await ctx.clock.advance(I);
      // Nobody holds it now, yet no acquire before the cool-down is over.
      while (ctx.clock.now() < resignedAt + COOLDOWN) {
        await ctx.answer(ctx.transport.take("getPrimary"), leaseView(UTYPE, null));
        ctx.transport.expectIdle();
        await ctx.clock.advance(Math.min(I, resignedAt + COOLDOWN - ctx.clock.now()));
      }
      expect(changes).toEqual(["standby", null]);
      await ctx.answer(ctx.transport.take("getPrimary"), leaseView(UTYPE, null));
      const put = ctx.transport.take("heartbeat");
      expect(put.request?.uuid).toBe("uuid-2");
      expect(ctx.clock.now()).toBe(resignedAt + COOLDOWN);
    });

    it("holds a takeover of an expiring lease back until the cool-down is over, polling every I meanwhile", async () => {
      const ctx = setup();
      await resigned(ctx);
      const competeAt = ctx.clock.now() + COOLDOWN;
      const expiring = leaseView(UTYPE, primaryView({ uuid: "standby", epoch: 5, expiresInMs: 100 }));
      await ctx.answer(ctx.transport.take("getPrimary"), expiring);
      // The lease it saw expires 101 ms later, but the takeover waits for the cool-down; the polls go on every I.
      for (let poll = 1; poll < COOLDOWN / I; poll += 1) {
        await ctx.clock.advance(I);
        await ctx.answer(ctx.transport.take("getPrimary"), expiring);
        ctx.transport.expectIdle();
      }
      await ctx.clock.advance(competeAt - ctx.clock.now() - 1);
      ctx.transport.expectIdle();
      await ctx.clock.advance(1);
      expect(ctx.transport.take("heartbeat").request?.uuid).toBe("uuid-2");
    });

    it("refuses a cool-down that is not 0 or a positive number of milliseconds, and then changes nothing", async () => {
      const ctx = setup();
      await ctx.becomePrimary(4);
      for (const cooldownMs of [-1, Number.NaN, Number.POSITIVE_INFINITY, "5000"]) {
        expect(() => ctx.elector.resign({ cooldownMs: cooldownMs as number })).toThrow(/Expected `cooldownMs` to be 0 or a positive number of milliseconds/);
      }
      expect(ctx.elector.isPrimary()).toBe(true);
    });
  });

  describe("a follower whose acquire went unanswered (it may hold a term it never heard of)", () => {
    const unavailable = new HaRequestError("UpdateHeartBeat(scheduler): 503 StoreUnavailable", "StoreUnavailable", 503);
    /** start() → GetPrimary "none" → the acquire of uuid-1 fails; returns at the next poll. */
    const unansweredAcquire = async (ctx: ReturnType<typeof setup>): Promise<PendingCall> => {
      ctx.elector.start();
      await ctx.clock.advance(0);
      await ctx.answer(ctx.transport.take("getPrimary"), leaseView(UTYPE, null));
      const put = ctx.transport.take("heartbeat");
      expect(put.request?.uuid).toBe("uuid-1");
      put.fail(unavailable);
      await ctx.clock.advance(I);
      return ctx.transport.take("getPrimary");
    };

    it("keeps its uuid while the service shows it as the live primary, and re-acquires with it", async () => {
      const ctx = setup();
      const poll = await unansweredAcquire(ctx);
      await ctx.answer(poll, leaseView(UTYPE, primaryView({ uuid: "uuid-1", epoch: 1, expiresInMs: 4500 })));
      const again = ctx.transport.take("heartbeat");
      expect(again.request).toEqual({ uuid: "uuid-1", address: null });
      await ctx.answer(again, ctx.accepted("uuid-1", 1));
      expect(ctx.elector.epoch).toBe(1);
    });

    it("draws a new uuid as soon as an answer shows another primary, and takes over with that one", async () => {
      const ctx = setup();
      const poll = await unansweredAcquire(ctx);
      // uuid-1's acquire may have landed and been taken over since: it must not come back.
      await ctx.answer(poll, leaseView(UTYPE, primaryView({ uuid: "other", epoch: 2, expiresInMs: 300 })));
      expect(ctx.elector.uuid).toBe("uuid-2");
      // The 503 was one failed call after an answer that showed no lease: a lost message, not
      // lost contact (docs/protocol.md#sticky-recovery), so the takeover goes at the expiry.
      await ctx.clock.advance(300);
      ctx.transport.expectIdle();
      await ctx.clock.advance(1);
      expect(ctx.transport.take("heartbeat").request).toEqual({ uuid: "uuid-2", address: null });
    });

    it("draws a new uuid when an answer shows no primary", async () => {
      const ctx = setup();
      const poll = await unansweredAcquire(ctx);
      await ctx.answer(poll, leaseView(UTYPE, null));
      expect(ctx.transport.take("heartbeat").request).toEqual({ uuid: "uuid-2", address: null });
    });

    it("draws a new uuid when its next acquire is refused by another holder", async () => {
      const ctx = setup();
      const poll = await unansweredAcquire(ctx);
      await ctx.answer(poll, leaseView(UTYPE, primaryView({ uuid: "uuid-1", epoch: 1, expiresInMs: 100 })));
      await ctx.answer(ctx.transport.take("heartbeat"), { outcome: "held", view: leaseView(UTYPE, primaryView({ uuid: "other", epoch: 2 })) });
      expect(ctx.elector.uuid).toBe("uuid-2");
    });

    it("a follower that never sent an acquire keeps its uuid through any answer", async () => {
      const { clock, transport, elector, answer } = setup();
      elector.start();
      await clock.advance(0);
      await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "other", expiresInMs: 4000 })));
      await clock.advance(I);
      transport.take("getPrimary").fail(unavailable);
      await clock.advance(I);
      await answer(transport.take("getPrimary"), leaseView(UTYPE, primaryView({ uuid: "third", epoch: 2, expiresInMs: 4000 })));
      expect(elector.uuid).toBe("uuid-1");
    });
  });

  it("as a follower, a 409 LeaseRevoked to its acquire (its uuid's term ended) draws a new uuid, with no event", async () => {
    const { clock, transport, elector, names, answer, accepted } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
    await answer(transport.take("heartbeat"), { outcome: "revoked", view: leaseView(UTYPE, null) });
    expect(elector.uuid).toBe("uuid-2");
    await clock.advance(I);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
    const put = transport.take("heartbeat");
    expect(put.request?.uuid).toBe("uuid-2");
    await answer(put, accepted("uuid-2", 4));
    expect(names().filter((name) => name !== "primaryChanged")).toEqual(["elected"]);
  });

  it("an answer that names itself as the live holder at the held epoch never demotes: the deadline is kept and it renews again at once", async () => {
    const { clock, transport, elector, events, answer, accepted, becomePrimary } = setup();
    await becomePrimary(2);
    const deadline = clock.now() + (T - I);
    await clock.advance(I);
    const itself = leaseView(UTYPE, primaryView({ uuid: "uuid-1", epoch: 2, expiresInMs: 4990 }));
    for (const outcome of ["conflict", "held"] as const) {
      await answer(transport.take("heartbeat"), { outcome, view: itself });
      expect(elector.isPrimary()).toBe(true);
      expect(elector.uuid).toBe("uuid-1");
      expect(elector.leaseTimeLeftMs()).toBe(deadline - clock.now()); // not extended
      await clock.advance(0);
    }
    const retry = transport.take("heartbeat");
    expect(retry.sentAt).toBe(clock.now()); // at once, not I later
    expect(retry.request).toEqual({ uuid: "uuid-1", lease: "token-2" });
    await answer(retry, accepted("uuid-1", 2, "token-2b"));
    expect(elector.leaseTimeLeftMs()).toBe(T - I);
    expect(events.filter((e) => e.event === "demoted")).toEqual([]);
  });

  it("without further acceptance, a holder answered only by its own echo still steps down at the old deadline", async () => {
    const { clock, transport, elector, events, answer, becomePrimary } = setup();
    await becomePrimary(2);
    const itself = leaseView(UTYPE, primaryView({ uuid: "uuid-1", epoch: 2 }));
    await clock.advance(I);
    let echoes = 0;
    for (;;) {
      const call = transport.take("heartbeat");
      await clock.advance(500);
      if (!elector.isPrimary()) break;
      await answer(call, { outcome: "conflict", view: itself });
      echoes += 1;
      await clock.advance(0);
    }
    expect(echoes).toBe(5); // answered at I + 500, 1000, …, 3500: then the deadline T − I came
    expect(clock.now()).toBe(1_000_000 + T - I);
    expect(events.find((e) => e.event === "demoted")?.payload).toMatchObject({ reason: "lease-expired", uuid: "uuid-1" });
  });

  it("a 409 naming itself at another epoch, or revoked, is no echo: it demotes", async () => {
    const { clock, transport, elector, events, answer, becomePrimary } = setup();
    await becomePrimary(2);
    await clock.advance(I);
    await answer(transport.take("heartbeat"), { outcome: "conflict", view: leaseView(UTYPE, primaryView({ uuid: "uuid-1", epoch: 3 })) });
    expect(elector.isPrimary()).toBe(false);
    expect(events.find((e) => e.event === "demoted")?.payload).toMatchObject({ reason: "rejected", epoch: 2 });
  });

  it("a renewal accepted at another epoch ends the term: demoted (epoch-changed), then elected with the new epoch", async () => {
    const { clock, transport, elector, events, answer, accepted, becomePrimary } = setup();
    await becomePrimary(5);
    await clock.advance(I);
    // The service lost its state: the renewal created the lease afresh.
    await answer(transport.take("heartbeat"), accepted("uuid-1", 1, "token-new"));
    const terms = events.filter((e) => e.event === "demoted" || e.event === "elected").map((e) => [e.event, e.payload]);
    expect(terms).toEqual([
      ["elected", { uuid: "uuid-1", epoch: 5, signal: expect.any(AbortSignal) }],
      ["demoted", { reason: "epoch-changed", uuid: "uuid-1", epoch: 5 }],
      ["elected", { uuid: "uuid-1", epoch: 1, signal: expect.any(AbortSignal) }],
    ]);
    // Each term has its own signal: the old one is over, the new one is not.
    const [oldTerm, newTerm] = events.flatMap((e) => (e.event === "elected" ? [e.payload.signal] : []));
    expect(oldTerm!.reason).toMatchObject({ name: "TermEndedError", reason: "epoch-changed", epoch: 5 });
    expect(newTerm!.aborted).toBe(false);
    expect(elector.isPrimary()).toBe(true);
    expect(elector.epoch).toBe(1);
    expect(elector.stats()).toMatchObject({ elections: 2, demotions: 1 });
    // Still the same lease (same uuid): no release, and the next renewal uses the new token.
    await clock.advance(I);
    expect(transport.take("heartbeat").request).toEqual({ uuid: "uuid-1", lease: "token-new" });
    transport.expectIdle();
  });

  it("renewals omit the address, and send it again when an answer shows another one", async () => {
    const { clock, transport, elector, answer } = setup({ address: "10.0.0.4:5800" });
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
    const put = transport.take("heartbeat");
    expect(put.request).toEqual({ uuid: "uuid-1", address: "10.0.0.4:5800" });
    await answer(put, { outcome: "accepted", view: leaseView(UTYPE, primaryView({ uuid: "uuid-1", address: null })), lease: "t1" });
    await clock.advance(I);
    const fixUp = transport.take("heartbeat");
    expect(fixUp.request).toEqual({ uuid: "uuid-1", address: "10.0.0.4:5800", lease: "t1" });
    await answer(fixUp, { outcome: "accepted", view: leaseView(UTYPE, primaryView({ uuid: "uuid-1", address: "10.0.0.4:5800" })), lease: "t2" });
    await clock.advance(I);
    expect(transport.take("heartbeat").request).toEqual({ uuid: "uuid-1", lease: "t2" });
  });

  describe("stop() while an acquire is in flight waits for its answer instead of cutting it off", () => {
    /** start() → GetPrimary "none" → the acquire is sent; then stop(). */
    const stopWhileAcquiring = async () => {
      const fixture = setup();
      const { clock, transport, elector } = fixture;
      elector.start();
      await clock.advance(0);
      transport.take("getPrimary").respond(leaseView(UTYPE, null));
      await settle();
      const acquire = transport.take("heartbeat");
      let stopped = false;
      const stopping = elector.stop().then(() => (stopped = true));
      await settle();
      // Not cut off, and nothing released yet: the acquire may still be applied.
      expect([acquire.options.abortSignal?.aborted, acquire.settled, stopped]).toEqual([false, false, false]);
      transport.expectIdle();
      return { ...fixture, acquire, stopping };
    };

    it("accepted: released with its token, and never elected", async () => {
      const { transport, acquire, stopping, names, accepted, elector } = await stopWhileAcquiring();
      acquire.respond(accepted("uuid-1", 1, "t1"));
      await settle();
      const release = transport.take("release");
      expect([release.uuid, release.options.lease]).toEqual(["uuid-1", "t1"]);
      release.respond({ outcome: "released", view: leaseView(UTYPE, null) });
      await stopping;
      expect(names()).not.toContain("elected");
      expect(elector.isPrimary()).toBe(false);
    });

    it("unanswered (it may have landed): released without a token, so the service retires the uuid or revokes what it created", async () => {
      const { transport, acquire, stopping } = await stopWhileAcquiring();
      acquire.fail(new Error("socket hang up"));
      await settle();
      const release = transport.take("release");
      expect([release.uuid, release.options.lease]).toEqual(["uuid-1", undefined]);
      release.respond({ outcome: "released", view: leaseView(UTYPE, null) });
      await stopping;
    });
  });
});

describe("PrimaryElector options are checked where they enter", () => {
  const clock = new FakeClock();
  const transport = new ScriptedTransport(clock);
  // The environment's defaults must not leak in from the shell that runs the tests.
  beforeEach(() => void vi.stubEnv("HA_ENDPOINT", ""));
  afterEach(() => void vi.unstubAllEnvs());
  it.each([
    [{ utype: "no spaces", transport }, "Expected `utype` to be 1–128 characters"],
    [{ utype: "a" }, "Expected `endpoint` (the service URL, e.g. http://127.0.0.1:7071/api) or `transport` to be set, or HA_ENDPOINT in the environment."],
    [{ utype: "a", endpoint: "ftp://x" }, "Expected `endpoint` to be an http(s) URL"],
    [{ utype: "a", endpoint: "http://x", transport }, "Expected either `transport` or `endpoint`, not both"],
    [{ utype: "a", transport, affinity: "b" }, "Expected `address` to be set when `affinity` is"],
    [{ utype: "a", transport, affinity: "a", address: "h" }, "Expected `affinity` to name another utype"],
    [{ utype: "a", transport, retryDelayInMs: 0 }, "Expected `retryDelayInMs` to be a positive number of milliseconds, got 0."],
    [{ utype: "a", transport, address: "x".repeat(513) }, "Expected `address` to be where this participant can be reached"],
    [{ utype: "..", transport }, "Expected `utype` to be a name a URL path can address"],
    [{ utype: "a", transport, abortSignal: {} }, "Expected `abortSignal` to be an AbortSignal"],
    [{ utype: "a", transport, random: 0.5 }, "Expected `random` to be a function, got 0.5."],
    [{ utype: "a", transport, clock: { now: () => 0 } }, "Expected `clock` to have now(), setTimeout() and clearTimeout()."],
    [null, 'Expected the PrimaryElector options to be an object such as { utype: "scheduler", endpoint: "http://127.0.0.1:7071/api" }.'],
  ])("%o", (options, message) => {
    expect(() => new PrimaryElector(options as unknown as PrimaryElectorOptions)).toThrow(message);
  });

  it("HA_ENDPOINT is the default endpoint, checked under its own name; an explicit endpoint or transport wins", () => {
    vi.stubEnv("HA_ENDPOINT", "ftp://x");
    expect(() => new PrimaryElector({ utype: "a" })).toThrow('Expected `HA_ENDPOINT` to be an http(s) URL such as http://127.0.0.1:7071/api, got "ftp://x".');
    expect(() => new PrimaryElector({ utype: "a", endpoint: "http://127.0.0.1:7071/api" })).not.toThrow();
    expect(() => new PrimaryElector({ utype: "a", transport })).not.toThrow();
    vi.stubEnv("HA_ENDPOINT", " http://127.0.0.1:7071/api ");
    expect(() => new PrimaryElector({ utype: "a" })).not.toThrow();
  });

  it("start() twice is refused", () => {
    const elector = new PrimaryElector({ utype: "a", transport, clock, announce: false });
    elector.start();
    expect(() => elector.start()).toThrow("already started");
    void elector.stop();
  });
});

describe("PrimaryElector handlers", () => {
  it("a throwing handler is reported through error and does not disturb the loop; a throwing error handler escapes to 'uncaughtException'", async () => {
    const clock = new FakeClock();
    const transport = new ScriptedTransport(clock);
    const elector = new PrimaryElector({ utype: UTYPE, transport, clock, newUuid: () => "u1", announce: false });
    const reported: string[] = [];
    elector.on("elected", () => {
      throw new Error("handler bug");
    });
    elector.on("error", (error) => {
      reported.push(error.message);
      throw new Error("error handler bug");
    });
    // Fed back to `error` it would loop; dropped it would hide a bug: it escapes, as in Node.
    const caught = await collectUncaught(async () => {
      elector.start();
      await clock.advance(0);
      transport.take("getPrimary").respond(leaseView(UTYPE, null));
      await settle();
      transport.take("heartbeat").respond({ outcome: "accepted", view: leaseView(UTYPE, primaryView({ uuid: "u1" })), lease: "t" });
      await settle();
    });
    expect(caught.map((error) => (error as Error).message)).toEqual(["error handler bug"]);
    expect(elector.isPrimary()).toBe(true);
    expect(reported).toEqual(["handler bug"]);
    await clock.advance(I);
    expect(transport.take("heartbeat").request?.lease).toBe("t");
  });
});

describe("PrimaryElector: the renewal budget follows the round trip (docs/protocol.md#timing-rules)", () => {
  const floor = (T - 2 * I) / 8;

  it("with a fast service, a primary survives 3 lost renewals in a row: sent again after F, 2F, 4F, the fourth copy within T − I", async () => {
    const { clock, transport, elector, events, answer, accepted, becomePrimary } = setup();
    await becomePrimary();
    const acquiredAt = transport.all[1]!.sentAt;
    // A fast service: a few answered renewals of 20 ms.
    for (let n = 1; n <= 3; n += 1) {
      await clock.advance(acquiredAt + n * I - clock.now());
      const renewal = transport.take("heartbeat");
      await clock.advance(20);
      await answer(renewal, accepted("uuid-1", 1));
    }
    const lastAcceptedAt = acquiredAt + 3 * I;
    // Three copies lost in a row (no answer: lost on the way, or the answer lost): a fourth goes at I + 7F.
    await clock.advance(lastAcceptedAt + I + 7 * floor - clock.now());
    expect(elector.isPrimary()).toBe(true);
    const copies = [1, 2, 3, 4].map(() => transport.take("heartbeat"));
    expect(copies.map((copy) => copy.sentAt - lastAcceptedAt)).toEqual([I, I + floor, I + 3 * floor, I + 7 * floor]);
    const fourth = copies[3]!;
    // Answered in 20 ms: still primary, the deadline counted from the fourth copy.
    await clock.advance(20);
    expect(fourth.sentAt + 20).toBeLessThan(lastAcceptedAt + (T - I));
    await answer(fourth, accepted("uuid-1", 1, "token-after-loss"));
    expect(elector.isPrimary()).toBe(true);
    expect(elector.leaseTimeLeftMs()).toBe(fourth.sentAt + (T - I) - clock.now());
    expect(events.filter((e) => e.event === "demoted")).toEqual([]);
    // The lost copies are cut off once one is answered.
    expect(copies.every((copy) => copy.settled)).toBe(true);
    // The answer ends the backoff: the next renewal is I after the fourth copy, with the floor again.
    await clock.advance(fourth.sentAt + I + floor - 1 - clock.now());
    const next = transport.take("heartbeat");
    expect([next.sentAt - fourth.sentAt, next.request?.lease]).toEqual([I, "token-after-loss"]);
    transport.expectIdle();
    await clock.advance(1);
    expect(transport.take("heartbeat").sentAt - next.sentAt).toBe(floor);
  });

  it("a slow acquisition (a fleet starting, a new connection) sets no budget once a renewal is answered: after one fast renewal, three lost in a row are survived as with a fast service from the start", async () => {
    const { clock, transport, elector, events, answer, accepted } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary", UTYPE), leaseView(UTYPE, null));
    const put = transport.take("heartbeat", UTYPE);
    // The acquisition is answered after 1500 ms: the longest round trip this elector has seen.
    await clock.advance(1500);
    await answer(put, accepted(put.request!.uuid, 1));
    expect(elector.isPrimary()).toBe(true);
    let lastAcceptedAt = put.sentAt;
    // One renewal answered in 20 ms: the service is fast.
    for (let n = 0; n < 1; n += 1) {
      await clock.advance(Math.max(0, lastAcceptedAt + I - clock.now()));
      const renewal = transport.take("heartbeat");
      lastAcceptedAt = renewal.sentAt;
      await clock.advance(20);
      await answer(renewal, accepted("uuid-1", 1));
    }
    // Three copies lost in a row: the fourth still goes at I + 7F, before the deadline.
    await clock.advance(lastAcceptedAt + I + 7 * floor - clock.now());
    const copies = [1, 2, 3, 4].map(() => transport.take("heartbeat"));
    expect(copies.map((copy) => copy.sentAt - lastAcceptedAt)).toEqual([I, I + floor, I + 3 * floor, I + 7 * floor]);
    await clock.advance(20);
    await answer(copies[3]!, accepted("uuid-1", 1));
    expect(elector.isPrimary()).toBe(true);
    expect(events.filter((e) => e.event === "demoted")).toEqual([]);
  });

  it("a service that turns slow: the late answer to the first copy counts (the copy sent after F is cut off), and the budget follows the round trip", async () => {
    const { clock, transport, elector, events, answer, accepted, becomePrimary } = setup();
    await becomePrimary();
    // From now on every answer takes 900 ms (the acquire's took 0).
    const slow = 900;
    await clock.advance(I);
    const first = transport.take("heartbeat");
    await clock.advance(floor);
    const second = transport.take("heartbeat");
    expect(second.sentAt - first.sentAt).toBe(floor);
    await clock.advance(slow - floor);
    expect(first.settled).toBe(false);
    await answer(first, accepted("uuid-1", 1, "token-slow"));
    expect(second.settled).toBe(true);
    expect(elector.leaseTimeLeftMs()).toBe(first.sentAt + (T - I) - clock.now());
    // One late copy is one failed call; the copy cut off by the answer is none.
    expect(events.filter((e) => e.event === "error").map((e) => (e.payload as HaRequestError).code)).toEqual(["Timeout"]);
    // One sample of 900 ms after one of 0: SRTT 112.5, RTTVAR 225, so 1012.5 ms: the next
    // renewals, every I after the last, are answered before the budget passes: one copy each.
    for (let n = 1; n <= 5; n += 1) {
      await clock.advance(first.sentAt + n * I - clock.now());
      const renewal = transport.take("heartbeat");
      expect(renewal.request?.lease).toBe(n === 1 ? "token-slow" : "token-1");
      await clock.advance(slow);
      transport.expectIdle();
      await answer(renewal, accepted("uuid-1", 1, "token-1"));
    }
    expect(elector.isPrimary()).toBe(true);
    expect(events.filter((e) => e.event === "demoted")).toEqual([]);
    expect(elector.stats().failures).toBe(1);
  });

  it("at T = 3·I after one slow answer the budget is the whole window, yet a lost renewal gets a copy: at the deadline less SRTT + 4·RTTVAR", async () => {
    const tight = { intervalMs: I, timeoutMs: 3 * I };
    const { clock, transport, elector, events, answer, accepted } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary", UTYPE), leaseView(UTYPE, null, tight));
    const put = transport.take("heartbeat", UTYPE);
    await answer(put, accepted(put.request!.uuid, 1, "token-1", tight));
    // Renewals answered in 40 ms, then one in 250 ms: over the floor (T − 2I)/8 = 125 ms, so
    // for T the budget is the ceiling max(I, (T − I)/2) = I, all of the T − 2I = I to renew in.
    let lastAcceptedAt = put.sentAt;
    for (const ms of [40, 40, 40, 250]) {
      await clock.advance(lastAcceptedAt + I - clock.now());
      const renewal = transport.take("heartbeat");
      await clock.advance(ms);
      await answer(renewal, accepted("uuid-1", 1, "token-1", tight));
      // The slow one was sent again after the floor, and that copy cut off by the answer.
      expect(transport.takeCutOffCopies()).toBe(ms > 125 ? 1 : 0);
      lastAcceptedAt = renewal.sentAt;
    }
    // The next renewal is lost. SRTT = 7/8·40 + 1/8·250 = 66.25 ms; RTTVAR = 3/4·11.25 + 1/4·210
    // = 60.9375 ms: the copy goes 310 ms before the deadline, 690 ms after the renewal.
    await clock.advance(lastAcceptedAt + I - clock.now());
    const lost = transport.take("heartbeat");
    await clock.advance(689);
    transport.expectIdle();
    await clock.advance(1);
    const copy = transport.take("heartbeat");
    expect([copy.sentAt - lost.sentAt, copy.request?.lease]).toEqual([690, "token-1"]);
    await clock.advance(250);
    await answer(copy, accepted("uuid-1", 1, "token-2", tight));
    expect(elector.isPrimary()).toBe(true);
    expect(elector.leaseTimeLeftMs()).toBe(copy.sentAt + (tight.timeoutMs - tight.intervalMs) - clock.now());
    expect(events.filter((e) => e.event === "demoted")).toEqual([]);
  });

  it("at T = 3·I after one very slow answer (SRTT + 4·RTTVAR near the whole window), a lost renewal still gets a copy: the floor before the deadline", async () => {
    const tight = { intervalMs: I, timeoutMs: 3 * I };
    const { clock, transport, elector, events, answer, accepted } = setup();
    elector.start();
    await clock.advance(0);
    await answer(transport.take("getPrimary", UTYPE), leaseView(UTYPE, null, tight));
    const put = transport.take("heartbeat", UTYPE);
    await answer(put, accepted(put.request!.uuid, 1, "token-1", tight));
    let lastAcceptedAt = put.sentAt;
    for (const ms of [40, 40, 40, 800]) {
      await clock.advance(lastAcceptedAt + I - clock.now());
      const renewal = transport.take("heartbeat");
      await clock.advance(ms);
      await answer(renewal, accepted("uuid-1", 1, "token-1", tight));
      transport.takeCutOffCopies();
      lastAcceptedAt = renewal.sentAt;
    }
    // SRTT = 7/8·40 + 1/8·800 = 135 ms, RTTVAR = 3/4·11.25 + 1/4·760 = 198.4375 ms: a copy
    // answered before the deadline would go before the first is overdue. It goes at the
    // floor (T − 2I)/8 = 125 ms before the deadline instead, 875 ms after the renewal.
    await clock.advance(lastAcceptedAt + I - clock.now());
    const lost = transport.take("heartbeat");
    await clock.advance(874);
    transport.expectIdle();
    await clock.advance(1);
    const copy = transport.take("heartbeat");
    expect(copy.sentAt - lost.sentAt).toBe(875);
    await clock.advance(40);
    await answer(copy, accepted("uuid-1", 1, "token-2", tight));
    expect(elector.isPrimary()).toBe(true);
    expect(events.filter((e) => e.event === "demoted")).toEqual([]);
  });

  it("a service that stops answering gets at most four copies of a renewal per lease, then one look per I: no hammering", async () => {
    const { clock, transport, elector, becomePrimary } = setup();
    await becomePrimary();
    const downAt = clock.now();
    // Every call from here on hangs until its own budget cuts it off; 30 s of outage.
    await clock.advance(30_000);
    const calls = transport.all.slice(2);
    const renewals = calls.filter((call) => call.method === "heartbeat" && call.request?.lease !== undefined);
    expect(renewals.map((call) => call.sentAt - downAt)).toEqual([I, I + floor, I + 3 * floor, I + 7 * floor]);
    expect(elector.isPrimary()).toBe(false);
    // After the demotion (at T − I) only polls: at once, then every I·(1 + 0.2·U), U = 0
    // here. The ex-holder does not back off as a standby does: it must find the service
    // within about I of its return to take its role back (docs/protocol.md#sticky-recovery).
    const polls = calls.filter((call) => call.method === "getPrimary").map((call) => call.sentAt - downAt);
    expect(polls).toEqual(Array.from({ length: 27 }, (_, n) => T - I + n * I));
    expect(calls.filter((call) => call.method === "heartbeat").length).toBe(renewals.length);
    // 4 renewals + 27 polls in 30 s: about one call per I, what the same primary sends while
    // the service answers; never more.
    expect(calls.length).toBe(31);
  });
});

/** A 403 of the grants: the caller may read the role, not write it. */
function forbidden(): ForbiddenError {
  return new ForbiddenError("UpdateHeartBeat(scheduler)", "managed identity b", "The identity b may not hold or release the role scheduler");
}

/** Advances the clock 1 ms at a time until the elector makes its next call (within 2·T); that call, not yet taken. */
async function nextCall(clock: FakeClock, transport: ScriptedTransport): Promise<PendingCall> {
  const made = transport.all.length;
  for (let waited = 0; transport.all.length === made; waited += 1) {
    expect(waited, "no call within 2·T").toBeLessThan(2 * T);
    await clock.advance(1);
  }
  return transport.all[made]!;
}

import { describe, expect, it } from "vitest";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";
import { UnauthorizedError } from "../../shared/sdk/auth/unauthorized-error.js";
import type { HeartbeatResult, LeaseView, ReleaseResult } from "../../shared/sdk/index.js";
import { PrimaryElector, type ElectorEvents, type PrimaryElectorOptions } from "../../shared/sdk/election/primary-elector.js";
import { I, T, leaseView, primaryView, ScriptedTransport, type PendingCall } from "../helpers/sdk-fakes.js";
import { FakeClock, settle } from "../helpers/fake-clock.js";

/**
 * Ride-through (docs/protocol.md#ride-through) on the injected clock: with `rideThroughMs`, a
 * primary whose renewals get no answer, a timeout or a 5xx stays primary up to that long
 * past its deadline, its epoch unchanged; its first answered renewal continues the term or
 * ends it at once; a refusal never rides.
 */

const UTYPE = "scheduler";
const RIDE = 3 * T;
const down = (): HaRequestError => new HaRequestError("503 StoreUnavailable", "StoreUnavailable", 503);

type Recorded = { [E in keyof ElectorEvents]: { event: E; at: number; payload: ElectorEvents[E] } }[keyof ElectorEvents];

async function primaryWithRideThrough(options: Partial<PrimaryElectorOptions> = {}) {
  const clock = new FakeClock();
  const transport = new ScriptedTransport(clock);
  let counter = 0;
  const elector = new PrimaryElector({ utype: UTYPE, transport, clock, newUuid: () => `uuid-${++counter}`, random: () => 0, announce: false, rideThroughMs: RIDE, ...options });
  const events: Recorded[] = [];
  for (const event of ["elected", "demoted", "ridingThrough"] as const) {
    elector.on(event, (payload: unknown) => void events.push({ event, at: clock.now(), payload } as Recorded));
  }
  elector.on("error", () => undefined);
  const answer = async (call: PendingCall, value: LeaseView | HeartbeatResult | ReleaseResult): Promise<void> => {
    call.respond(value);
    await settle();
  };
  const accepted = (uuid: string, epoch: number, lease = `token-${epoch}`): HeartbeatResult => ({
    outcome: "accepted",
    view: leaseView(UTYPE, primaryView({ uuid, epoch, expiresInMs: T })),
    lease,
  });
  elector.start();
  await clock.advance(0);
  await answer(transport.take("getPrimary"), leaseView(UTYPE, null));
  const acquire = transport.take("heartbeat");
  await answer(acquire, accepted("uuid-1", 7));
  const deadline = acquire.sentAt + T - I;
  /** Every call still open fails as `fail` says, while the clock moves to `until`. */
  const failUntil = async (until: number, fail: () => Error = down): Promise<void> => {
    while (clock.now() < until) {
      for (const call of transport.all) if (!call.settled) call.fail(fail());
      await clock.advance(Math.min(10, until - clock.now()));
    }
  };
  const open = (): PendingCall[] => transport.all.filter((call) => !call.settled);
  const names = () => events.map((e) => e.event);
  return { clock, transport, elector, events, answer, accepted, deadline, failUntil, open, names };
}

describe("ride-through: a primary stays primary through an outage, its epoch unchanged", () => {
  it("past its deadline it rides through (`ridingThrough` with the time left), keeps renewing every I, and the first accepted renewal continues the term", async () => {
    const { clock, elector, events, answer, accepted, deadline, failUntil, open, names } = await primaryWithRideThrough();
    await failUntil(deadline - 1);
    expect(elector.exclusiveTimeLeftMs()).toBe(1);
    expect(elector.leaseTimeLeftMs()).toBe(1 + RIDE);
    await failUntil(deadline);
    await clock.advance(0);
    expect(events.at(-1)).toEqual({ event: "ridingThrough", at: deadline, payload: { uuid: "uuid-1", epoch: 7, leftMs: RIDE } });
    // Two outages' worth of T past the deadline: still primary, same epoch, nothing exclusive.
    await failUntil(deadline + 2 * T);
    expect(elector.isPrimary()).toBe(true);
    expect(elector.epoch).toBe(7);
    expect(elector.exclusiveTimeLeftMs()).toBe(0);
    expect(elector.leaseTimeLeftMs()).toBe(RIDE - 2 * T);
    expect(names()).toEqual(["elected", "ridingThrough"]);
    // The service is back: the next renewal, with the same uuid and token, is accepted.
    while (open().length === 0) await clock.advance(1);
    const renewal = open()[0]!;
    expect(renewal.request).toEqual({ uuid: "uuid-1", lease: "token-7" });
    await answer(renewal, accepted("uuid-1", 7, "token-7b"));
    expect(elector.isPrimary()).toBe(true);
    expect(elector.epoch).toBe(7);
    expect(elector.exclusiveTimeLeftMs()).toBe(renewal.sentAt + T - I - clock.now());
    expect(names()).toEqual(["elected", "ridingThrough"]);
    // Renewing every I from there, on the new token.
    await clock.advance(renewal.sentAt + I - clock.now());
    expect(open()[0]?.request).toEqual({ uuid: "uuid-1", lease: "token-7b" });
  });

  it("renewals keep the cadence I while they fail fast (503s) during the ride", async () => {
    const { transport, deadline, failUntil } = await primaryWithRideThrough();
    await failUntil(deadline + 3 * T);
    const renewals = transport.all.filter((call) => call.method === "heartbeat" && call.sentAt > deadline).map((call) => call.sentAt - deadline);
    expect(renewals.length).toBeGreaterThanOrEqual(3 * T / I - 1);
    for (let n = 1; n < renewals.length; n += 1) expect(renewals[n]! - renewals[n - 1]!).toBeLessThanOrEqual(I);
  });

  it("a service that stops answering (every call hangs until its budget): renewals go on, within T − I each, and the first answered one continues the term", async () => {
    const { clock, transport, elector, answer, accepted, deadline, open, names } = await primaryWithRideThrough();
    await clock.advance(deadline + 2 * T - clock.now());
    expect(elector.isPrimary()).toBe(true);
    const renewals = transport.all.filter((call) => call.method === "heartbeat" && call.request?.lease !== undefined);
    const riding = renewals.filter((call) => call.sentAt >= deadline);
    // Each renewal of the ride sends its copies within T − I, then the next renewal begins;
    // a copy goes at least every I, so the rider finds the service within about I of its return.
    expect(riding.length).toBeGreaterThanOrEqual(2 * T / I);
    for (const call of riding) expect(call.options.timeoutInMs).toBeLessThanOrEqual(T - I);
    for (let n = 1; n < riding.length; n += 1) expect(riding[n]!.sentAt - riding[n - 1]!.sentAt).toBeLessThanOrEqual(I);
    // Back: the copy still open is answered.
    const copy = open().find((call) => call.method === "heartbeat")!;
    await answer(copy, accepted("uuid-1", 7));
    expect(elector.exclusiveTimeLeftMs()).toBe(copy.sentAt + T - I - clock.now());
    expect(names()).toEqual(["elected", "ridingThrough"]);
  });

  it("a ride-through that gets no answer ends at deadline + rideThroughMs: demoted lease-expired, then the role is taken back as after any outage", async () => {
    const { clock, elector, events, deadline, failUntil } = await primaryWithRideThrough();
    await failUntil(deadline + RIDE - 1);
    expect(elector.isPrimary()).toBe(true);
    await failUntil(deadline + RIDE);
    await clock.advance(0);
    expect(elector.isPrimary()).toBe(false);
    expect(events.filter((e) => e.event === "demoted").map((e) => [e.at - deadline, e.payload])).toEqual([[RIDE, { reason: "lease-expired", uuid: "uuid-1", epoch: 7 }]]);
    expect(elector.uuid).toBe("uuid-2");
  });

  it("an answer other than accepted ends the ride at once: a takeover seen (409 LeaseRevoked, another holder) demotes `rejected`", async () => {
    const { clock, elector, events, answer, deadline, failUntil, open } = await primaryWithRideThrough();
    await failUntil(deadline + T);
    while (open().length === 0) await clock.advance(1);
    const renewal = open()[0]!;
    await answer(renewal, { outcome: "revoked", view: leaseView(UTYPE, primaryView({ uuid: "standby", epoch: 8 })) });
    expect(elector.isPrimary()).toBe(false);
    expect(events.at(-1)).toMatchObject({ event: "demoted", at: clock.now(), payload: { reason: "rejected", uuid: "uuid-1", epoch: 7 } });
  });

  it("a refusal that is no outage (a 401) never rides: the term ends at its deadline, and one during a ride ends it at once", async () => {
    const before = await primaryWithRideThrough();
    const refusal = (): Error => new UnauthorizedError("UpdateHeartBeat(scheduler)", "http://127.0.0.1:7071/api", undefined);
    await before.failUntil(before.deadline - 2 * I);
    await before.failUntil(before.deadline, refusal);
    await before.clock.advance(0);
    expect(before.elector.isPrimary()).toBe(false);
    expect(before.names()).toEqual(["elected", "demoted"]);
    expect(before.events.at(-1)?.at).toBe(before.deadline);

    const during = await primaryWithRideThrough();
    await during.failUntil(during.deadline + T);
    expect(during.elector.isPrimary()).toBe(true);
    while (during.open().length === 0) await during.clock.advance(1);
    during.open()[0]!.fail(refusal());
    await during.clock.advance(0);
    expect(during.elector.isPrimary()).toBe(false);
    expect(during.events.at(-1)).toMatchObject({ event: "demoted", at: during.clock.now(), payload: { reason: "lease-expired" } });
  });

  it("a 503 Overloaded is a live service's refusal, not an outage: no ride-through on it", async () => {
    const { clock, elector, deadline, failUntil, names } = await primaryWithRideThrough();
    await failUntil(deadline, () => new HaRequestError("503 Overloaded", "Overloaded", 503, { retryAfterMs: 1000 }));
    await clock.advance(0);
    expect(elector.isPrimary()).toBe(false);
    expect(names()).toEqual(["elected", "demoted"]);
  });

  it("stop() during a ride: demoted `stopped` with its handlers awaited, then released with the token", async () => {
    const { clock, elector, events, answer, deadline, failUntil, open } = await primaryWithRideThrough();
    await failUntil(deadline + T);
    let finishWork!: () => void;
    elector.on("demoted", () => new Promise<void>((resolve) => (finishWork = resolve)));
    const stopping = elector.stop();
    await settle();
    expect(events.at(-1)).toMatchObject({ event: "demoted", payload: { reason: "stopped", uuid: "uuid-1", epoch: 7 } });
    expect(elector.isPrimary()).toBe(false);
    for (const call of open()) call.fail(down());
    finishWork();
    await clock.advance(0);
    const release = open().find((call) => call.method === "release")!;
    expect(release.options.lease).toBe("token-7");
    await answer(release, { outcome: "released", view: leaseView(UTYPE, null, undefined, 7) });
    await stopping;
  });

  it("a process paused past its deadline but within the ride-through wakes as primary (fencing is what protects its writes), and past it wakes demoted", async () => {
    const within = await primaryWithRideThrough();
    within.clock.pause(within.deadline + T - within.clock.now());
    expect(within.elector.isPrimary()).toBe(true);
    expect(within.elector.exclusiveTimeLeftMs()).toBe(0);
    await within.clock.advance(0);
    expect(within.names()).toContain("ridingThrough");

    const past = await primaryWithRideThrough();
    past.clock.pause(past.deadline + RIDE - past.clock.now());
    expect(past.elector.isPrimary()).toBe(false);
    for (const call of past.open()) call.fail(down());
    await past.clock.advance(0);
    expect(past.names()).toEqual(["elected", "demoted"]);
  });
});

describe("rideThroughMs is checked where it enters", () => {
  it.each([[-1], [1.5], [Number.NaN], [2 ** 31], ["5s"]])("refuses %s with a message naming it", (value) => {
    const clock = new FakeClock();
    expect(() => new PrimaryElector({ utype: UTYPE, transport: new ScriptedTransport(clock), clock, rideThroughMs: value as number })).toThrow(/Expected `rideThroughMs` to be 0 \(off\) or a whole number of milliseconds up to 2147483647/);
  });

  it("0, the default, is off: the deadline ends the term", async () => {
    const { clock, elector, deadline, failUntil, names } = await primaryWithRideThrough({ rideThroughMs: 0 });
    await failUntil(deadline);
    await clock.advance(0);
    expect(elector.isPrimary()).toBe(false);
    expect(names()).toEqual(["elected", "demoted"]);
  });
});

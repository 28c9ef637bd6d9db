import { describe, expect, it } from "vitest";
import type { Term } from "../../shared/sdk/election/elector-role.js";
import { RideThrough } from "../../shared/sdk/election/ride-through.js";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { I, T } from "../helpers/sdk-fakes.js";

/**
 * Ride-through's rules alone (docs/protocol.md#ride-through), on a fake clock: when a term
 * ends, what a renewal may take while riding, what ends or restores the right to ride, and
 * the moment the ride begins. The elector's use of them is tested in test/sdk/ride-through.test.ts.
 */

const RIDE_MS = 3 * T;
const timing = { intervalMs: I, timeoutMs: T };

function setup(rideMs = RIDE_MS, leads = true) {
  const clock = new FakeClock(0);
  const rides: Array<{ epoch: number; at: number; leftMs: number }> = [];
  const ride = new RideThrough(rideMs, clock, () => leads, (term, leftMs) => rides.push({ epoch: term.epoch, at: clock.now(), leftMs }));
  const term: Term = { uuid: "u", epoch: 4, lease: "l", deadline: T - I, ended: new AbortController(), rides: true, ridingSince: undefined };
  return { clock, ride, term, rides };
}

describe("RideThrough", () => {
  it("ends a term that may ride that much after its deadline, and at its deadline when off or refused", () => {
    const { ride, term } = setup();
    expect(ride.endOf(term)).toBe(T - I + RIDE_MS);
    expect(ride.refused(term, new HaRequestError("forbidden", "Forbidden", 403))).toBe(true);
    expect(ride.endOf(term)).toBe(T - I);
    expect(ride.refused(term, new HaRequestError("forbidden", "Forbidden", 403))).toBe(false);
    const off = setup(0);
    expect(off.ride.endOf(off.term)).toBe(T - I);
  });

  it("rides on through outages: a timeout or a 5xx takes nothing away", () => {
    const { ride, term } = setup();
    expect(ride.refused(term, new HaRequestError("no answer", "Timeout", undefined))).toBe(false);
    expect(ride.refused(term, new HaRequestError("down", "StoreUnavailable", 503))).toBe(false);
    expect(term.rides).toBe(true);
  });

  it("says the ride began once, at the deadline, with the time left; a renewal after it ends the ride", async () => {
    const { clock, ride, term, rides } = setup();
    ride.watch(term);
    await clock.advance(T - I - 1);
    expect(rides).toEqual([]);
    await clock.advance(1);
    expect(rides).toEqual([{ epoch: 4, at: T - I, leftMs: RIDE_MS }]);
    expect(term.ridingSince).toBe(T - I);
    ride.watch(term);
    await clock.advance(I);
    expect(rides).toHaveLength(1);
    term.deadline = clock.now() + T - I;
    ride.renewed(term);
    expect(term.ridingSince).toBeUndefined();
    ride.watch(term);
    await clock.advance(T - I);
    expect(rides).toEqual([{ epoch: 4, at: T - I, leftMs: RIDE_MS }, { epoch: 4, at: term.deadline, leftMs: RIDE_MS }]);
  });

  it("watches nothing once unwatched (the lead phase ended)", async () => {
    const { clock, ride, term, rides } = setup();
    ride.watch(term);
    ride.unwatch();
    await clock.advance(2 * T);
    expect(rides).toEqual([]);
  });

  it("says nothing when off, or for a term no longer led", async () => {
    for (const { clock, ride, term, rides } of [setup(0), setup(RIDE_MS, false)]) {
      ride.watch(term);
      await clock.advance(T);
      expect(rides).toEqual([]);
      expect(term.ridingSince).toBeUndefined();
    }
  });

  it("bounds a renewal by the deadline before it, and by T − I within the ride, copies at least every I, while riding", async () => {
    const { clock, ride, term } = setup();
    expect(ride.renewalBounds(term, timing)).toEqual({ deadline: T - I, capMs: Number.POSITIVE_INFINITY });
    await clock.advance(T - I);
    expect(ride.renewalBounds(term, timing)).toEqual({ deadline: T - I + (T - I), capMs: I });
    await clock.advance(RIDE_MS - I);
    expect(ride.renewalBounds(term, timing)).toEqual({ deadline: T - I + RIDE_MS, capMs: I });
  });
});

import { describe, expect, it } from "vitest";
import type { LeaseView } from "../../shared/contract/lease-view.js";
import { primarySummary } from "../../shared/cli/primary-summary.js";

/** `ha-module primary <utype>`'s lines for people: the primary, a planned handover, the standbys. */
const HELD: LeaseView = {
  utype: "scheduler",
  primary: { uuid: "u-holder", address: "p1.internal:5800", epoch: 3, renewedAt: "2026-01-01T12:00:00.000Z", expiresInMs: 1800, revoked: false },
  epoch: 3,
  intervalMs: 400,
  timeoutMs: 2500,
  handover: null,
  standbys: [
    { uuid: "u-two", address: "p2.internal:5800", seenAt: "2026-01-01T12:00:00.300Z" },
    { uuid: "u-three", address: null, seenAt: "2026-01-01T11:59:59.000Z" },
  ],
};
// The service's clock when it answered: renewedAt + T − expiresInMs = 12:00:00.700.
const FAR_OFF_LOCAL_CLOCK = Date.parse("2030-06-01T00:00:00Z");

describe("primarySummary", () => {
  it("names the primary and each standby with its address, uuid and age on the service's clock, not this machine's", () => {
    expect(primarySummary(HELD, FAR_OFF_LOCAL_CLOCK)).toEqual([
      "scheduler: primary p1.internal:5800, uuid u-holder, epoch 3, lease left 1.8 s.",
      "  standby p2.internal:5800, uuid u-two, seen 0.4 s ago.",
      "  standby (no address), uuid u-three, seen 1.7 s ago.",
    ]);
  });

  it("shows a pending handover to a named standby by its address", () => {
    const view: LeaseView = { ...HELD, handover: { to: "u-two", requestedAt: "2026-01-01T12:00:00.500Z", phase: "pending", until: "2026-01-01T12:00:03.000Z" } };
    expect(primarySummary(view, FAR_OFF_LOCAL_CLOCK)[1]).toBe(
      "  handing over to p2.internal:5800 (u-two): asked at 2026-01-01T12:00:00.500Z; the primary steps down at its next renewal (refused after 2026-01-01T12:00:03.000Z).",
    );
  });

  it("shows a handover to any standby, and a role reserved for a standby after its primary's release", () => {
    const pending: LeaseView = { ...HELD, handover: { to: null, requestedAt: "2026-01-01T12:00:00.500Z", phase: "pending", until: "2026-01-01T12:00:03.000Z" } };
    expect(primarySummary(pending)[1]).toMatch(/^ {2}handing over to any standby: /);
    const reserved: LeaseView = {
      ...HELD,
      primary: null,
      standbys: [],
      handover: { to: "u-gone", requestedAt: "2026-01-01T12:00:00.500Z", phase: "reserved", until: "2026-01-01T12:00:04.000Z" },
    };
    expect(primarySummary(reserved)).toEqual([
      "scheduler: no primary (epoch 3).",
      "  reserved for u-gone until 2026-01-01T12:00:04.000Z: nobody else may take over before.",
      "  standbys: none seen within the lease timeout.",
    ]);
  });

  it("says when a revoked lease runs out, and shows no standby lines when the answer has none", () => {
    const revoked: LeaseView = { ...HELD, standbys: undefined, primary: { ...HELD.primary!, revoked: true } };
    expect(primarySummary(revoked)).toEqual(["scheduler: primary p1.internal:5800, uuid u-holder, epoch 3, revoked, runs out in 1.8 s."]);
  });

  it("shows priorities where stated (docs/protocol.md#priorities-and-preemption), and a handover a preemption asked for", () => {
    const view: LeaseView = {
      ...HELD,
      primary: { ...HELD.primary!, priority: -1 },
      standbys: [{ ...HELD.standbys![0]!, priority: 2 }, HELD.standbys![1]!],
      handover: { to: "u-two", requestedAt: "2026-01-01T12:00:00.500Z", phase: "pending", until: "2026-01-01T12:00:03.000Z", reason: "preempt" },
    };
    expect(primarySummary(view, FAR_OFF_LOCAL_CLOCK)).toEqual([
      "scheduler: primary p1.internal:5800, uuid u-holder, epoch 3, priority -1, lease left 1.8 s.",
      "  handing over to p2.internal:5800 (u-two) (preempted: a standby of higher priority stood by for its hold-down): asked at 2026-01-01T12:00:00.500Z; the primary steps down at its next renewal (refused after 2026-01-01T12:00:03.000Z).",
      "  standby p2.internal:5800, uuid u-two, priority 2, seen 0.4 s ago.",
      "  standby (no address), uuid u-three, seen 1.7 s ago.",
    ]);
  });
});

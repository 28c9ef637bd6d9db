import { describe, expect, it } from "vitest";
import type { LeaseView } from "../../shared/contract/lease-view.js";
import { HoldDown } from "../../shared/sdk/election/preemption.js";

/** The standby's hold-down before it preempts (docs/protocol.md#priorities-and-preemption), on plain numbers for time. */
const HOLD = 30_000;
const held = (overrides: Partial<LeaseView> = {}, primary: Partial<NonNullable<LeaseView["primary"]>> = {}): LeaseView => ({
  utype: "scheduler",
  primary: { uuid: "holder", address: "head-2:1", epoch: 3, renewedAt: "2026-01-01T00:00:00.000Z", expiresInMs: 4000, revoked: false, ...primary },
  epoch: 3,
  intervalMs: 1000,
  timeoutMs: 5000,
  handover: null,
  ...overrides,
});

describe("HoldDown", () => {
  it("is due once it has stood by the hold-down as one uuid, from the first answer showing another holder", () => {
    const hold = new HoldDown(1, HOLD);
    expect(hold.dueAt()).toBeUndefined();
    hold.observe(held(), "me", 1000);
    hold.observe(held(), "me", 20_000);
    expect(hold.dueAt()).toBe(1000 + HOLD);
    expect(hold.wants(held(), "me", 1000 + HOLD - 1)).toBe(false);
    expect(hold.wants(held(), "me", 1000 + HOLD)).toBe(true);
  });

  it("starts again after a failed call, and for a new uuid: it must stand by continuously", () => {
    const hold = new HoldDown(1, HOLD);
    hold.observe(held(), "me", 0);
    hold.interrupt();
    expect(hold.wants(held(), "me", HOLD)).toBe(false);
    hold.observe(held(), "me", 5000);
    expect(hold.dueAt()).toBe(5000 + HOLD);
    hold.observe(held(), "me-2", 6000);
    expect(hold.dueAt()).toBe(6000 + HOLD);
    expect(hold.wants(held(), "me", 6000 + HOLD)).toBe(false);
    expect(hold.wants(held(), "me-2", 6000 + HOLD)).toBe(true);
  });

  it("an answer with no holder, or its own, neither starts nor ends standing by", () => {
    const hold = new HoldDown(1, HOLD);
    hold.observe(held({ primary: null }), "me", 0);
    expect(hold.dueAt()).toBeUndefined();
    hold.observe(held(), "me", 10);
    hold.observe(held({ primary: null }), "me", 20);
    expect(hold.dueAt()).toBe(10 + HOLD);
  });

  it.each([
    ["the holder's priority is equal", held({}, { priority: 1 })],
    ["the holder's priority is higher", held({}, { priority: 2 })],
    ["the holder is revoked", held({}, { revoked: true })],
    ["nobody holds the role", held({ primary: null })],
    ["an operator's handover is pending", held({ handover: { to: "other", requestedAt: "2026-01-01T00:00:01.000Z", phase: "pending", until: "2026-01-01T00:00:06.000Z" } })],
    ["a preemption to it is pending already", held({ handover: { to: "me", requestedAt: "2026-01-01T00:00:01.000Z", phase: "pending", until: "2026-01-01T00:00:06.000Z", reason: "preempt" } })],
  ])("does not ask when %s", (_name, view) => {
    const hold = new HoldDown(1, HOLD);
    hold.observe(held(), "me", 0);
    expect(hold.wants(view, "me", HOLD)).toBe(false);
  });

  it("asks over a preemption pending for another standby: the service re-points it only to a higher one", () => {
    const hold = new HoldDown(2, HOLD);
    hold.observe(held(), "me", 0);
    const other = held({ handover: { to: "m", requestedAt: "2026-01-01T00:00:01.000Z", phase: "pending", until: "2026-01-01T00:00:06.000Z", reason: "preempt" } });
    expect(hold.wants(other, "me", HOLD)).toBe(true);
  });

  it("never asks with the hold-down off, nor after an operator moved the role away, until a later operator's handover", () => {
    const off = new HoldDown(5, undefined);
    off.observe(held(), "me", 0);
    expect(off.enabled).toBe(false);
    expect(off.wants(held(), "me", 10 * HOLD)).toBe(false);

    const moved = new HoldDown(5, HOLD);
    moved.movedAwayByOperator("2026-01-01T00:00:01.000Z");
    moved.observe(held(), "me", 0);
    // The same handover seen again (reserved for its standby) changes nothing.
    moved.observe(held({ handover: { to: "holder", requestedAt: "2026-01-01T00:00:01.000Z", phase: "reserved", until: "2026-01-01T00:00:06.000Z" } }), "me", 1);
    expect(moved.wants(held(), "me", 10 * HOLD)).toBe(false);
    moved.observe(held({ handover: { to: null, requestedAt: "2026-01-01T00:01:00.000Z", phase: "pending", until: "2026-01-01T00:01:05.000Z" } }), "me", 2);
    expect(moved.wants(held(), "me", 10 * HOLD)).toBe(true);
  });
});

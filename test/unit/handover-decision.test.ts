import { describe, expect, it } from "vitest";
import { decide, type LeaseAction, type LeaseRequest } from "../../shared/lease/decision.js";
import type { LeaseState } from "../../shared/lease/lease.js";
import { toLeaseView } from "../../shared/lease/lease-view.js";

// The planned-handover rows of the rule (docs/protocol.md#planned-handover).
const T = 5000;
const NOW = 1_000_000;
const entry = (overrides: Partial<LeaseState> = {}): LeaseState => ({
  utype: "scheduler",
  uuid: "holder",
  address: "10.0.0.4:5800",
  epoch: 3,
  renewedAt: NOW - 1000,
  revoked: false,
  endedUuids: ["gone-1"],
  ...overrides,
});
const heartbeat = (uuid: string): LeaseRequest => ({ op: "heartbeat", utype: "scheduler", uuid, address: undefined });
const release = (uuid: string, provenEpoch?: number): LeaseRequest => ({ op: "release", utype: "scheduler", uuid, provenEpoch });
const handover = (to: string | null): LeaseRequest => ({ op: "handover", utype: "scheduler", to });
const withdraw = (uuid: string): LeaseRequest => ({ op: "withdraw", utype: "scheduler", uuid });
/** The entry just after the holder's proven release during a handover to `to`, at NOW - ago. */
const reserved = (to: string | null, ago: number): LeaseState =>
  entry({ uuid: "", address: null, renewedAt: NOW - ago, endedUuids: ["gone-1", "holder"], handover: { to, requestedAt: NOW - ago - 100 } });

describe("decide: planned handover", () => {
  const rows: Array<{ name: string; entry: LeaseState | undefined; request: LeaseRequest; expected: LeaseAction }> = [
    { name: "a request on no entry is refused: no primary", entry: undefined, request: handover(null), expected: { kind: "refuse-handover", reason: "no-primary" } },
    { name: "a request on a released role is refused: no primary", entry: entry({ uuid: "" }), request: handover(null), expected: { kind: "refuse-handover", reason: "no-primary" } },
    { name: "a request on an expired holder is refused: no primary", entry: entry({ renewedAt: NOW - T - 1 }), request: handover(null), expected: { kind: "refuse-handover", reason: "no-primary" } },
    { name: "a request on a revoked holder is refused: no primary", entry: entry({ revoked: true }), request: handover(null), expected: { kind: "refuse-handover", reason: "no-primary" } },
    { name: "a request naming the holder itself is refused", entry: entry(), request: handover("holder"), expected: { kind: "refuse-handover", reason: "to-holder" } },
    {
      name: "a request on a live holder is stored with its time; nothing else changes",
      entry: entry(),
      request: handover("standby-b"),
      expected: { kind: "request-handover", next: entry({ handover: { to: "standby-b", requestedAt: NOW } }) },
    },
    {
      name: "the same request again writes nothing",
      entry: entry({ handover: { to: "standby-b", requestedAt: NOW - 300 } }),
      request: handover("standby-b"),
      expected: { kind: "none" },
    },
    {
      name: "another successor keeps the first request's time: a holder cannot be kept by asking again",
      entry: entry({ handover: { to: "standby-b", requestedAt: NOW - 300 } }),
      request: handover(null),
      expected: { kind: "request-handover", next: entry({ handover: { to: null, requestedAt: NOW - 300 } }) },
    },
    {
      name: "the holder's renewal during a pending handover is accepted, the handover kept",
      entry: entry({ handover: { to: "standby-b", requestedAt: NOW - 300 } }),
      request: heartbeat("holder"),
      expected: { kind: "renew", next: entry({ renewedAt: NOW, handover: { to: "standby-b", requestedAt: NOW - 300 } }) },
    },
    {
      name: "the holder's renewal after the request + T is refused as revoked: it did not step down",
      entry: entry({ renewedAt: NOW - 10, handover: { to: "standby-b", requestedAt: NOW - T - 1 } }),
      request: heartbeat("holder"),
      expected: { kind: "reject", reason: "revoked", holder: entry({ renewedAt: NOW - 10, handover: { to: "standby-b", requestedAt: NOW - T - 1 } }) },
    },
    {
      name: "the holder's proven release during a handover to b reserves the role for b",
      entry: entry({ handover: { to: "standby-b", requestedAt: NOW - 300 } }),
      request: release("holder", 3),
      expected: {
        kind: "release",
        next: entry({ uuid: "", address: null, renewedAt: NOW, endedUuids: ["gone-1", "holder"], handover: { to: "standby-b", requestedAt: NOW - 300 } }),
      },
    },
    {
      name: "the holder's proven release during a handover to any reserves nothing",
      entry: entry({ handover: { to: null, requestedAt: NOW - 300 } }),
      request: release("holder", 3),
      expected: { kind: "release", next: entry({ uuid: "", address: null, renewedAt: NOW, endedUuids: ["gone-1", "holder"] }) },
    },
    {
      name: "an expired holder's own DELETE during a handover reserves nothing (no proof it stepped down in time)",
      entry: entry({ renewedAt: NOW - T - 1, handover: { to: "standby-b", requestedAt: NOW - T - 500 } }),
      request: release("holder"),
      expected: { kind: "release", next: entry({ uuid: "", address: null, renewedAt: NOW, endedUuids: ["gone-1", "holder"] }) },
    },
    {
      name: "while reserved for b, another standby is refused as held",
      entry: reserved("standby-b", 100),
      request: heartbeat("standby-c"),
      expected: { kind: "reject", reason: "held", holder: reserved("standby-b", 100) },
    },
    {
      name: "while reserved for b, b takes over at once with epoch + 1 and the handover gone",
      entry: reserved("standby-b", 100),
      request: heartbeat("standby-b"),
      expected: {
        kind: "take-over",
        next: { utype: "scheduler", uuid: "standby-b", address: null, epoch: 4, renewedAt: NOW, startedAt: NOW, revoked: false, endedUuids: ["gone-1", "holder"] },
      },
    },
    {
      name: "after the release + T anyone may take over",
      entry: reserved("standby-b", T + 1),
      request: heartbeat("standby-c"),
      expected: {
        kind: "take-over",
        next: { utype: "scheduler", uuid: "standby-c", address: null, epoch: 4, renewedAt: NOW, startedAt: NOW, revoked: false, endedUuids: ["gone-1", "holder"] },
      },
    },
    {
      name: "retiring the reserved standby drops the reservation: nobody waits for it",
      entry: reserved("standby-b", 100),
      request: release("standby-b"),
      expected: { kind: "retire", next: entry({ uuid: "", address: null, renewedAt: NOW - 100, endedUuids: ["gone-1", "holder", "standby-b"] }) },
    },
    {
      name: "the reserved standby's withdrawal (a clean stop) drops the reservation, and retires nothing",
      entry: reserved("standby-b", 100),
      request: withdraw("standby-b"),
      expected: { kind: "drop-handover", next: entry({ uuid: "", address: null, renewedAt: NOW - 100, endedUuids: ["gone-1", "holder"] }) },
    },
    {
      name: "the named standby's withdrawal while the handover is pending drops it: the holder stays",
      entry: entry({ handover: { to: "standby-b", requestedAt: NOW - 300 } }),
      request: withdraw("standby-b"),
      expected: { kind: "drop-handover", next: entry() },
    },
    {
      name: "another standby's withdrawal writes nothing to the entry (only its row goes)",
      entry: entry({ handover: { to: "standby-b", requestedAt: NOW - 300 } }),
      request: withdraw("standby-c"),
      expected: { kind: "none" },
    },
    { name: "a withdrawal with no handover, or no entry, writes nothing", entry: undefined, request: withdraw("standby-b"), expected: { kind: "none" } },
  ];

  it.each(rows)("$name", ({ entry: current, request, expected }) => {
    // The stored counter alone (epoch floor 0): the floor has its own rows in decision.test.ts.
    expect(decide(current, request, NOW, T, 0)).toEqual(expected);
  });

  it("shows the handover in the view: pending until the request + T, reserved until the release + T, then none", () => {
    const timing = { intervalMs: 1000, timeoutMs: T };
    const pending = toLeaseView("scheduler", entry({ handover: { to: "standby-b", requestedAt: NOW - 300 } }), NOW, timing);
    expect(pending.handover).toEqual({ to: "standby-b", requestedAt: new Date(NOW - 300).toISOString(), phase: "pending", until: new Date(NOW - 300 + T).toISOString() });
    const held = toLeaseView("scheduler", reserved("standby-b", 100), NOW, timing);
    expect(held.primary).toBeNull();
    expect(held.handover).toEqual({ to: "standby-b", requestedAt: new Date(NOW - 200).toISOString(), phase: "reserved", until: new Date(NOW - 100 + T).toISOString() });
    expect(toLeaseView("scheduler", reserved("standby-b", T + 1), NOW, timing).handover).toBeNull();
    expect(toLeaseView("scheduler", entry(), NOW, timing).handover).toBeNull();
  });
});

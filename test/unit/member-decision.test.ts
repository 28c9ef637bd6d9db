import { describe, expect, it } from "vitest";
import type { AgeRules } from "../../shared/members/member-age.js";
import { decideMember, type MemberAction, type MemberRequest } from "../../shared/members/member-decision.js";
import { MAX_ENDED_SESSIONS, type MemberRow, type SweepMarker } from "../../shared/members/member.js";

const T = 1000;
const TTL = 3000;
const RULES: AgeRules = { timeoutMs: T, ttlMs: TTL, staleAfterMs: T + 500 };
const NOW = 1_000_000;

const row = (overrides: Partial<MemberRow> = {}): MemberRow => ({
  group: "g",
  member: "node-1",
  session: "s1",
  address: "10.0.0.4:5800",
  joinedAt: NOW - 20_000,
  renewedAt: NOW - 200,
  heartbeats: 7,
  leftAt: null,
  previous: null,
  endedSessions: [],
  ...overrides,
});
const marker = (overrides: Partial<SweepMarker> = {}): SweepMarker => ({ group: "g", sweptAt: NOW - 100, gap: null, removedSessions: [], ...overrides });
/** `address` undefined means omitted (keep the stored one). */
const heartbeat = (session: string, address?: string | null): MemberRequest => ({ op: "heartbeat", group: "g", member: "node-1", session, address });
const leave = (session: string): MemberRequest => ({ op: "leave", group: "g", member: "node-1", session });
const joined = (session: string, address: string | null): MemberRow => ({
  group: "g",
  member: "node-1",
  session,
  address,
  joinedAt: NOW,
  renewedAt: NOW,
  heartbeats: 1,
  leftAt: null,
  previous: null,
  endedSessions: [],
});

describe("decideMember (docs/membership.md#the-rules), table-driven on an injected clock", () => {
  const cases: Array<{ name: string; row: MemberRow | undefined; marker?: SweepMarker; request: MemberRequest; expected: MemberAction }> = [
    // ---- heartbeat: join ---------------------------------------------------------------------
    { name: "no row: a new session joins (joining, 1 heartbeat)", row: undefined, request: heartbeat("s9", "h:9"), expected: { kind: "create", next: joined("s9", "h:9") } },
    { name: "no row, address omitted: joins without one", row: undefined, request: heartbeat("s9"), expected: { kind: "create", next: joined("s9", null) } },
    {
      name: "no row, but the sweeper removed this session: it never comes back",
      row: undefined,
      marker: marker({ removedSessions: ["s9"] }),
      request: heartbeat("s9"),
      expected: { kind: "reject", reason: "ended" },
    },
    // ---- heartbeat: the row's own session ------------------------------------------------------
    { name: "its own session renews: heartbeats + 1, address kept", row: row(), request: heartbeat("s1"), expected: { kind: "renew", next: row({ renewedAt: NOW, heartbeats: 8 }) } },
    { name: "a joining session's second heartbeat makes it active", row: row({ heartbeats: 1 }), request: heartbeat("s1"), expected: { kind: "renew", next: row({ renewedAt: NOW, heartbeats: 2 }) } },
    { name: "its own session sets a new address", row: row(), request: heartbeat("s1", "moved:2"), expected: { kind: "renew", next: row({ address: "moved:2", renewedAt: NOW, heartbeats: 8 }) } },
    { name: "its own session clears the address with null", row: row(), request: heartbeat("s1", null), expected: { kind: "renew", next: row({ address: null, renewedAt: NOW, heartbeats: 8 }) } },
    {
      name: "unreachable comes back to active on its next heartbeat (io-athena allows it)",
      row: row({ renewedAt: NOW - TTL }),
      request: heartbeat("s1"),
      expected: { kind: "renew", next: row({ renewedAt: NOW, heartbeats: 8 }) },
    },
    { name: "leaving by age never comes back: a restart is a new session", row: row({ renewedAt: NOW - TTL - 1 }), request: heartbeat("s1"), expected: { kind: "reject", reason: "ended" } },
    { name: "after its goodbye it never comes back", row: row({ leftAt: NOW - 5 }), request: heartbeat("s1"), expected: { kind: "reject", reason: "ended" } },
    {
      name: "a service outage does not end it: older than ttl in real time, but the gap does not count",
      row: row({ renewedAt: NOW - 60_000 }),
      marker: marker({ sweptAt: NOW - 59_900 }),
      request: heartbeat("s1"),
      expected: { kind: "renew", next: row({ renewedAt: NOW, heartbeats: 8 }) },
    },
    // ---- heartbeat: another session ----------------------------------------------------------
    { name: "a new session while the old one is active: 409 SessionHeld", row: row(), request: heartbeat("s2"), expected: { kind: "reject", reason: "held" } },
    { name: "a new session while the old one is still joining: held", row: row({ heartbeats: 1 }), request: heartbeat("s2"), expected: { kind: "reject", reason: "held" } },
    { name: "a new session exactly T after the old one's heartbeat: still held", row: row({ renewedAt: NOW - T }), request: heartbeat("s2"), expected: { kind: "reject", reason: "held" } },
    {
      name: "a new session once the old one is unreachable replaces it, remembering the old one's failure",
      row: row({ renewedAt: NOW - T - 1, endedSessions: ["s0"] }),
      request: heartbeat("s2", "h:2"),
      expected: {
        kind: "replace",
        next: { ...joined("s2", "h:2"), previous: { session: "s1", state: "unreachable", at: NOW }, endedSessions: ["s0", "s1"] },
      },
    },
    {
      name: "a new session after the old one said goodbye replaces it; the old one is remembered as leaving",
      row: row({ leftAt: NOW - 10 }),
      request: heartbeat("s2"),
      expected: { kind: "replace", next: { ...joined("s2", null), previous: { session: "s1", state: "leaving", at: NOW }, endedSessions: ["s1"] } },
    },
    {
      name: "the remembered sessions are bounded",
      row: row({ renewedAt: NOW - TTL - 1, endedSessions: Array.from({ length: MAX_ENDED_SESSIONS }, (_, i) => `old-${i}`) }),
      request: heartbeat("s2"),
      expected: {
        kind: "replace",
        next: {
          ...joined("s2", null),
          previous: { session: "s1", state: "leaving", at: NOW },
          endedSessions: [...Array.from({ length: MAX_ENDED_SESSIONS - 1 }, (_, i) => `old-${i + 1}`), "s1"],
        },
      },
    },
    {
      name: "a replaced session's late heartbeat is refused, even when the row is unreachable: never a new row for it",
      row: row({ session: "s2", renewedAt: NOW - T - 1, previous: { session: "s1", state: "unreachable", at: NOW - 5000 }, endedSessions: ["s1"] }),
      request: heartbeat("s1"),
      expected: { kind: "reject", reason: "ended" },
    },
    {
      // The SDK relies on it: after a join was accepted, a join's SessionHeld can only be stale.
      name: "a replaced session's heartbeat while its successor is active: ended, never held",
      row: row({ session: "s2", previous: { session: "s1", state: "unreachable", at: NOW - 5000 }, endedSessions: ["s1"] }),
      request: heartbeat("s1"),
      expected: { kind: "reject", reason: "ended" },
    },
    {
      name: "a removed session's heartbeat while a successor is joining: ended, never held",
      row: row({ session: "s2", heartbeats: 1 }),
      marker: marker({ removedSessions: ["s1"] }),
      request: heartbeat("s1"),
      expected: { kind: "reject", reason: "ended" },
    },
    {
      name: "a session the sweeper removed cannot take over a successor's failed row",
      row: row({ session: "s2", renewedAt: NOW - TTL - 1 }),
      marker: marker({ removedSessions: ["s1"] }),
      request: heartbeat("s1"),
      expected: { kind: "reject", reason: "ended" },
    },
    // ---- goodbye -------------------------------------------------------------------------------
    { name: "goodbye with no row: nothing to write (idempotent)", row: undefined, request: leave("s1"), expected: { kind: "none" } },
    { name: "goodbye of the row's session: leaving at once", row: row(), request: leave("s1"), expected: { kind: "leave", next: row({ leftAt: NOW }) } },
    { name: "goodbye of a session already leaving by age: marked as a goodbye", row: row({ renewedAt: NOW - TTL - 1 }), request: leave("s1"), expected: { kind: "leave", next: row({ renewedAt: NOW - TTL - 1, leftAt: NOW }) } },
    { name: "a second goodbye: nothing to write", row: row({ leftAt: NOW - 10 }), request: leave("s1"), expected: { kind: "none" } },
    { name: "goodbye naming another session: 409 SessionHeld, the row is left alone", row: row(), request: leave("s2"), expected: { kind: "reject", reason: "held" } },
  ];

  it.each(cases)("$name", ({ row: given, marker: sweep, request, expected }) => {
    expect(decideMember(given, sweep, request, NOW, RULES)).toEqual(expected);
  });
});

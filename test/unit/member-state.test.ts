import { describe, expect, it } from "vitest";
import { judgeRow, memberState, operatingAgeMs, serviceGaps, type AgeRules } from "../../shared/members/member-age.js";
import type { SweepMarker } from "../../shared/members/member.js";

const T = 1000;
const TTL = 3000;
const PERIOD = 500;
const RULES: AgeRules = { timeoutMs: T, ttlMs: TTL, staleAfterMs: T + PERIOD };
const NOW = 1_000_000;
const row = (age: number, heartbeats = 2, leftAt: number | null = null) => ({ renewedAt: NOW - age, heartbeats, leftAt });

describe("memberState: the states from the age (docs/membership.md#the-states), table-driven", () => {
  it.each([
    ["one heartbeat, just now", row(0, 1), "joining"],
    ["one heartbeat, exactly T old", row(T, 1), "joining"],
    ["one heartbeat, older than T: unreachable like any member", row(T + 1, 1), "unreachable"],
    ["two heartbeats, just now", row(0, 2), "active"],
    ["many heartbeats, exactly T old", row(T, 50), "active"],
    ["T + 1 ms old", row(T + 1), "unreachable"],
    ["exactly ttl old", row(TTL), "unreachable"],
    ["ttl + 1 ms old", row(TTL + 1), "leaving"],
    ["said goodbye a moment ago, otherwise fresh", row(0, 5, NOW), "leaving"],
    ["said goodbye, stuck in joining", row(0, 1, NOW - 10), "leaving"],
  ] as const)("%s → %s", (_name, given, expected) => {
    expect(memberState(given, NOW - given.renewedAt, RULES)).toBe(expected);
  });
});

describe("operatingAgeMs: time the service was down does not count", () => {
  const gap = { startedAt: NOW - 10_000, endedAt: NOW - 2_000 };

  it("counts plain time when there is no gap", () => {
    expect(operatingAgeMs(NOW - 700, NOW, [])).toBe(700);
  });

  it("a member alive when the service stopped restarts its age when it resumed", () => {
    // Last heartbeat 100 ms before the gap began: only those 100 ms and the 2 s since it ended count.
    expect(operatingAgeMs(gap.startedAt - 100, NOW, [gap])).toBe(2_100);
  });

  it("a member that had already failed keeps the age it had (no resurrection)", () => {
    expect(operatingAgeMs(gap.startedAt - 5_000, NOW, [gap])).toBe(7_000);
  });

  it("a heartbeat after the gap is judged as if there had been none", () => {
    expect(operatingAgeMs(NOW - 1_000, NOW, [gap])).toBe(1_000);
  });

  it("a heartbeat inside the gap (a store outage with the functions up) counts from the gap's end", () => {
    expect(operatingAgeMs(gap.startedAt + 1_000, NOW, [gap])).toBe(2_000);
  });

  it("is never negative: a row written by a host whose clock is ahead is 0 ms old", () => {
    expect(operatingAgeMs(NOW + 40, NOW, [])).toBe(0);
  });
});

describe("serviceGaps: the recorded gap, and the gap in progress when the marker is stale", () => {
  const marker = (sweptAt: number, gap: SweepMarker["gap"] = null): SweepMarker => ({ group: "g", sweptAt, gap, removedSessions: [] });

  it("no marker (a group never swept) means no gap", () => {
    expect(serviceGaps(undefined, NOW, RULES)).toEqual([]);
  });

  it("a marker swept within T + the sweep period adds only its recorded gap", () => {
    const recorded = { startedAt: 1, endedAt: 2 };
    expect(serviceGaps(marker(NOW - T - PERIOD, recorded), NOW, RULES)).toEqual([recorded]);
  });

  it("a marker older than T + the sweep period: the time since it was swept is a gap in progress", () => {
    expect(serviceGaps(marker(NOW - T - PERIOD - 1), NOW, RULES)).toEqual([{ startedAt: NOW - T - PERIOD - 1, endedAt: NOW }]);
  });

  it("is stale only if it was so when its read began: a sweep may replace it during a slow query, and no gap is invented then", () => {
    // Read from NOW − 300 (fresh then: T + the sweep period old at most), judged at NOW.
    const sweptAt = NOW - 300 - T - PERIOD;
    expect(serviceGaps(marker(sweptAt), NOW, RULES, NOW - 300)).toEqual([]);
    // A member last heard of after that sweep and silent for more than T since is unreachable,
    // where judging staleness at NOW made it 0 ms old.
    const dead = row(T + 100);
    expect(judgeRow(dead, NOW, serviceGaps(marker(sweptAt), NOW, RULES, NOW - 300), RULES).state).toBe("unreachable");
    expect(judgeRow(dead, NOW, serviceGaps(marker(sweptAt), NOW, RULES), RULES).ageMs).toBe(0);
    // Stale already when the read began: the gap in progress, up to NOW.
    expect(serviceGaps(marker(sweptAt - 301), NOW, RULES, NOW - 300)).toEqual([{ startedAt: sweptAt - 301, endedAt: NOW }]);
  });

  it("during a long outage of the sweeper, a member alive before it stays as old as it was then, never unreachable", () => {
    const sweptAt = NOW - 60_000;
    const alive = row(60_000 + 200);
    expect(judgeRow(alive, NOW, serviceGaps(marker(sweptAt), NOW, RULES), RULES)).toEqual({ ageMs: 200, state: "active" });
  });

  it("the outage hides no earlier failure: a member already unreachable when it began stays unreachable", () => {
    const sweptAt = NOW - 60_000;
    const failing = row(60_000 + 2_000);
    expect(judgeRow(failing, NOW, serviceGaps(marker(sweptAt), NOW, RULES), RULES)).toEqual({ ageMs: 2_000, state: "unreachable" });
  });
});

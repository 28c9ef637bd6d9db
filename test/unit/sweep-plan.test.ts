import { describe, expect, it } from "vitest";
import type { GroupSnapshot } from "../../shared/members/member-store.js";
import { MAX_REMOVED_SESSIONS, type MemberRecord, type SweepMarkerRecord } from "../../shared/members/member.js";
import type { MembershipRules } from "../../shared/members/membership-rules.js";
import { planSweep } from "../../shared/members/sweep-plan.js";

const T = 1000;
const TTL = 3000;
const RETENTION = 2000;
const PERIOD = 500;
const RULES: MembershipRules = { intervalMs: 200, timeoutMs: T, ttlMs: TTL, retentionMs: RETENTION, maxPerGroup: 1000, sweepPeriodMs: PERIOD };
const NOW = 1_000_000;

let n = 0;
const member = (name: string, age: number, overrides: Partial<MemberRecord> = {}): MemberRecord => ({
  group: "g",
  member: name,
  session: `${name}-s`,
  address: null,
  joinedAt: NOW - 100_000,
  renewedAt: NOW - age,
  heartbeats: 10,
  leftAt: null,
  previous: null,
  endedSessions: [],
  etag: `e${++n}`,
  ...overrides,
});
const marker = (overrides: Partial<SweepMarkerRecord> = {}): SweepMarkerRecord => ({ group: "g", sweptAt: NOW - PERIOD, gap: null, removedSessions: [], etag: "m1", ...overrides });
/** `null`: the group has no marker yet. */
const snapshot = (rows: MemberRecord[], sweep: SweepMarkerRecord | null = marker()): GroupSnapshot => ({ group: "g", rows, marker: sweep ?? undefined });
const names = (deletions: readonly { member: string }[]): string[] => deletions.map((gone) => gone.member).sort();

describe("planSweep: what one sweep of one group deletes", () => {
  it("deletes a failed member once it has been leaving longer than the retention, and no one else", () => {
    const plan = planSweep(snapshot([member("alive", 100), member("unreachable", T + 1), member("just-leaving", TTL + RETENTION), member("gone", TTL + RETENTION + 1)]), NOW, RULES);
    expect(plan.deletions).toEqual([{ member: "gone", session: "gone-s", etag: expect.any(String), reason: "retention" }]);
    expect(plan.heldBack).toEqual([]);
  });

  it("deletes a goodbye once its leftAt is older than the retention, however fresh its last heartbeat", () => {
    const plan = planSweep(snapshot([member("alive", 100), member("left", 100, { leftAt: NOW - RETENTION - 1 }), member("left-recently", 100, { leftAt: NOW - RETENTION })]), NOW, RULES);
    expect(names(plan.deletions)).toEqual(["left"]);
  });

  it("deletes a session stuck in joining (never a second heartbeat) once older than ttl, without waiting for the retention", () => {
    const plan = planSweep(snapshot([member("alive", 100), member("stuck", TTL + 1, { heartbeats: 1 }), member("young-stuck", TTL, { heartbeats: 1 })]), NOW, RULES);
    expect(plan.deletions).toEqual([expect.objectContaining({ member: "stuck", reason: "stuck-joining" })]);
  });

  it("never deletes every member of a group as failed in one sweep: it holds them back instead", () => {
    const plan = planSweep(snapshot([member("a", TTL + RETENTION + 1), member("b", TTL + RETENTION + 50)]), NOW, RULES);
    expect(plan.deletions).toEqual([]);
    expect(names(plan.heldBack)).toEqual(["a", "b"]);
  });

  it("a goodbye is not a member that could hide an outage: goodbyes go, the failed last member is held back", () => {
    const plan = planSweep(snapshot([member("failed", TTL + RETENTION + 1), member("left", 0, { leftAt: NOW - RETENTION - 1 })]), NOW, RULES);
    expect(names(plan.deletions)).toEqual(["left"]);
    expect(names(plan.heldBack)).toEqual(["failed"]);
  });

  it("bounds the group: the oldest leaving rows go first, then the oldest unreachable, never an active or joining one", () => {
    const rows = [
      member("active-1", 10),
      member("joining-1", 10, { heartbeats: 1 }),
      member("unreachable-old", T + 900),
      member("unreachable-young", T + 100),
      member("leaving-old", TTL + 500),
      member("leaving-young", TTL + 100),
    ];
    expect(names(planSweep(snapshot(rows), NOW, { ...RULES, maxPerGroup: 5 }).deletions)).toEqual(["leaving-old"]);
    expect(names(planSweep(snapshot(rows), NOW, { ...RULES, maxPerGroup: 3 }).deletions)).toEqual(["leaving-old", "leaving-young", "unreachable-old"]);
    const tight = planSweep(snapshot(rows), NOW, { ...RULES, maxPerGroup: 1 });
    expect(names(tight.deletions)).toEqual(["leaving-old", "leaving-young", "unreachable-old", "unreachable-young"]);
    expect(tight.deletions.every((gone) => gone.reason === "bound")).toBe(true);
  });

  it("writes the marker first: swept now, and every deleted session remembered (bounded)", () => {
    const removedSessions = Array.from({ length: MAX_REMOVED_SESSIONS }, (_, i) => `old-${i}`);
    const plan = planSweep(snapshot([member("alive", 10), member("gone", TTL + RETENTION + 1)], marker({ removedSessions })), NOW, RULES);
    expect(plan.marker).toEqual({ group: "g", sweptAt: NOW, gap: null, removedSessions: [...removedSessions.slice(1), "gone-s"] });
    expect(plan.markerEtag).toBe("m1");
  });

  it("creates the marker of a group it never swept (no ETag: a create)", () => {
    const plan = planSweep(snapshot([member("alive", 10)], null), NOW, RULES);
    expect(plan).toMatchObject({ marker: { group: "g", sweptAt: NOW, gap: null, removedSessions: [] }, markerEtag: undefined, gapRecorded: null });
  });
});

describe("planSweep: distrusting itself after a gap in its own operation", () => {
  it("records the time since the last sweep as a gap when it is longer than T + the sweep period", () => {
    const sweptAt = NOW - 30_000;
    const plan = planSweep(snapshot([member("a", 10)], marker({ sweptAt })), NOW, RULES);
    expect(plan.gapRecorded).toEqual({ startedAt: sweptAt, endedAt: NOW });
    expect(plan.marker.gap).toEqual({ startedAt: sweptAt, endedAt: NOW });
  });

  it("does not call a late sweep within T + the period a gap, and keeps the gap it had", () => {
    const recorded = { startedAt: 1, endedAt: 2 };
    const plan = planSweep(snapshot([member("a", 10)], marker({ sweptAt: NOW - T - PERIOD, gap: recorded })), NOW, RULES);
    expect(plan.gapRecorded).toBeNull();
    expect(plan.marker.gap).toEqual(recorded);
  });

  it("after an outage of several T, deletes nobody who was alive when it began", () => {
    const sweptAt = NOW - 30_000;
    // Every member heartbeat until the outage; the service was down 30 s; none has heartbeat since.
    const rows = [member("a", 30_000 + 150), member("b", 30_000 + 80), member("left-before", 30_000 + 50, { leftAt: sweptAt - RETENTION - 10 })];
    const plan = planSweep(snapshot(rows, marker({ sweptAt })), NOW, RULES);
    expect(names(plan.deletions)).toEqual(["left-before"]);
    expect(plan.heldBack).toEqual([]);
  });

  it("still deletes what had failed long before the outage", () => {
    const sweptAt = NOW - 30_000;
    const plan = planSweep(snapshot([member("alive", 30_000 + 100), member("long-dead", 30_000 + TTL + RETENTION + 1)], marker({ sweptAt })), NOW, RULES);
    expect(names(plan.deletions)).toEqual(["long-dead"]);
  });
});

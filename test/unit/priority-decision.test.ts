import { describe, expect, it } from "vitest";
import { decideHeartbeat, decidePreempt, freeSince, rankingMatters, releaseEnd, type Ranking } from "../../shared/lease/decision.js";
import type { LeaseState } from "../../shared/lease/lease.js";

// The priority rows of the rule (docs/protocol.md#priorities-and-preemption).
const T = 5000;
const I = 1000;
const NOW = 1_000_000;
const entry = (overrides: Partial<LeaseState> = {}): LeaseState => ({
  utype: "scheduler",
  uuid: "holder",
  address: null,
  epoch: 3,
  renewedAt: NOW - 1000,
  revoked: false,
  endedUuids: ["gone-1"],
  ranked: true,
  ...overrides,
});
/** An entry that expired `ago` ms before NOW. */
const expired = (ago: number, overrides: Partial<LeaseState> = {}): LeaseState => entry({ renewedAt: NOW - T - ago, ...overrides });
const ask = (uuid: string, priority?: number) => ({ utype: "scheduler", uuid, address: undefined, priority });
const ranking = (...standbys: Array<{ uuid: string; priority?: number; seenAgo?: number }>): Ranking => ({
  intervalMs: I,
  standbys: standbys.map(({ uuid, priority, seenAgo = 0 }) => ({ uuid, seenAt: NOW - seenAgo, ...(priority === undefined ? {} : { priority }) })),
});

describe("decideHeartbeat: a free role goes to the highest standby seen within T", () => {
  it("refuses a lower caller while a higher standby was seen within T and the role became free less than I ago", () => {
    expect(decideHeartbeat(expired(I - 1), ask("low"), NOW, T, 0, ranking({ uuid: "high", priority: 1 }))).toMatchObject({ kind: "reject", reason: "outranked" });
    expect(decideHeartbeat(expired(1), ask("low", 4), NOW, T, 0, ranking({ uuid: "high", priority: 5, seenAgo: T }))).toMatchObject({ kind: "reject", reason: "outranked" });
  });

  it("lets the lower caller take over from I after the role became free: a failover is never slower than today by more than I", () => {
    expect(decideHeartbeat(expired(I), ask("low"), NOW, T, 0, ranking({ uuid: "high", priority: 1 }))).toMatchObject({ kind: "take-over", next: { uuid: "low", epoch: 4 } });
  });

  it("lets the caller take over when no one higher is seen: equal, lower, stale (over T), the caller itself, the old holder, or an ended uuid", () => {
    const free = expired(10);
    const ranked = ranking(
      { uuid: "equal", priority: 2 },
      { uuid: "lower", priority: 1 },
      { uuid: "stale", priority: 9, seenAgo: T + 1 },
      { uuid: "me", priority: 9 },
      { uuid: "holder", priority: 9 },
      { uuid: "gone-1", priority: 9 },
    );
    expect(decideHeartbeat(free, ask("me", 2), NOW, T, 0, ranked)).toMatchObject({ kind: "take-over", next: { uuid: "me", priority: 2 } });
  });

  it("ranks a released role from its release, and one released to a named standby from the end of its reservation", () => {
    const released = entry({ uuid: "", renewedAt: NOW - I + 1, endedUuids: ["gone-1", "holder"] });
    expect(freeSince(released, T)).toBe(NOW - I + 1);
    expect(decideHeartbeat(released, ask("low"), NOW, T, 0, ranking({ uuid: "high", priority: 1 }))).toMatchObject({ kind: "reject", reason: "outranked" });
    expect(decideHeartbeat({ ...released, renewedAt: NOW - I }, ask("low"), NOW, T, 0, ranking({ uuid: "high", priority: 1 }))).toMatchObject({ kind: "take-over" });
    const reservedLapsed = entry({ uuid: "", renewedAt: NOW - T - 1, handover: { to: "named", requestedAt: NOW - T - 100 } });
    expect(freeSince(reservedLapsed, T)).toBe(NOW - 1);
    expect(decideHeartbeat(reservedLapsed, ask("low"), NOW, T, 0, ranking({ uuid: "high", priority: 1 }))).toMatchObject({ kind: "reject", reason: "outranked" });
  });

  it("never ranks against a reservation: the standby a handover names takes over, whatever the others' priorities", () => {
    const reserved = entry({ uuid: "", renewedAt: NOW - 10, handover: { to: "named", requestedAt: NOW - 100 } });
    expect(rankingMatters(reserved, { uuid: "named" }, NOW, { timeoutMs: T, intervalMs: I })).toBe(false);
    expect(decideHeartbeat(reserved, ask("named"), NOW, T, 0, ranking({ uuid: "high", priority: 9 }))).toMatchObject({ kind: "take-over", next: { uuid: "named" } });
  });

  it("needs no ranking (no read) on a role nobody stated a priority for, unless the caller states one, nor outside the window", () => {
    const timing = { timeoutMs: T, intervalMs: I };
    const unranked = expired(10, { ranked: undefined });
    expect(rankingMatters(unranked, { uuid: "b" }, NOW, timing)).toBe(false);
    expect(rankingMatters(unranked, { uuid: "b", priority: -1 }, NOW, timing)).toBe(true);
    expect(rankingMatters(expired(10), { uuid: "b" }, NOW, timing)).toBe(true);
    expect(rankingMatters(expired(I), { uuid: "b" }, NOW, timing)).toBe(false);
    expect(rankingMatters(undefined, { uuid: "b", priority: 3 }, NOW, timing)).toBe(false);
  });

  it("without a ranking (equal priorities), decides exactly as before priorities: the caller takes over", () => {
    expect(decideHeartbeat(expired(10), ask("low"), NOW, T)).toMatchObject({ kind: "take-over" });
  });

  it("stores the holder's priority with its term (0 left out), keeps the ranked mark across terms, and lets a renewal change it", () => {
    const created = decideHeartbeat(undefined, ask("a", 7), NOW, T);
    expect(created).toMatchObject({ kind: "create", next: { priority: 7 } });
    const plain = decideHeartbeat(undefined, ask("a", 0), NOW, T);
    expect(plain.kind === "create" && "priority" in plain.next).toBe(false);
    const taken = decideHeartbeat(expired(I), ask("b", -3), NOW, T);
    expect(taken).toMatchObject({ kind: "take-over", next: { priority: -3, ranked: true } });
    const renewed = decideHeartbeat(entry({ priority: 5 }), ask("holder"), NOW, T);
    expect(renewed.kind === "renew" && "priority" in renewed.next).toBe(false);
  });
});

describe("decidePreempt: a standby of higher priority asks for a planned handover", () => {
  const preempt = (uuid: string, priority: number | undefined, state: LeaseState | undefined, pendingToPriority?: number) => decidePreempt(state, { uuid, priority }, NOW, T, pendingToPriority);

  it("stores a handover to the caller, reason preempt, on a live unrevoked holder of lower priority", () => {
    expect(preempt("h", 1, entry())).toEqual({ kind: "request-handover", next: entry({ handover: { to: "h", requestedAt: NOW, reason: "preempt" } }) });
    expect(preempt("h", 0, entry({ priority: -1 }))).toMatchObject({ kind: "request-handover" });
  });

  it.each([
    ["the holder's priority is equal", "h", 2, entry({ priority: 2 })],
    ["the holder's priority is higher", "h", 1, entry({ priority: 2 })],
    ["nobody holds the role", "h", 5, undefined],
    ["the role is released", "h", 5, entry({ uuid: "" })],
    ["the holder expired", "h", 5, expired(1)],
    ["the holder is revoked", "h", 5, entry({ revoked: true })],
    ["the caller is the holder", "holder", 5, entry()],
    ["the caller's term ended here", "gone-1", 5, entry()],
    ["an operator's handover is pending (never undone)", "h", 5, entry({ handover: { to: "c", requestedAt: NOW - 10 } })],
    ["an operator's handover to any standby is pending", "h", 5, entry({ handover: { to: null, requestedAt: NOW - 10 } })],
    ["the same preemption is pending", "h", 5, entry({ handover: { to: "h", requestedAt: NOW - 10, reason: "preempt" } })],
  ])("asks nothing when %s", (_name, uuid, priority, state) => {
    expect(preempt(uuid, priority, state)).toEqual({ kind: "none" });
  });

  it("re-points a pending preemption to a caller of higher priority than its standby (or when that one is not seen), keeping the first request's time", () => {
    const pending = entry({ handover: { to: "m", requestedAt: NOW - 300, reason: "preempt" } });
    expect(preempt("h", 2, pending, 1)).toEqual({ kind: "request-handover", next: entry({ handover: { to: "h", requestedAt: NOW - 300, reason: "preempt" } }) });
    expect(preempt("h", 2, pending, undefined)).toMatchObject({ kind: "request-handover", next: { handover: { to: "h" } } });
    expect(preempt("h", 2, pending, 2)).toEqual({ kind: "none" });
    expect(preempt("h", 2, pending, 3)).toEqual({ kind: "none" });
  });
});

describe("releaseEnd: a term handed over to a preempting standby ends 'preempted'", () => {
  it("is preempted only for the holder's proven release while a preemption is pending", () => {
    const pending = entry({ handover: { to: "h", requestedAt: NOW - 10, reason: "preempt" } });
    expect(releaseEnd(pending, 3, NOW, T)).toBe("preempted");
    expect(releaseEnd(pending, undefined, NOW, T)).toBe("released");
    expect(releaseEnd(entry({ handover: { to: "h", requestedAt: NOW - 10 } }), 3, NOW, T)).toBe("released");
    expect(releaseEnd(entry(), 3, NOW, T)).toBe("released");
  });
});

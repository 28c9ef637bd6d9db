import { judgeRow, operatingAgeMs, serviceGaps } from "./member-age.js";
import type { GroupSnapshot } from "./member-store.js";
import { MAX_REMOVED_SESSIONS, withSession, type MemberRecord, type ServiceGap, type SweepMarker } from "./member.js";
import { ageRulesOf, type MembershipRules } from "./membership-rules.js";

/** Why the sweeper deletes a row. */
export type SweepReason =
  /** It said goodbye, or went leaving by age, longer ago than the retention. */
  | "retention"
  /** Its session never sent a second heartbeat, and is older than ttl. */
  | "stuck-joining"
  /** The group keeps more rows than HA_MEMBERS_MAX_PER_GROUP: the oldest failed ones go. */
  | "bound";

export interface SweepDeletion {
  readonly member: string;
  readonly session: string;
  readonly etag: string;
  readonly reason: SweepReason;
}

export interface SweepPlan {
  /** The marker to write first, and the ETag it must still have (undefined: create it). */
  readonly marker: SweepMarker;
  readonly markerEtag: string | undefined;
  /** A gap in the service's operation this sweep found and records, if any. */
  readonly gapRecorded: ServiceGap | null;
  readonly deletions: readonly SweepDeletion[];
  /**
   * Rows it would have deleted as failed, held back because they are every member of the
   * group that did not say goodbye: that looks like an outage of the service, not of them.
   */
  readonly heldBack: readonly SweepDeletion[];
}

/**
 * One sweep of one group as a pure function of what one partition query read and the
 * ha_time taken after it (no I/O, no clock):
 *
 *   1. Distrust itself: when the marker is older than T + the sweep period, the sweeper
 *      (the functions, or the store) was not running; that interval is recorded as the
 *      group's gap, and ages stop counting it (member-age.ts). The new marker says "swept
 *      now", so reads after it judge by the recorded gap alone.
 *   2. Delete what has been leaving past the retention (a goodbye from its leftAt, a
 *      failure from when its age passed ttl), and sessions stuck in joining past ttl.
 *   3. Never delete every member of a group as failed in one sweep: if every row that did
 *      not say goodbye is about to go, none of them goes (heldBack), and the sweeper warns.
 *   4. Bound the group to maxPerGroup rows: the oldest leaving rows first, then the oldest
 *      unreachable ones; never a joining or active one.
 * Every deletion is If-Match on the ETag read, and each deleted session is added to the
 * marker's removed sessions, which is written before any row is deleted.
 */
export function planSweep(snapshot: GroupSnapshot, haTime: number, rules: MembershipRules): SweepPlan {
  const ageRules = ageRulesOf(rules);
  const previous = snapshot.marker;
  const stale = previous !== undefined && haTime - previous.sweptAt > ageRules.staleAfterMs;
  const gapRecorded = stale ? { startedAt: previous.sweptAt, endedAt: haTime } : null;
  const gap = gapRecorded ?? previous?.gap ?? null;
  const gaps = serviceGaps({ group: snapshot.group, sweptAt: haTime, gap, removedSessions: [] }, haTime, ageRules);

  const judged = snapshot.rows.map((row) => ({ row, ...judgeRow(row, haTime, gaps, ageRules) }));
  const candidates: SweepDeletion[] = [];
  for (const { row, ageMs, state } of judged) {
    if (row.leftAt !== null) {
      if (operatingAgeMs(row.leftAt, haTime, gaps) > rules.retentionMs) candidates.push(deletion(row, "retention"));
    } else if (row.heartbeats === 1 && ageMs > rules.ttlMs) {
      candidates.push(deletion(row, "stuck-joining"));
    } else if (state === "leaving" && ageMs > rules.ttlMs + rules.retentionMs) {
      candidates.push(deletion(row, "retention"));
    }
  }
  const failed = candidates.filter((candidate) => rowOf(snapshot.rows, candidate).leftAt === null);
  const stillMembers = snapshot.rows.filter((row) => row.leftAt === null).length;
  const everyMemberFailed = failed.length > 0 && failed.length === stillMembers;
  const heldBack = everyMemberFailed ? failed : [];
  const deletions = candidates.filter((candidate) => !heldBack.includes(candidate));

  const kept = judged.filter(({ row }) => !deletions.some((gone) => gone.member === row.member));
  const excess = kept.length - rules.maxPerGroup;
  if (excess > 0) {
    const failing = kept
      .filter(({ state }) => state === "leaving" || state === "unreachable")
      .sort((a, b) => rank(a.state) - rank(b.state) || b.ageMs - a.ageMs)
      .slice(0, excess);
    deletions.push(...failing.map(({ row }) => deletion(row, "bound")));
  }
  const held = heldBack.filter((candidate) => !deletions.some((gone) => gone.member === candidate.member));

  let removedSessions = previous?.removedSessions ?? [];
  for (const gone of deletions) removedSessions = withSession(removedSessions, gone.session, MAX_REMOVED_SESSIONS);
  return {
    marker: { group: snapshot.group, sweptAt: haTime, gap, removedSessions },
    markerEtag: previous?.etag,
    gapRecorded,
    deletions,
    heldBack: held,
  };
}

/** Leaving rows go before unreachable ones. */
function rank(state: string): number {
  return state === "leaving" ? 0 : 1;
}

function deletion(row: MemberRecord, reason: SweepReason): SweepDeletion {
  return { member: row.member, session: row.session, etag: row.etag, reason };
}

function rowOf(rows: readonly MemberRecord[], candidate: SweepDeletion): MemberRecord {
  return rows.find((row) => row.member === candidate.member) as MemberRecord;
}

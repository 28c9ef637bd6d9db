import type { GroupSummary, MemberAnswer, MemberState, MemberView, MembersTiming } from "../contract/members.js";
import { judgeRow, serviceGaps, type AgeRules } from "./member-age.js";
import type { GroupSnapshot } from "./member-store.js";
import type { MemberRow, ServiceGap, SweepMarker } from "./member.js";

/** What a view needs of a row: the fast path knows no more than this. */
export type ViewedMember = Pick<MemberRow, "member" | "session" | "address" | "joinedAt" | "renewedAt" | "heartbeats" | "leftAt" | "previous">;

const iso = (ms: number): string => new Date(ms).toISOString();

/** Shows `row` as seen at `haTime`, with the group's gaps. */
export function toMemberView(row: ViewedMember, haTime: number, gaps: readonly ServiceGap[], rules: AgeRules): MemberView {
  const { ageMs, state } = judgeRow(row, haTime, gaps, rules);
  return {
    member: row.member,
    session: row.session,
    address: row.address,
    state,
    joinedAt: iso(row.joinedAt),
    renewedAt: iso(row.renewedAt),
    leftAt: row.leftAt === null ? null : iso(row.leftAt),
    heartbeats: row.heartbeats,
    ageMs,
    previous: row.previous === null ? null : { session: row.previous.session, state: row.previous.state, at: iso(row.previous.at) },
  };
}

/** The answer about one member: its view, or null when it has no row, with the timing. */
export function toMemberAnswer(group: string, member: MemberView | null, timing: MembersTiming): MemberAnswer {
  return { group, member, intervalMs: timing.intervalMs, timeoutMs: timing.timeoutMs, ttlMs: timing.ttlMs };
}

/** The answer about one member as read with its group's marker, judged at `haTime`: null when it has no row. */
export function answerAbout(group: string, row: ViewedMember | undefined, marker: SweepMarker | undefined, haTime: number, rules: AgeRules, timing: MembersTiming): MemberAnswer {
  const view = row === undefined ? null : toMemberView(row, haTime, serviceGaps(marker, haTime, rules), rules);
  return toMemberAnswer(group, view, timing);
}

/** A group's members counted by state, judged at `haTime` with the group's marker, read from `readFrom` on (serviceGaps). */
export function toGroupSummary(snapshot: GroupSnapshot, haTime: number, rules: AgeRules, readFrom: number): GroupSummary {
  const gaps = serviceGaps(snapshot.marker, haTime, rules, readFrom);
  const members: Record<MemberState, number> = { joining: 0, active: 0, unreachable: 0, leaving: 0 };
  for (const row of snapshot.rows) members[judgeRow(row, haTime, gaps, rules).state] += 1;
  return { group: snapshot.group, members };
}

import type { MemberAnswer, MemberView, MembersTiming } from "../contract/members.js";
import { judgeRow, type AgeRules } from "./member-age.js";
import type { MemberRow, ServiceGap } from "./member.js";

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

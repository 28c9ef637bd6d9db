import { judgeRow, serviceGaps, type AgeRules } from "./member-age.js";
import { MAX_ENDED_SESSIONS, withSession, type MemberRow, type SweepMarker } from "./member.js";

/** What a member asks of its row in one group. */
export type MemberRequest =
  | {
      readonly op: "heartbeat";
      readonly group: string;
      readonly member: string;
      readonly session: string;
      /** A string sets the address, null clears it, undefined (omitted) keeps the stored one. */
      readonly address: string | null | undefined;
    }
  | { readonly op: "leave"; readonly group: string; readonly member: string; readonly session: string };

/**
 * Why a heartbeat is refused. `held`: another session of the member is joining or active
 * (409 SessionHeld). `ended`: the caller's session said goodbye, went leaving, was
 * replaced or was removed, and never comes back (409 SessionEnded).
 */
export type MemberRejectReason = "held" | "ended";

/**
 * What the store must do. `create` writes only if the member has no row; every other write
 * is conditional on the ETag of the row the decision was made on.
 */
export type MemberAction =
  | { readonly kind: "create"; readonly next: MemberRow }
  | { readonly kind: "renew"; readonly next: MemberRow }
  /** A new session takes the row of one that is unreachable or leaving; the old one ends. */
  | { readonly kind: "replace"; readonly next: MemberRow }
  /** Goodbye: leftAt is set, the row is leaving at once. */
  | { readonly kind: "leave"; readonly next: MemberRow }
  | { readonly kind: "reject"; readonly reason: MemberRejectReason }
  /** Nothing to write (no row, or a goodbye already said); the row is answered as it is. */
  | { readonly kind: "none" };

/**
 * The whole of membership's server side (docs/membership.md#the-rules) as a pure function: no I/O, no
 * clock. `haTime` is the function host's clock after the row and the group's sweep marker
 * were read (one query); ages count only the service's own operating time (member-age.ts).
 *
 * Heartbeat:
 *   1. no row, the session was removed here      → reject (ended)
 *   2. no row                                     → create: joining, 1 heartbeat
 *   3. the row's session, said goodbye or leaving → reject (ended): a restart is a new session
 *   4. the row's session                          → renew: heartbeats + 1 (unreachable → active)
 *   5. a session that ended here (replaced, removed) → reject (ended)
 *   6. another session, the row joining or active → reject (held): a restart
 *                                                   never hides its predecessor's failure
 *   7. another session, the row unreachable or leaving → replace; the old session is
 *                                                   remembered as `previous` and ended
 * Leave (DELETE ?session=…):
 *   1. no row                                     → nothing (an idempotent goodbye)
 *   2. the row's session, goodbye already said    → nothing
 *   3. the row's session                          → leftAt = haTime: leaving at once
 *   4. another session                            → reject (held): it is not the caller's to end
 */
export function decideMember(
  row: MemberRow | undefined,
  marker: SweepMarker | undefined,
  request: MemberRequest,
  haTime: number,
  rules: AgeRules,
): MemberAction {
  const removed = marker?.removedSessions.includes(request.session) ?? false;
  if (request.op === "leave") {
    if (row === undefined) return { kind: "none" };
    if (row.session !== request.session) return { kind: "reject", reason: "held" };
    if (row.leftAt !== null) return { kind: "none" };
    return { kind: "leave", next: { ...row, leftAt: haTime } };
  }
  const { group, member, session, address } = request;
  const fresh = (): MemberRow => ({
    group,
    member,
    session,
    address: address ?? null,
    joinedAt: haTime,
    renewedAt: haTime,
    heartbeats: 1,
    leftAt: null,
    previous: null,
    endedSessions: [],
  });
  if (row === undefined) {
    return removed ? { kind: "reject", reason: "ended" } : { kind: "create", next: fresh() };
  }
  const { state } = judgeRow(row, haTime, serviceGaps(marker, haTime, rules), rules);
  if (row.session === session) {
    if (state === "leaving") return { kind: "reject", reason: "ended" };
    const next = { ...row, address: address === undefined ? row.address : address, renewedAt: haTime, heartbeats: row.heartbeats + 1 };
    return { kind: "renew", next };
  }
  if (removed || row.endedSessions.includes(session) || row.previous?.session === session) return { kind: "reject", reason: "ended" };
  if (state === "joining" || state === "active") return { kind: "reject", reason: "held" };
  return {
    kind: "replace",
    next: {
      ...fresh(),
      previous: { session: row.session, state, at: haTime },
      endedSessions: withSession(row.endedSessions, row.session, MAX_ENDED_SESSIONS),
    },
  };
}

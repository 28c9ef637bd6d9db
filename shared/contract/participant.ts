/**
 * The participant heartbeat (docs/api.md#participant-heartbeat): one request per participant
 * per I, whatever it holds. A process that competes for several roles, is a member of a
 * group and watches it sends its role renewals (or acquisitions, announcements and standby
 * polls), its member heartbeat and its group poll in one POST /api/heartbeat, and gets each
 * part's answer back: exactly what that part's own route would have answered, status and
 * body. Each part costs the store what it costs alone; the parts run in parallel within the
 * request's budget, and a part that fails answers for itself (a 503 for one role leaves the
 * others' answers intact). The per-role and per-member routes stay for simple clients.
 */

import type { HeartbeatBody } from "./heartbeat-body.js";
import type { LeaseView } from "./lease-view.js";
import type { MemberHeartbeatBody, MemberHeartbeatResult, MemberList, MembersTiming } from "./members.js";
import type { HeartbeatResult } from "./outcomes.js";

/** A role part: the body of PUT /api/primary/{utype}, with its utype. */
export interface RolePart extends HeartbeatBody {
  readonly utype: string;
}

/** A read part: GET /api/primary/{utype} (`standbys` as its query). */
export interface ReadPart {
  readonly utype: string;
  readonly standbys?: boolean;
}

/** A member part: the body of PUT /api/members/{group}/{member}, with its group and member. */
export interface MemberPart extends MemberHeartbeatBody {
  readonly group: string;
  readonly member: string;
}

/**
 * A group part: GET /api/members/{group}, with the cursor of the last listing this
 * participant got. When the group has not changed since (same members, sessions, states,
 * addresses and previous sessions), the answer is `unchanged` and carries no members.
 */
export interface GroupPart {
  readonly group: string;
  readonly since?: string;
}

/** The body of POST /api/heartbeat. Every list is optional; at least one part in all. */
export interface ParticipantHeartbeatBody {
  readonly roles?: readonly RolePart[];
  readonly reads?: readonly ReadPart[];
  readonly members?: readonly MemberPart[];
  readonly groups?: readonly GroupPart[];
}

/** A group listing with the cursor to send as `since` next time. */
export interface GroupListing extends MemberList {
  readonly cursor: string;
}

/** The group has not changed since `since`: no members are sent. */
export interface GroupUnchanged extends MembersTiming {
  readonly group: string;
  readonly cursor: string;
  readonly unchanged: true;
}

export type GroupAnswer = GroupListing | GroupUnchanged;

/**
 * One part's answer on the wire: the status and body its own route would have answered
 * (200 with the view, 409 with the error and the view, 403, 503 …), and Retry-After in
 * seconds when that route would have sent one.
 */
export interface PartAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly retryAfter?: number;
}

/** The 200 answer of POST /api/heartbeat: one entry per part, in the order of the request. */
export interface ParticipantHeartbeatAnswer {
  readonly roles: readonly (PartAnswer & { readonly utype: string })[];
  readonly reads: readonly (PartAnswer & { readonly utype: string })[];
  readonly members: readonly (PartAnswer & { readonly group: string; readonly member: string })[];
  readonly groups: readonly (PartAnswer & { readonly group: string })[];
}

/** The typed outcome of one part, as the service computes it and the SDK hands it on. */
export type PartResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/** The typed answer of a participant heartbeat: one result per part, in the order of the request. */
export interface ParticipantResults {
  readonly roles: readonly PartResult<HeartbeatResult>[];
  readonly reads: readonly PartResult<LeaseView>[];
  readonly members: readonly PartResult<MemberHeartbeatResult>[];
  readonly groups: readonly PartResult<GroupAnswer>[];
}

/**
 * The wire types of membership (docs/membership.md): who is in a group, and who has failed.
 *
 * A **group** is a cluster, a **member** a stable name in it, a **session** one incarnation
 * of that member (a fresh id at every process start). Ids follow the same rule as utype
 * and uuid (input-rules.ts).
 */

import { MAX_MEMBER_TOKEN_LENGTH } from "./input-rules.js";
import { ADDRESS_SCHEMA, COUNT_SCHEMA, DATE_TIME_SCHEMA, DURATION_MS_SCHEMA, heartbeatBodySchema, ID_SCHEMA, ref, type ObjectSchema } from "./json-schema.js";

/**
 * The states of a member, derived on read from the row's age on the function host's clock:
 * `joining` (one heartbeat accepted, age ≤ T), `active` (≥ 2, age ≤ T), `unreachable`
 * (T < age ≤ ttl), `leaving` (age > ttl, or the member said goodbye). `removed` is not a
 * state a row can have: it is the watcher's event for a row the sweeper deleted.
 */
export type MemberState = "joining" | "active" | "unreachable" | "leaving";

export const MEMBER_STATES: readonly MemberState[] = ["joining", "active", "unreachable", "leaving"];

/**
 * The session this member's row had before the current one replaced it (docs/membership.md#the-rules: a
 * restart never hides the failure of the previous incarnation), with the state it had
 * when it was replaced (`unreachable` or `leaving`) and when that was.
 */
export interface PreviousSession {
  /** The replaced session's id. */
  readonly session: string;
  /** Its state when it was replaced: it had failed (`unreachable`) or gone (`leaving`). */
  readonly state: "unreachable" | "leaving";
  /** ISO-8601 UTC: when the new session replaced it. */
  readonly at: string;
}

/** One member as the service sees it at one instant. */
export interface MemberView {
  /** The member's stable name in the group. */
  readonly member: string;
  /** The session the row belongs to: one incarnation of the member. */
  readonly session: string;
  /** Where the member can be reached, or null. */
  readonly address: string | null;
  /** Its state at the instant of the answer, judged by age on the service's clock. */
  readonly state: MemberState;
  /** ISO-8601 UTC: when this session's first heartbeat was accepted. */
  readonly joinedAt: string;
  /** ISO-8601 UTC: when its last heartbeat was accepted. */
  readonly renewedAt: string;
  /** ISO-8601 UTC: when it said goodbye (DELETE), or null. */
  readonly leftAt: string | null;
  /** Heartbeats accepted for this session, the first one included. */
  readonly heartbeats: number;
  /**
   * How long ago its last heartbeat was accepted, in milliseconds of the service's own
   * operation: time during which the service itself was down does not count (see
   * docs/membership.md, "When the service itself was down").
   */
  readonly ageMs: number;
  /** The session the current one replaced, with the state it had then, or null. */
  readonly previous: PreviousSession | null;
}

/** The membership durations the service judges states by, from its configuration. */
export interface MembersTiming {
  /** I: a member heartbeats this often. */
  readonly intervalMs: number;
  /** T: older than this, a member is `unreachable`. */
  readonly timeoutMs: number;
  /** ttl: older than this, a member is `leaving`. */
  readonly ttlMs: number;
}

/**
 * The answer about one member (PUT and DELETE /api/members/{group}/{member}, and the body
 * of their 409s): its view, or null when it has no row, with the service's timing.
 */
export interface MemberAnswer extends MembersTiming {
  /** The member's group. */
  readonly group: string;
  /** The member's view, or null when it has no row. */
  readonly member: MemberView | null;
}

/** GET /api/members/{group}: every row of the group, judged at one instant. */
export interface MemberList extends MembersTiming {
  /** The group. */
  readonly group: string;
  /** Every member with a row. */
  readonly members: readonly MemberView[];
}

/** One group of GET /api/members: how many of its members are in each state. */
export interface GroupSummary {
  /** The group. */
  readonly group: string;
  /** How many of its members are in each state. */
  readonly members: Readonly<Record<MemberState, number>>;
}

/** GET /api/members: every group (a cross-partition read; not a hot path). */
export interface GroupList {
  /** Every group with at least one row. */
  readonly groups: readonly GroupSummary[];
}

/**
 * The body of PUT /api/members/{group}/{member}: `{"session", "address"?, "token"?}`.
 * Unknown fields are refused.
 */
export interface MemberHeartbeatBody {
  /** The caller's session: a fresh id at every start of the member. */
  readonly session: string;
  /** A string sets it, null clears it, omitted keeps the stored one (none for a new session). */
  readonly address?: string | null;
  /** The token of this session's last accepted heartbeat: the one-operation fast path. */
  readonly token?: string;
}

/** The query of DELETE /api/members/{group}/{member}: `?session=…`. */
export interface LeaveQuery {
  readonly session: string;
}

/**
 * The answer to a member heartbeat. `accepted` (200): the session is in the group, and
 * `token` is for the next heartbeat's fast path. Otherwise 409 with the member's view:
 * `held` (SessionHeld) another session of this member is `joining` or `active`, or the
 * caller's session is not the row's; `ended` (SessionEnded) the caller's session said
 * goodbye, went `leaving`, or was removed: it never comes back, rejoin with a new session;
 * `conflict` (Conflict) the write lost a race and nothing was retried.
 */
export type MemberHeartbeatResult =
  | { readonly outcome: "accepted"; readonly answer: MemberAnswer; readonly token: string }
  | { readonly outcome: "held" | "ended" | "conflict"; readonly answer: MemberAnswer };

/**
 * The answer to a goodbye. `left` (200): the session is `leaving` (or the member has no
 * row at all: the goodbye is idempotent). `held` (409 SessionHeld): the row belongs to
 * another session, which is left alone. `conflict` (409 Conflict): the write lost a race.
 */
export interface MemberLeaveResult {
  /** `left`, `held` or `conflict`, as above. */
  readonly outcome: "left" | "held" | "conflict";
  /** The member as the goodbye left it. */
  readonly answer: MemberAnswer;
}

/** Which 409 error code each refused membership outcome is sent with. */
export const MEMBER_REFUSED_CODES = {
  held: "SessionHeld",
  ended: "SessionEnded",
  conflict: "Conflict",
} as const;

export const TIMING_PROPERTIES = { intervalMs: DURATION_MS_SCHEMA, timeoutMs: DURATION_MS_SCHEMA, ttlMs: DURATION_MS_SCHEMA } as const;

export const PREVIOUS_SESSION_SCHEMA: ObjectSchema<PreviousSession> = {
  type: "object",
  description: "The session this member's row had before the current one replaced it.",
  properties: { session: ID_SCHEMA, state: { enum: ["unreachable", "leaving"] }, at: DATE_TIME_SCHEMA },
  required: ["session", "state", "at"],
  additionalProperties: false,
};

export const MEMBER_VIEW_SCHEMA: ObjectSchema<MemberView> = {
  type: "object",
  properties: {
    member: ID_SCHEMA,
    session: ID_SCHEMA,
    address: ADDRESS_SCHEMA,
    state: { enum: [...MEMBER_STATES] },
    joinedAt: DATE_TIME_SCHEMA,
    renewedAt: DATE_TIME_SCHEMA,
    leftAt: { oneOf: [DATE_TIME_SCHEMA, { type: "null" }] },
    heartbeats: { type: "integer", minimum: 1 },
    ageMs: DURATION_MS_SCHEMA,
    previous: { oneOf: [ref("PreviousSession"), { type: "null" }] },
  },
  required: ["member", "session", "address", "state", "joinedAt", "renewedAt", "leftAt", "heartbeats", "ageMs", "previous"],
  additionalProperties: false,
};

export const MEMBER_ANSWER_SCHEMA: ObjectSchema<MemberAnswer> = {
  type: "object",
  description: "One member (null when it has no row), with the service's timing.",
  properties: { group: ID_SCHEMA, member: { oneOf: [ref("MemberView"), { type: "null" }] }, ...TIMING_PROPERTIES },
  required: ["group", "member", "intervalMs", "timeoutMs", "ttlMs"],
};

export const MEMBER_LIST_SCHEMA: ObjectSchema<MemberList> = {
  type: "object",
  properties: { group: ID_SCHEMA, members: { type: "array", items: ref("MemberView") }, ...TIMING_PROPERTIES },
  required: ["group", "members", "intervalMs", "timeoutMs", "ttlMs"],
  additionalProperties: false,
};

export const GROUP_SUMMARY_SCHEMA: ObjectSchema<GroupSummary> = {
  type: "object",
  properties: {
    group: ID_SCHEMA,
    members: {
      type: "object",
      properties: Object.fromEntries(MEMBER_STATES.map((state) => [state, COUNT_SCHEMA])),
      required: [...MEMBER_STATES],
      additionalProperties: false,
    },
  },
  required: ["group", "members"],
  additionalProperties: false,
};

export const GROUP_LIST_SCHEMA: ObjectSchema<GroupList> = {
  type: "object",
  properties: { groups: { type: "array", items: ref("GroupSummary") } },
  required: ["groups"],
  additionalProperties: false,
};

export const MEMBER_HEARTBEAT_BODY_SCHEMA: ObjectSchema<MemberHeartbeatBody> = heartbeatBodySchema("session", {
  token: { type: "string", maxLength: MAX_MEMBER_TOKEN_LENGTH, description: "The token of this session's last accepted heartbeat." },
});

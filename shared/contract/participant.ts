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

import { HEARTBEAT_BODY_SCHEMA, type HeartbeatBody } from "./heartbeat-body.js";
import { MAX_PARTS_PER_LIST } from "./input-rules.js";
import { ID_SCHEMA, ref, type JsonSchema, type ObjectSchema } from "./json-schema.js";
import type { LeaseView } from "./lease-view.js";
import { MEMBER_HEARTBEAT_BODY_SCHEMA, TIMING_PROPERTIES, type MemberHeartbeatBody, type MemberHeartbeatResult, type MemberList, type MembersTiming } from "./members.js";
import type { HeartbeatResult } from "./outcomes.js";

/** A role part: the body of PUT /api/primary/{utype}, with its utype. */
export interface RolePart extends HeartbeatBody {
  /** The role this part heartbeats. */
  readonly utype: string;
}

/** A read part: GET /api/primary/{utype} (`standbys` as its query). */
export interface ReadPart {
  /** The role to read. */
  readonly utype: string;
  /** true: the answer lists the role's standbys too (one more read). */
  readonly standbys?: boolean;
}

/** A member part: the body of PUT /api/members/{group}/{member}, with its group and member. */
export interface MemberPart extends MemberHeartbeatBody {
  /** The member's group. */
  readonly group: string;
  /** The member's stable name in the group. */
  readonly member: string;
}

/**
 * A group part: GET /api/members/{group}, with the cursor of the last listing this
 * participant got. When the group has not changed since (same members, sessions, states,
 * addresses and previous sessions), the answer is `unchanged` and carries no members.
 */
export interface GroupPart {
  /** The group to list. */
  readonly group: string;
  /** The `cursor` of the last listing this participant got, if any. */
  readonly since?: string;
}

/** The body of POST /api/heartbeat. Every list is optional; at least one part in all. */
export interface ParticipantHeartbeatBody {
  /** Role heartbeats: renewals, acquisitions, announcements and standby polls. */
  readonly roles?: readonly RolePart[];
  /** Reads of roles the participant only watches. */
  readonly reads?: readonly ReadPart[];
  /** Member heartbeats. */
  readonly members?: readonly MemberPart[];
  /** Group polls. */
  readonly groups?: readonly GroupPart[];
}

/** A group listing with the cursor to send as `since` next time. */
export interface GroupListing extends MemberList {
  /** What to send as `since` next time. */
  readonly cursor: string;
}

/** The group has not changed since `since`: no members are sent. */
export interface GroupUnchanged extends MembersTiming {
  /** The group. */
  readonly group: string;
  /** The same cursor as the listing's that was sent as `since`. */
  readonly cursor: string;
  /** Always true: nothing changed, no members are sent. */
  readonly unchanged: true;
}

/** A group part's answer: the listing, or word that nothing changed since the cursor sent. */
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
  /** One result per role part, as heartbeat() would have returned or thrown it. */
  readonly roles: readonly PartResult<HeartbeatResult>[];
  /** One result per read part, as getPrimary() would have returned or thrown it. */
  readonly reads: readonly PartResult<LeaseView>[];
  /** One result per member part, as memberHeartbeat() would have returned or thrown it. */
  readonly members: readonly PartResult<MemberHeartbeatResult>[];
  /** One result per group part. */
  readonly groups: readonly PartResult<GroupAnswer>[];
}

/**
 * A part: what its own route takes, the route's ids (required) in front of the body or query
 * (`properties`, of which `required` are required).
 */
function partSchema<Id extends string, More extends Readonly<Record<string, JsonSchema>>>(
  description: string,
  ids: readonly Id[],
  properties: More,
  required: readonly (keyof More & string)[] = [],
): ObjectSchema<PartShape<Id, More>> {
  const all = { ...Object.fromEntries(ids.map((id) => [id, ID_SCHEMA])), ...properties };
  return { type: "object", description, properties: all as ObjectSchema<PartShape<Id, More>>["properties"], required: [...ids, ...required], additionalProperties: false };
}

/** What partSchema describes: the ids, and the body's or query's fields. */
type PartShape<Id extends string, More> = { readonly [K in Id]: string } & { readonly [K in keyof More]?: unknown };

export const ROLE_PART_SCHEMA: ObjectSchema<RolePart> = partSchema(
  "A role part: the body of PUT /api/primary/{utype}, with its utype.",
  ["utype"],
  HEARTBEAT_BODY_SCHEMA.properties,
  HEARTBEAT_BODY_SCHEMA.required,
);

export const READ_PART_SCHEMA: ObjectSchema<ReadPart> = partSchema("A read part: GET /api/primary/{utype}, `standbys` as its query.", ["utype"], {
  standbys: { type: "boolean", description: "true: add `standbys` (one more read)." },
});

export const MEMBER_PART_SCHEMA: ObjectSchema<MemberPart> = partSchema(
  "A member part: the body of PUT /api/members/{group}/{member}, with its group and member.",
  ["group", "member"],
  MEMBER_HEARTBEAT_BODY_SCHEMA.properties,
  MEMBER_HEARTBEAT_BODY_SCHEMA.required,
);

export const GROUP_PART_SCHEMA: ObjectSchema<GroupPart> = partSchema("A group part: GET /api/members/{group}, with the cursor of the last listing received.", ["group"], {
  since: { type: "string", description: "The `cursor` of the last listing: when the group has not changed since, the answer is `unchanged`." },
});

const partList = (part: string): JsonSchema => ({ type: "array", maxItems: MAX_PARTS_PER_LIST, items: ref(part) });

export const PARTICIPANT_HEARTBEAT_BODY_SCHEMA: ObjectSchema<ParticipantHeartbeatBody> = {
  type: "object",
  description: "Every list is optional; at least one part in all, at most 16 per list and 32 in all; a utype once across roles and reads, a member once, a group once.",
  properties: { roles: partList("RolePart"), reads: partList("ReadPart"), members: partList("MemberPart"), groups: partList("GroupPart") },
  required: [],
  additionalProperties: false,
};

export const GROUP_LISTING_SCHEMA: ObjectSchema<GroupListing> = {
  type: "object",
  description: "GET /api/members/{group}'s listing, with the cursor to send as `since` next time.",
  properties: { group: ID_SCHEMA, members: { type: "array", items: ref("MemberView") }, ...TIMING_PROPERTIES, cursor: { type: "string" } },
  required: ["group", "members", "intervalMs", "timeoutMs", "ttlMs", "cursor"],
  additionalProperties: false,
};

export const GROUP_UNCHANGED_SCHEMA: ObjectSchema<GroupUnchanged> = {
  type: "object",
  description: "The group has not changed since `since`: no members.",
  properties: { group: ID_SCHEMA, ...TIMING_PROPERTIES, cursor: { type: "string" }, unchanged: { const: true } },
  required: ["group", "intervalMs", "timeoutMs", "ttlMs", "cursor", "unchanged"],
  additionalProperties: false,
};

/** Any error body a part can answer: `error`, and `missing` beside it for a 403. */
const PART_ERROR: JsonSchema = {
  allOf: [ref("Error")],
  properties: { missing: { type: "object", additionalProperties: { type: "string" } } },
  unevaluatedProperties: false,
};

/** The body the part's own route answers: its success (`view` with `adds`), a refusal with the view, or an error alone. */
function partBody(view: string, adds: Readonly<Record<string, JsonSchema>>): JsonSchema {
  const success = Object.keys(adds).length === 0 ? ref(view) : { allOf: [ref(view), { type: "object", properties: adds, required: Object.keys(adds) }] };
  return {
    anyOf: [
      { ...success, unevaluatedProperties: false },
      { allOf: [ref("Error"), ref(view)], unevaluatedProperties: false },
      PART_ERROR,
    ],
  };
}

/** One entry of the answer: the part's names, and its route's status, body and Retry-After. */
function partAnswer(names: Readonly<Record<string, JsonSchema>>, body: JsonSchema): JsonSchema {
  return {
    type: "object",
    properties: {
      ...names,
      status: { type: "integer", description: "The status the part's own route would have answered." },
      body,
      retryAfter: { type: "integer", minimum: 0, description: "Seconds, where the part's own route would have sent Retry-After (503 Overloaded)." },
    },
    required: [...Object.keys(names), "status", "body"],
    additionalProperties: false,
  };
}

export const PARTICIPANT_HEARTBEAT_ANSWER_SCHEMA: ObjectSchema<ParticipantHeartbeatAnswer> = {
  type: "object",
  description: "One entry per part, in the order of the request; each is exactly what the part's own route would have answered.",
  properties: {
    roles: { type: "array", items: partAnswer({ utype: ID_SCHEMA }, partBody("LeaseView", { lease: { type: "string" } })) },
    reads: { type: "array", items: partAnswer({ utype: ID_SCHEMA }, partBody("LeaseView", {})) },
    members: { type: "array", items: partAnswer({ group: ID_SCHEMA, member: ID_SCHEMA }, partBody("MemberAnswer", { token: { type: "string" } })) },
    groups: {
      type: "array",
      items: partAnswer({ group: ID_SCHEMA }, { anyOf: [ref("GroupListing"), ref("GroupUnchanged"), PART_ERROR] }),
    },
  },
  required: ["roles", "reads", "members", "groups"],
  additionalProperties: false,
};

import { MAX_PARTICIPANT_BODY_BYTES, MAX_PARTS, MAX_PARTS_PER_LIST } from "../contract/input-rules.js";
import type { GroupPart, MemberPart, ParticipantHeartbeatBody, ReadPart, RolePart } from "../contract/participant.js";
import { invalid } from "./http-error.js";
import { MEMBER_HEARTBEAT_FIELDS, memberHeartbeatFields } from "./member-validation.js";
import { HEARTBEAT_FIELDS, heartbeatFields, isJsonObject, parseId, parseJsonObject, refuseUnknownFields } from "./validation.js";

/** The participant heartbeat's body with every list present (empty when the caller left it out). */
export interface ParsedParticipantBody extends ParticipantHeartbeatBody {
  readonly roles: readonly RolePart[];
  readonly reads: readonly ReadPart[];
  readonly members: readonly MemberPart[];
  readonly groups: readonly GroupPart[];
}

const LISTS = ["roles", "reads", "members", "groups"] as const;
const BODY_FIELDS: ReadonlySet<string> = new Set(LISTS);
const ROLE_FIELDS: ReadonlySet<string> = new Set(["utype", ...HEARTBEAT_FIELDS]);
const READ_FIELDS: ReadonlySet<string> = new Set(["utype", "standbys"]);
const MEMBER_FIELDS: ReadonlySet<string> = new Set(["group", "member", ...MEMBER_HEARTBEAT_FIELDS]);
const GROUP_FIELDS: ReadonlySet<string> = new Set(["group", "since"]);

/** Longer than any cursor the service issues (shared/members/group-cursor.ts): treated as absent. */
const MAX_CURSOR_LENGTH = 64;

/**
 * Parses POST /api/heartbeat's body (docs/api.md#participant-heartbeat). Each part is
 * checked by the parser of the route it stands for (a role by the PUT lease body's, a
 * member by the member heartbeat's), with the field named where it sits (`roles[1].uuid`);
 * then the limits: at most MAX_PARTS_PER_LIST parts per list and MAX_PARTS in all, at
 * least one; a utype once across roles and reads, a (group, member) once, a group once in
 * groups. Any violation is a 400 for the whole request: nothing is done.
 */
export function parseParticipantBody(bytes: Uint8Array): ParsedParticipantBody {
  const record = parseJsonObject(
    bytes,
    BODY_FIELDS,
    '{"roles": [{"utype": "…", "uuid": "…"}], "members": [{"group": "…", "member": "…", "session": "…"}]}',
    "roles, reads, members and groups",
    MAX_PARTICIPANT_BODY_BYTES,
  );
  const body: ParsedParticipantBody = {
    roles: parts(record, "roles", ROLE_FIELDS, "utype, uuid, address, lease, announce, priority and preempt", (part, at) => ({ utype: parseId("utype", part["utype"], at), ...heartbeatFields(part, at) })),
    reads: parts(record, "reads", READ_FIELDS, "utype and standbys", (part, at) => readPart(part, at)),
    members: parts(record, "members", MEMBER_FIELDS, "group, member, session, address and token", (part, at) => ({
      group: parseId("group", part["group"], at),
      member: parseId("member", part["member"], at),
      ...memberHeartbeatFields(part, at),
    })),
    groups: parts(record, "groups", GROUP_FIELDS, "group and since", (part, at) => groupPart(part, at)),
  };
  const total = LISTS.reduce((sum, list) => sum + body[list].length, 0);
  if (total === 0) throw invalid("The body has no part: send at least one of roles, reads, members or groups.");
  if (total > MAX_PARTS) throw invalid(`The body has ${total} parts; the limit is ${MAX_PARTS} in all (and ${MAX_PARTS_PER_LIST} per list): split them over two requests.`);
  once([...body.roles.map((part, index) => [`roles[${index}].utype`, part.utype] as const), ...body.reads.map((part, index) => [`reads[${index}].utype`, part.utype] as const)], "utype");
  once(body.members.map((part, index) => [`members[${index}].member`, `${part.group}/${part.member}`] as const), "member of its group");
  once(body.groups.map((part, index) => [`groups[${index}].group`, part.group] as const), "group");
  return body;
}

/** One list of parts: absent is empty; otherwise an array of at most MAX_PARTS_PER_LIST objects, each parsed with `parse`. */
function parts<T>(
  record: Readonly<Record<string, unknown>>,
  list: (typeof LISTS)[number],
  fields: ReadonlySet<string>,
  takes: string,
  parse: (part: Readonly<Record<string, unknown>>, at: string) => T,
): T[] {
  const value = record[list];
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalid(`${list} must be a list of parts (a JSON array).`);
  if (value.length > MAX_PARTS_PER_LIST) throw invalid(`${list} has ${value.length} parts; the limit is ${MAX_PARTS_PER_LIST}.`);
  return value.map((part: unknown, index) => {
    const where = `${list}[${index}]`;
    if (!isJsonObject(part)) throw invalid(`${where} must be a JSON object.`);
    refuseUnknownFields(part, fields, where, takes);
    return parse(part, `${where}.`);
  });
}

function readPart(part: Readonly<Record<string, unknown>>, at: string): ReadPart {
  const utype = parseId("utype", part["utype"], at);
  const standbys = part["standbys"];
  if (standbys !== undefined && typeof standbys !== "boolean") throw invalid(`${at}standbys must be true or false.`);
  return standbys === true ? { utype, standbys } : { utype };
}

/** `since` is only ever a hint, as a token is: one that is not a cursor the service could have issued is treated as absent. */
function groupPart(part: Readonly<Record<string, unknown>>, at: string): GroupPart {
  const group = parseId("group", part["group"], at);
  const since = part["since"];
  return typeof since === "string" && since !== "" && since.length <= MAX_CURSOR_LENGTH ? { group, since } : { group };
}

/** 400 naming the second place a name appears, and the first. */
function once(named: ReadonlyArray<readonly [field: string, name: string]>, what: string): void {
  const seen = new Map<string, string>();
  for (const [field, name] of named) {
    const first = seen.get(name);
    if (first !== undefined) throw invalid(`${field}: ${JSON.stringify(name)} appears twice (also ${first}): send each ${what} once.`);
    seen.set(name, field);
  }
}

import { MEMBER_STATES, type GroupList, type MemberAnswer, type MemberList, type MemberState, type MemberView, type PreviousSession } from "../../contract/members.js";
import type { GroupAnswer } from "../../contract/participant.js";
import { CorruptedMessageError } from "./corrupted-message-error.js";

/**
 * Validation of what the service answers about members (docs/membership.md), as strict as for leases:
 * every promised field present with its type, and the group (and member) the ones asked
 * for; anything else is a CorruptedMessageError, never a half-read value.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
const isIso = (value: unknown): value is string => typeof value === "string" && !Number.isNaN(Date.parse(value));

function corrupted(what: string, status: number, problem: string): CorruptedMessageError {
  return new CorruptedMessageError(`${what}: corrupted message (${problem}).`, status);
}

function parseTiming(body: Json, what: string, status: number): { intervalMs: number; timeoutMs: number; ttlMs: number } {
  const { intervalMs, timeoutMs, ttlMs } = body;
  if (!isCount(intervalMs) || intervalMs === 0 || !isCount(timeoutMs) || timeoutMs <= 2 * intervalMs || !isCount(ttlMs) || ttlMs <= timeoutMs) {
    throw corrupted(what, status, "intervalMs, timeoutMs and ttlMs must be positive integers with timeoutMs > 2 × intervalMs and ttlMs > timeoutMs");
  }
  return { intervalMs, timeoutMs, ttlMs };
}

export function parseMemberView(value: unknown, what: string, status: number): MemberView {
  if (!isObject(value)) throw corrupted(what, status, "a member must be an object");
  const { member, session, address, state, joinedAt, renewedAt, leftAt, heartbeats, ageMs, previous } = value;
  if (typeof member !== "string" || member === "") throw corrupted(what, status, "member.member is missing");
  if (typeof session !== "string" || session === "") throw corrupted(what, status, "member.session is missing");
  if (address !== null && typeof address !== "string") throw corrupted(what, status, "member.address must be a string or null");
  if (!MEMBER_STATES.includes(state as MemberState)) throw corrupted(what, status, `member.state must be one of ${MEMBER_STATES.join(", ")}`);
  if (!isIso(joinedAt) || !isIso(renewedAt) || (leftAt !== null && !isIso(leftAt))) throw corrupted(what, status, "member times must be ISO-8601 (leftAt may be null)");
  if (!isCount(heartbeats) || heartbeats < 1) throw corrupted(what, status, "member.heartbeats must be a positive integer");
  if (!isCount(ageMs)) throw corrupted(what, status, "member.ageMs must be a non-negative integer");
  return { member, session, address, state: state as MemberState, joinedAt, renewedAt, leftAt, heartbeats, ageMs, previous: parsePrevious(previous, what, status) };
}

function parsePrevious(value: unknown, what: string, status: number): PreviousSession | null {
  if (value === null) return null;
  if (!isObject(value)) throw corrupted(what, status, "member.previous must be an object or null");
  const { session, state, at } = value;
  if (typeof session !== "string" || (state !== "unreachable" && state !== "leaving") || !isIso(at)) {
    throw corrupted(what, status, "member.previous must be {session, state: unreachable|leaving, at}");
  }
  return { session, state, at };
}

/** The answer about one member: the group and member asked for, or member null. */
export function parseMemberAnswer(body: unknown, group: string, member: string, status: number, what: string): MemberAnswer {
  if (!isObject(body)) throw corrupted(what, status, "the body is not a JSON object");
  if (body["group"] !== group) throw corrupted(what, status, `asked about group ${JSON.stringify(group)}, the answer is about ${JSON.stringify(body["group"])}`);
  const timing = parseTiming(body, what, status);
  const view = body["member"] === null ? null : parseMemberView(body["member"], what, status);
  if (view !== null && view.member !== member) throw corrupted(what, status, `asked about member ${JSON.stringify(member)}, the answer is about ${JSON.stringify(view.member)}`);
  return { group, member: view, ...timing };
}

/** The 200 answer to a member heartbeat: the caller's own session, plus a token. */
export function parseAcceptedMemberHeartbeat(body: unknown, group: string, member: string, session: string, status: number, what: string): { answer: MemberAnswer; token: string } {
  const answer = parseMemberAnswer(body, group, member, status, what);
  const token = (body as Json)["token"];
  if (typeof token !== "string" || token === "") throw corrupted(what, status, "the accepted heartbeat carries no token");
  if (answer.member?.session !== session) throw corrupted(what, status, "the accepted heartbeat names another session");
  return { answer, token };
}

export function parseMemberList(body: unknown, group: string, status: number, what: string): MemberList {
  if (!isObject(body)) throw corrupted(what, status, "the body is not a JSON object");
  if (body["group"] !== group) throw corrupted(what, status, `asked for group ${JSON.stringify(group)}, the answer is about ${JSON.stringify(body["group"])}`);
  if (!Array.isArray(body["members"])) throw corrupted(what, status, "members must be an array");
  const timing = parseTiming(body, what, status);
  return { group, members: body["members"].map((view) => parseMemberView(view, what, status)), ...timing };
}

/**
 * A group part's 200 answer (docs/api.md#participant-heartbeat): the listing with its cursor,
 * or `unchanged` with the cursor and the timing only, for the group asked about.
 */
export function parseGroupAnswer(body: unknown, group: string, status: number, what: string): GroupAnswer {
  const cursor = isObject(body) ? body["cursor"] : undefined;
  if (typeof cursor !== "string" || cursor === "") throw corrupted(what, status, "the group part carries no cursor");
  if ((body as Json)["unchanged"] !== true) return { ...parseMemberList(body, group, status, what), cursor };
  if ((body as Json)["group"] !== group) throw corrupted(what, status, `asked for group ${JSON.stringify(group)}, the answer is about ${JSON.stringify((body as Json)["group"])}`);
  return { group, cursor, unchanged: true, ...parseTiming(body as Json, what, status) };
}

export function parseGroupList(body: unknown, status: number, what: string): GroupList {
  if (!isObject(body) || !Array.isArray(body["groups"])) throw corrupted(what, status, "groups must be an array");
  return {
    groups: body["groups"].map((entry) => {
      if (!isObject(entry) || typeof entry["group"] !== "string" || !isObject(entry["members"])) throw corrupted(what, status, "each group must be {group, members}");
      const counts = entry["members"];
      const members = Object.fromEntries(MEMBER_STATES.map((state) => [state, counts[state]])) as Record<MemberState, unknown>;
      if (!Object.values(members).every(isCount)) throw corrupted(what, status, `members must count ${MEMBER_STATES.join(", ")}`);
      return { group: entry["group"], members: members as Record<MemberState, number> };
    }),
  };
}

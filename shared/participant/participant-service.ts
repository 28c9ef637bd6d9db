import type { GroupAnswer, ParticipantHeartbeatBody, ParticipantResults, PartResult } from "../contract/participant.js";
import type { LeaseService } from "../lease/lease-service.js";
import { groupCursor } from "../members/group-cursor.js";
import type { MemberService } from "../members/member-service.js";
import type { RequestArrival } from "../service/request-budget.js";

/** The services a participant heartbeat's parts go to. */
export interface ParticipantServices {
  readonly service: LeaseService;
  readonly members: MemberService;
}

/**
 * One participant heartbeat (docs/api.md#participant-heartbeat): every part goes to the
 * service it would have gone to through its own route — one write per renewal, one per
 * member heartbeat, one query per group poll — all at once, on the one request's arrival
 * (so within its budget). A part that throws answers for itself; the others are not held
 * back by it. The body is assumed valid (the handler, or a typed caller, checked it).
 */
export async function participantHeartbeat(
  { service, members }: ParticipantServices,
  body: ParticipantHeartbeatBody,
  arrival?: RequestArrival,
): Promise<ParticipantResults> {
  const [roles, reads, memberResults, groups] = await Promise.all([
    Promise.all((body.roles ?? []).map(({ utype, ...heartbeat }) => settle(() => service.heartbeat({ utype, ...heartbeat }, arrival)))),
    Promise.all((body.reads ?? []).map(({ utype, standbys }) => settle(() => service.getPrimary(utype, arrival, standbys === true ? { standbys: true } : {})))),
    Promise.all((body.members ?? []).map(({ group, member, ...heartbeat }) => settle(() => members.heartbeat({ group, member, ...heartbeat }, arrival)))),
    Promise.all((body.groups ?? []).map(({ group, since }) => settle(() => listGroup(members, group, since, arrival)))),
  ]);
  return { roles, reads, members: memberResults, groups };
}

/** A group's listing, or `unchanged` when its cursor is the one the participant holds. */
async function listGroup(members: MemberService, group: string, since: string | undefined, arrival: RequestArrival | undefined): Promise<GroupAnswer> {
  const list = await members.list(group, arrival);
  const cursor = groupCursor(list);
  if (since === cursor) return { group, intervalMs: list.intervalMs, timeoutMs: list.timeoutMs, ttlMs: list.ttlMs, cursor, unchanged: true };
  return { ...list, cursor };
}

/** The part's result; whatever it throws, at once or later, is its own failure, never the request's. */
async function settle<T>(work: () => Promise<T>): Promise<PartResult<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, error };
  }
}

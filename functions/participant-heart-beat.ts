import { MAX_PARTICIPANT_BODY_BYTES } from "../shared/contract/input-rules.js";
import type { OperationDoc } from "../shared/contract/operation-doc.js";
import type { PartAnswer, PartResult, ParticipantHeartbeatAnswer } from "../shared/contract/participant.js";
import type { Granted } from "../shared/http/granted.js";
import { json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import { failureAnswer, internalErrorAnswer } from "../shared/http/failure-answer.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { parseParticipantBody } from "../shared/http/participant-validation.js";
import { readBody, rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { RouteLog } from "../shared/http/route.js";
import type { Runtime } from "../shared/http/runtime.js";
import { participantHeartbeat as runParts } from "../shared/participant/participant-service.js";
import type { RequestArrival } from "../shared/service/request-budget.js";
import { primaryAnswer } from "./get-primary.js";
import { memberListAnswer } from "./list-members.js";
import { heartbeatAnswer } from "./update-heart-beat.js";
import { memberHeartbeatAnswer } from "./update-member-heart-beat.js";

/**
 * POST /api/heartbeat — a participant's heartbeat (docs/api.md#participant-heartbeat): its
 * role renewals or polls, its reads, its member heartbeats and its group polls in one
 * request. Each part runs as its own route would (participant-service.ts, in parallel on
 * this request's one arrival) and is answered by that route's own mapping, status and
 * body, failures included: a 503 for one part leaves the others' answers intact. A role or
 * member part outside the caller's grants answers its route's 403 and is never sent to the
 * store. The answer is 200 whenever the request itself is valid.
 */
export async function participantHeartBeat(request: HandlerRequest, runtime: Runtime, arrival: RequestArrival, log: RouteLog, granted: Granted): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  const body = parseParticipantBody(await readBody(request, MAX_PARTICIPANT_BODY_BYTES));
  // Grants per part, before any store call: a refused part is answered and left out.
  const roleRefusals = body.roles.map(({ utype }) => granted.refusal("updateHeartBeat", { utype }));
  const memberRefusals = body.members.map(({ group, member }) => granted.refusal("updateMemberHeartBeat", { group, member }));
  const results = await runParts(
    runtime,
    {
      roles: body.roles.filter((_part, index) => roleRefusals[index] === undefined),
      reads: body.reads,
      members: body.members.filter((_part, index) => memberRefusals[index] === undefined),
      groups: body.groups,
    },
    arrival,
  );
  const roles = merged(roleRefusals, results.roles);
  const members = merged(memberRefusals, results.members);
  const answer: ParticipantHeartbeatAnswer = {
    roles: body.roles.map((part, index) => ({ utype: part.utype, ...settled(roles[index], log, `roles[${index}]`, (value) => heartbeatAnswer(part.utype, value)) })),
    reads: body.reads.map((part, index) => ({ utype: part.utype, ...settled(results.reads[index], log, `reads[${index}]`, primaryAnswer) })),
    members: body.members.map((part, index) => ({
      group: part.group,
      member: part.member,
      ...settled(members[index], log, `members[${index}]`, (value) => memberHeartbeatAnswer(part, value)),
    })),
    groups: body.groups.map((part, index) => ({ group: part.group, ...settled(results.groups[index], log, `groups[${index}]`, memberListAnswer) })),
  };
  return json(200, answer);
}

/** The refusals in place, and the results of the parts that ran, in order, between them. */
function merged<T>(refusals: readonly (HttpResponseInit | undefined)[], ran: readonly PartResult<T>[]): Array<HttpResponseInit | PartResult<T> | undefined> {
  let next = 0;
  return refusals.map((refusal) => refusal ?? ran[next++]);
}

/**
 * One part's answer, by its route's own mapping: the outcome's answer, or failureAnswer
 * (as handleRoute answers a thrown failure), or for a bug 500 InternalError for this part
 * alone, logged with its stack and the part's place, never shown.
 */
function settled<T>(result: HttpResponseInit | PartResult<T> | undefined, log: RouteLog, at: string, answer: (value: T) => HttpResponseInit): PartAnswer {
  if (result === undefined) throw new Error(`${at} has no result`);
  if (!("ok" in result)) return partAnswer(result);
  if (result.ok) return partAnswer(answer(result.value));
  const partLog: RouteLog = { warn: (message) => log.warn(`${at}: ${message}`), error: (message, error) => log.error(`${at}: ${message}`, error) };
  const known = failureAnswer(result.error, partLog);
  if (known !== undefined) return partAnswer(known);
  partLog.error("unexpected error", result.error);
  return partAnswer(internalErrorAnswer());
}

/** A route's answer as a part carries it: status, JSON body, and Retry-After in seconds when the route sends one. */
export function partAnswer(response: HttpResponseInit): PartAnswer {
  const retryAfter = (response.headers as Record<string, string> | undefined)?.["retry-after"];
  return { status: response.status ?? 200, body: response.jsonBody, ...(retryAfter === undefined ? {} : { retryAfter: Number(retryAfter) }) };
}

export const participantHeartBeatDoc: OperationDoc = {
  tag: "leases",
  summary: "A participant's heartbeat: its roles, reads, member heartbeats and group polls in one request",
  description:
    "One request per participant per I (docs/api.md#participant-heartbeat). Each part is answered with exactly the status and body its own route would answer (PUT /api/primary/{utype} for a role, GET /api/primary/{utype} for a read, PUT /api/members/{group}/{member} for a member, GET /api/members/{group} for a group), failures included: 403 for a part outside the caller's grants, 503 for a part the store failed, with `retryAfter` where the route would send Retry-After. A group part whose `since` is its current cursor answers `unchanged` without the members. At most 16 parts per list, 32 in all; the body may be up to 64 KiB.",
  body: "ParticipantHeartbeatBody",
  ok: { description: "Every part's answer, in the order of the request.", json: "ParticipantHeartbeatAnswer" },
  forbidden: false,
};

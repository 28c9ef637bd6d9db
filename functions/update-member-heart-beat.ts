import { errorResponse, json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { parseMemberHeartbeatBody } from "../shared/http/member-validation.js";
import { readBody, rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";
import { parseId } from "../shared/http/validation.js";
import type { RequestArrival } from "../shared/service/request-budget.js";
import type { OperationDoc } from "../shared/contract/operation-doc.js";
import type { MemberHeartbeatResult } from "../shared/contract/members.js";

/** PUT /api/members/{group}/{member} — a member's heartbeat: join, renew, or replace a failed session. */
export async function updateMemberHeartBeat(request: HandlerRequest, { members }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  const group = parseId("group", request.params["group"]);
  const member = parseId("member", request.params["member"]);
  const body = parseMemberHeartbeatBody(await readBody(request));
  return memberHeartbeatAnswer({ group, member, session: body.session }, await members.heartbeat({ group, member, ...body }, arrival));
}

/** A member heartbeat's outcome as PUT /api/members/{group}/{member} answers it, and so as a member part of a participant heartbeat does. */
export function memberHeartbeatAnswer({ group, member, session }: { group: string; member: string; session: string }, result: MemberHeartbeatResult): HttpResponseInit {
  switch (result.outcome) {
    case "accepted":
      return json(200, { ...result.answer, token: result.token });
    case "held":
      return errorResponse(
        "SessionHeld",
        `${group}/${member} is held by another session that is joining or active; a new session is accepted once that one is unreachable (after T without a heartbeat).`,
        result.answer,
      );
    case "ended":
      return errorResponse(
        "SessionEnded",
        `Session ${session} of ${group}/${member} has ended (it said goodbye, went leaving, or was replaced or removed) and never comes back: join again with a new session.`,
        result.answer,
      );
    case "conflict":
      return errorResponse("Conflict", `Another write to ${group}/${member} won the race; send the heartbeat again.`, result.answer);
  }
}

export const updateMemberHeartBeatDoc: OperationDoc = {
  tag: "membership",
  summary: "A member's heartbeat: join, renew, or replace a failed session",
  body: "MemberHeartbeatBody",
  ok: {
    description: "The session is in the group.",
    json: "MemberAnswer",
    adds: { token: { type: "string", description: "The token for the next heartbeat's one-operation fast path." } },
  },
  errors: [
    { code: "SessionHeld", with: "MemberAnswer" },
    { code: "SessionEnded", with: "MemberAnswer" },
    { code: "Conflict", with: "MemberAnswer" },
  ],
};

import { errorResponse, json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";
import { parseId } from "../shared/http/validation.js";
import type { RequestArrival } from "../shared/service/request-budget.js";
import type { OperationDoc } from "../shared/contract/operation-doc.js";
import { ID_SCHEMA } from "../shared/contract/json-schema.js";

/**
 * DELETE /api/members/{group}/{member}?session=… — goodbye: the session is leaving at once,
 * and the sweeper removes it after the retention. Idempotent: a member with no row is 200
 * with `member: null`, and nothing is written.
 */
export async function leaveGroup(request: HandlerRequest, { members }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, Object.keys(leaveGroupDoc.query ?? {}));
  const group = parseId("group", request.params["group"]);
  const member = parseId("member", request.params["member"]);
  const session = parseId("session", request.query.get("session") ?? undefined);
  const result = await members.leave({ group, member, session }, arrival);
  switch (result.outcome) {
    case "left":
      return json(200, result.answer);
    case "held":
      return errorResponse("SessionHeld", `${group}/${member} belongs to another session; only that session can say goodbye for it.`, result.answer);
    case "conflict":
      return errorResponse("Conflict", `Another write to ${group}/${member} won the race; send the goodbye again.`, result.answer);
  }
}

export const leaveGroupDoc: OperationDoc = {
  tag: "membership",
  summary: "Goodbye: the session is leaving at once",
  query: { session: { description: "The leaving session.", required: true, schema: ID_SCHEMA } },
  ok: { description: "The member, leaving (`member: null` when it has no row).", json: "MemberAnswer" },
  errors: [
    { code: "SessionHeld", with: "MemberAnswer" },
    { code: "Conflict", with: "MemberAnswer" },
  ],
};

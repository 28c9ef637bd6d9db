import { json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";
import { parseId } from "../shared/http/validation.js";
import type { RequestArrival } from "../shared/service/request-budget.js";
import type { OperationDoc } from "../shared/contract/operation-doc.js";
import type { MemberList } from "../shared/contract/members.js";
import type { GroupAnswer } from "../shared/contract/participant.js";

/** GET /api/members/{group} — every member of the group with its state and age: one partition query. */
export async function listMembers(request: HandlerRequest, { members }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  const group = parseId("group", request.params["group"]);
  return memberListAnswer(await members.list(group, arrival));
}

/**
 * A group's listing as GET /api/members/{group} answers it, and so as a group part of a
 * participant heartbeat does (with its cursor, or `unchanged` without the members).
 */
export function memberListAnswer(list: MemberList | GroupAnswer): HttpResponseInit {
  return json(200, list);
}

export const listMembersDoc: OperationDoc = {
  tag: "membership",
  summary: "Every member of the group with its state and age",
  ok: { description: "The group, judged at one instant.", json: "MemberList" },
};

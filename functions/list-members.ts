import { json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";
import { parseId } from "../shared/http/validation.js";
import type { RequestArrival } from "../shared/service/request-budget.js";
import type { OperationDoc } from "../shared/contract/operation-doc.js";

/** GET /api/members/{group} — every member of the group with its state and age: one partition query. */
export async function listMembers(request: HandlerRequest, { members }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  const group = parseId("group", request.params["group"]);
  return json(200, await members.list(group, arrival));
}

export const listMembersDoc: OperationDoc = {
  tag: "membership",
  summary: "Every member of the group with its state and age",
  ok: { description: "The group, judged at one instant.", json: "MemberList" },
};

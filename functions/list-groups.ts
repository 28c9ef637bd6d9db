import { json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";
import type { RequestArrival } from "../shared/service/request-budget.js";
import type { OperationDoc } from "../shared/contract/operation-doc.js";

/** GET /api/members — every group with its members counted by state (cross-partition; not a hot path). */
export async function listGroups(request: HandlerRequest, { members }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  return json(200, await members.listGroups(arrival));
}

export const listGroupsDoc: OperationDoc = {
  tag: "membership",
  summary: "Every group with its members counted by state",
  ok: { description: "Every group (a cross-partition read).", json: "GroupList" },
};

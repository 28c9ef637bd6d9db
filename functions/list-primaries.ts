import { json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";
import type { RequestArrival } from "../shared/lease/request-budget.js";
import type { OperationDoc } from "../shared/contract/operation-doc.js";

/** GET /api/primary — name resolving across roles: every live primary. */
export async function listPrimaries(request: HandlerRequest, { service }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  return json(200, { primaries: await service.listPrimaries(arrival) });
}

export const listPrimariesDoc: OperationDoc = {
  tag: "leases",
  summary: "Name resolving: every live primary, all roles",
  ok: { description: "Live primaries only, sorted by utype.", json: "PrimaryList" },
};

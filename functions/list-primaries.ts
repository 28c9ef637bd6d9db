import { json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";
import { parseFlag } from "../shared/http/validation.js";
import type { RequestArrival } from "../shared/service/request-budget.js";
import type { OperationDoc } from "../shared/contract/operation-doc.js";

/** GET /api/primary — name resolving across roles: every live primary. */
export async function listPrimaries(request: HandlerRequest, { service }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, Object.keys(listPrimariesDoc.query ?? {}));
  const standbys = parseFlag("standbys", request.query.get("standbys") ?? undefined);
  const vacant = parseFlag("vacant", request.query.get("vacant") ?? undefined);
  return json(200, { primaries: await service.listPrimaries(arrival, { standbys, vacant }) });
}

export const listPrimariesDoc: OperationDoc = {
  tag: "leases",
  summary: "Name resolving: every live primary, all roles",
  query: {
    standbys: { description: "true: add each role's `standbys`, those seen within T (one more read).", schema: { type: "boolean" } },
    vacant: { description: "true: add the roles that had a primary and have none now, each with `vacantSince`.", schema: { type: "boolean" } },
  },
  ok: { description: "Live primaries (and vacant roles with `?vacant=true`), sorted by utype.", json: "PrimaryList" },
};

import { json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";
import { parseFlag, parseId } from "../shared/http/validation.js";
import type { RequestArrival } from "../shared/service/request-budget.js";
import type { OperationDoc } from "../shared/contract/operation-doc.js";

/** GET /api/primary/{utype} — GetPrimary: the live primary of one role, or null. */
export async function getPrimary(request: HandlerRequest, { service }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, Object.keys(getPrimaryDoc.query ?? {}));
  const utype = parseId("utype", request.params["utype"]);
  const standbys = parseFlag("standbys", request.query.get("standbys") ?? undefined);
  return json(200, await service.getPrimary(utype, arrival, { standbys }));
}

export const getPrimaryDoc: OperationDoc = {
  tag: "leases",
  summary: "GetPrimary: the live primary of one role, or null",
  description: "One point read (two side by side with `?standbys=true`). `epoch` is the role's current epoch whether or not anyone holds it.",
  query: {
    standbys: { description: "true: add `standbys`, those seen within T (one more read).", schema: { type: "boolean" } },
  },
  ok: { description: "The role's lease.", json: "LeaseView" },
};

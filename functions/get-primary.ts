import { json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";
import { parseFlag, parseId } from "../shared/http/validation.js";
import type { RequestArrival } from "../shared/service/request-budget.js";
import type { OperationDoc } from "../shared/contract/operation-doc.js";
import type { LeaseView } from "../shared/contract/lease-view.js";

/** GET /api/primary/{utype} — GetPrimary: the live primary of one role, or null. */
export async function getPrimary(request: HandlerRequest, { service }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, Object.keys(getPrimaryDoc.query ?? {}));
  const utype = parseId("utype", request.params["utype"]);
  const standbys = parseFlag("standbys", request.query.get("standbys") ?? undefined);
  return primaryAnswer(await service.getPrimary(utype, arrival, { standbys }));
}

/** A role's view as GET /api/primary/{utype} answers it, and so as a read part of a participant heartbeat does. */
export function primaryAnswer(view: LeaseView): HttpResponseInit {
  return json(200, view);
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

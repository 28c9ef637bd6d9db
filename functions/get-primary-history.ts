import { json } from "../shared/http/answers.js";
import type { HttpRequest, HttpResponseInit } from "../shared/http/azure-functions.js";
import { rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";
import { parseHistoryLimit, parseId } from "../shared/http/validation.js";
import type { RequestArrival } from "../shared/lease/request-budget.js";

/** GET /api/primary/{utype}/history[?limit=N] — the role's last terms, newest first: two reads, no write. */
export async function getPrimaryHistory(request: HttpRequest, { service }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, ["limit"]);
  const utype = parseId("utype", request.params["utype"]);
  const limit = parseHistoryLimit(request.query.get("limit") ?? undefined);
  return json(200, await service.history(utype, limit, arrival));
}

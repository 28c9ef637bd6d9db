import { errorResponse, json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";
import { parseId, parseLease } from "../shared/http/validation.js";
import type { RequestArrival } from "../shared/lease/request-budget.js";

/**
 * DELETE /api/primary/{utype}?uuid=…[&lease=…] — with the holder's lease token, a proven
 * release (a standby may take over at once); without it, a revoke (the holder's next
 * heartbeat is refused, and nobody takes over before the lease expires on its own).
 */
export async function releasePrimary(request: HandlerRequest, { service }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, ["uuid", "lease"]);
  const utype = parseId("utype", request.params["utype"]);
  const uuid = parseId("uuid", request.query.get("uuid") ?? undefined);
  const lease = parseLease(request.query.get("lease") ?? undefined);
  const result = await service.release({ utype, uuid, lease }, arrival);
  switch (result.outcome) {
    case "released":
    case "revoked":
      return json(200, result.view);
    case "held":
      return errorResponse("LeaseHeld", `${utype} is held by another uuid; only the holder can release it.`, result.view);
    case "conflict":
      return errorResponse("Conflict", `Another write to ${utype} won the race; read the primary and decide again.`, result.view);
  }
}

import { errorResponse, json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";
import type { Granted } from "../shared/http/granted.js";
import type { RouteLog } from "../shared/http/route.js";
import { parseFlag, parseId, parseLease } from "../shared/http/validation.js";
import { invalid } from "../shared/http/http-error.js";
import type { RequestArrival } from "../shared/service/request-budget.js";
import type { OperationDoc } from "../shared/contract/operation-doc.js";
import { ID_SCHEMA } from "../shared/contract/json-schema.js";

/**
 * DELETE /api/primary/{utype}?uuid=…[&lease=…] — with the holder's lease token, a proven
 * release (a standby may take over at once); without it, a revoke (the holder's next
 * heartbeat is refused, and nobody takes over before the lease expires on its own).
 * `&standby=true`: a standby's clean stop withdraws its standby row (and a handover naming
 * it); nothing else is written (docs/protocol.md#standbys).
 */
export async function releasePrimary(request: HandlerRequest, { service }: Runtime, arrival: RequestArrival, _log: RouteLog, granted: Granted): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, Object.keys(releasePrimaryDoc.query ?? {}));
  const utype = parseId("utype", request.params["utype"]);
  const uuid = parseId("uuid", request.query.get("uuid") ?? undefined);
  const lease = parseLease(request.query.get("lease") ?? undefined);
  if (parseFlag("standby", request.query.get("standby") ?? undefined)) {
    if (lease !== undefined) throw invalid("standby=true withdraws a standby, which holds no lease: leave out lease (or standby, to release the lease).");
    const withdrawn = await service.withdrawStandby(utype, uuid, arrival);
    if (withdrawn.outcome === "withdrawn") return json(200, withdrawn.view);
    return errorResponse("Conflict", `Other writes to ${utype} kept winning the race while the handover naming ${uuid} was dropped; its standby row is gone. Ask again.`, withdrawn.view);
  }
  const result = await service.release({ utype, uuid, lease }, arrival, granted.mayRevoke);
  switch (result.outcome) {
    case "released":
    case "revoked":
      return json(200, result.view);
    case "held":
      return errorResponse("LeaseHeld", `${utype} is held by another uuid; only the holder can release it.`, result.view);
    case "conflict":
      return errorResponse("Conflict", `Another write to ${utype} won the race; read the primary and decide again.`, result.view);
    case "forbidden":
      return errorResponse(
        "Forbidden",
        `This DELETE would revoke ${utype}'s live holder (the lease token does not prove it is the caller's), and the caller's grants allow it to hold ${utype}, not to revoke it; nothing was written.`,
        { ...result.view, missing: { revoke: utype } },
      );
  }
}

export const releasePrimaryDoc: OperationDoc = {
  tag: "leases",
  summary: "Release with the holder's token, or revoke without it; or withdraw a standby",
  description:
    "A proven release clears the holder at once; a revoke lets the lease run out on its own and refuses its next heartbeat. " +
    "With `standby=true`, a standby that stops withdraws: its standby row is deleted and a handover naming it dropped; nothing else is written.",
  query: {
    uuid: { description: "The holder's uuid (with `standby=true`, the standby's).", required: true, schema: ID_SCHEMA },
    lease: { description: "The holder's last lease token: with it the release is proven, without it a revoke." },
    standby: { description: "true: withdraw the standby `uuid` (no `lease`).", schema: { type: "boolean" } },
  },
  ok: { description: "`primary: null` after a release; the holder with `revoked: true` after a revoke; the view as it stands after a withdrawal.", json: "LeaseView" },
  errors: [
    { code: "LeaseHeld", with: "LeaseView" },
    { code: "Conflict", with: "LeaseView" },
    { code: "Forbidden", with: "LeaseView" },
  ],
};

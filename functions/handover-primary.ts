import { errorResponse, json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { readBody, rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";
import { parseHandoverBody, parseId } from "../shared/http/validation.js";
import type { RequestArrival } from "../shared/service/request-budget.js";
import type { OperationDoc } from "../shared/contract/operation-doc.js";
import { handoverSeenWithinMs } from "../shared/contract/timing.js";

/**
 * POST /api/primary/{utype}/handover `{"to"?}` — an operator's planned handover
 * (docs/protocol.md#planned-handover): stored on the entry; the holder learns it at its next
 * renewal, steps down and releases with its token; a named standby then has the role to
 * itself for T. 202: the request stands (the handover has not happened yet). A named
 * standby must have been seen within T/2 + 2·I; a 409 names when one seen before was.
 */
export async function handoverPrimary(request: HandlerRequest, { service }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  const utype = parseId("utype", request.params["utype"]);
  const { to } = parseHandoverBody(await readBody(request));
  const result = await service.handover(utype, to, arrival);
  switch (result.outcome) {
    case "requested":
      return json(202, result.view);
    case "no-primary":
      return errorResponse("NoPrimary", `${utype} has no live primary (or only a revoked one) to hand over; nothing was changed.`, result.view);
    case "no-such-standby": {
      const known = result.standbys.map((standby) => (standby.address === null ? standby.uuid : `${standby.uuid} (${standby.address})`));
      const { lastSeen } = result;
      const withinMs = handoverSeenWithinMs(service.timing);
      const why =
        lastSeen === undefined
          ? `names no standby of ${utype} seen within the last ${withinMs} ms (T/2 + 2·I, at most T)`
          : `names ${lastSeen.uuid}${lastSeen.address === null ? "" : ` (${lastSeen.address})`}, a standby of ${utype} last seen at ${lastSeen.seenAt}: ` +
            `a live standby announces itself every T/2 (${service.timing.timeoutMs / 2} ms), so one not seen within ${withinMs} ms (T/2 + 2·I, at most T) ` +
            "has stopped or lost contact, and a handover to it would leave the role without a primary for T";
      return errorResponse(
        "NoSuchStandby",
        `to: ${JSON.stringify(to)} ${why}; ` +
          (known.length === 0 ? "none is known (a standby announces itself while it polls)" : `known: ${known.join(", ")}`) +
          ". Name one of them, or leave out to for any.",
        { ...result.view, standbys: result.standbys, ...(lastSeen === undefined ? {} : { lastSeen }) },
      );
    }
    case "conflict":
      return errorResponse("Conflict", `Other writes to ${utype} kept winning the race; ask again.`, result.view);
  }
}

export const handoverPrimaryDoc: OperationDoc = {
  tag: "leases",
  summary: "Planned handover: ask the primary to step down, to a named standby or to any",
  description:
    "Stored on the entry: the holder learns it at its next renewal, stops its work and releases with its token. " +
    "With `to`, only that standby may take over for T after the release. A holder that does not step down has its renewals refused after T.",
  body: "HandoverBody",
  bodyRequired: false,
  ok: { description: "The request stands: the view with `handover` pending.", json: "LeaseView", status: 202 },
  errors: [
    { code: "NoPrimary", with: "LeaseView" },
    { code: "NoSuchStandby", with: "LeaseView" },
    { code: "Conflict", with: "LeaseView" },
  ],
};

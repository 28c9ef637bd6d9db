import { errorResponse, json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { readBody, rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";
import { parseHeartbeatBody, parseId } from "../shared/http/validation.js";
import type { RequestArrival } from "../shared/service/request-budget.js";
import type { OperationDoc } from "../shared/contract/operation-doc.js";
import type { HeartbeatResult } from "../shared/contract/outcomes.js";

/** PUT /api/primary/{utype} — UpdateHeartBeat: acquire, renew or take over the lease. */
export async function updateHeartBeat(request: HandlerRequest, { service }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  const utype = parseId("utype", request.params["utype"]);
  const body = parseHeartbeatBody(await readBody(request));
  return heartbeatAnswer(utype, await service.heartbeat({ utype, ...body }, arrival));
}

/** A heartbeat's outcome as PUT /api/primary/{utype} answers it, and so as a role part of a participant heartbeat does. */
export function heartbeatAnswer(utype: string, result: HeartbeatResult): HttpResponseInit {
  switch (result.outcome) {
    case "accepted":
      return json(200, { ...result.view, lease: result.lease });
    case "held":
      return errorResponse("LeaseHeld", `Another live primary holds ${utype}; retry after its lease expires.`, result.view);
    case "revoked":
      return errorResponse(
        "LeaseRevoked",
        `This uuid's term on ${utype} ended (its lease was released, revoked or taken over): stop acting as primary; a new term needs a new uuid.`,
        result.view,
      );
    case "conflict":
      return errorResponse("Conflict", `Another write to ${utype} won the race; read the primary and decide again.`, result.view);
  }
}

export const updateHeartBeatDoc: OperationDoc = {
  tag: "leases",
  summary: "UpdateHeartBeat: acquire, renew or take over the lease",
  description: "Send it every I while primary. With the `lease` token of the last answer a renewal is one store write.",
  body: "HeartbeatBody",
  ok: {
    description: "The caller holds the lease.",
    json: "LeaseView",
    adds: { lease: { type: "string", description: "The token for the next heartbeat's one-write renewal." } },
  },
  errors: [
    { code: "LeaseHeld", with: "LeaseView" },
    { code: "LeaseRevoked", with: "LeaseView" },
    { code: "Conflict", with: "LeaseView" },
  ],
};

import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import { HttpError } from "../shared/http/http-error.js";
import { errorResponse, json, type RouteDefinition } from "../shared/http/route.js";
import { MAX_BODY_BYTES } from "../shared/contract/input-rules.js";
import { parseHeartbeatBody, parseId, parseLease } from "../shared/http/validation.js";
import type { RequestArrival } from "../shared/lease/request-budget.js";
import type { Runtime } from "../shared/http/runtime.js";

/** GET /api/primary/{utype} — GetPrimary: the live primary of one role, or null. */
export async function getPrimary(request: HttpRequest, { service }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  const utype = parseId("utype", request.params["utype"]);
  return json(200, await service.getPrimary(utype, arrival));
}

/** PUT /api/primary/{utype} — UpdateHeartBeat: acquire, renew or take over the lease. */
export async function updateHeartBeat(request: HttpRequest, { service }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  const utype = parseId("utype", request.params["utype"]);
  const body = parseHeartbeatBody(await readBody(request));
  const result = await service.heartbeat({ utype, ...body }, arrival);
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

/**
 * DELETE /api/primary/{utype}?uuid=…[&lease=…] — with the holder's lease token, a proven
 * release (a standby may take over at once); without it, a revoke (the holder's next
 * heartbeat is refused, and nobody takes over before the lease expires on its own).
 */
export async function releasePrimary(request: HttpRequest, { service }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
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

/** GET /api/primary — name resolving across roles: every live primary. */
export async function listPrimaries(request: HttpRequest, { service }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  return json(200, { primaries: await service.listPrimaries(arrival) });
}

async function readBody(request: HttpRequest): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) {
    throw new HttpError("PayloadTooLarge", `The request body is ${declared} bytes; the limit is ${MAX_BODY_BYTES}.`);
  }
  return new Uint8Array(await request.arrayBuffer());
}

/** `code` is the Functions key parameter, so it is always allowed. */
function rejectUnknownQuery(request: HttpRequest, allowed: string[]): void {
  for (const key of request.query.keys()) {
    if (key !== "code" && !allowed.includes(key)) {
      throw new HttpError("InvalidRequest", `Unknown query parameter "${key}".`);
    }
  }
}

export const primaryRoutes: RouteDefinition[] = [
  { name: "listPrimaries", route: "primary", handlers: { GET: listPrimaries } },
  {
    name: "primary",
    route: "primary/{utype}",
    handlers: { GET: getPrimary, PUT: updateHeartBeat, DELETE: releasePrimary },
  },
];

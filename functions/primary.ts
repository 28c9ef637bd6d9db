import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import { HttpError } from "../shared/http/http-error.js";
import { errorResponse, json, type RouteDefinition } from "../shared/http/route.js";
import { parseHeartbeatBody, parseId, MAX_BODY_BYTES } from "../shared/http/validation.js";
import type { Runtime } from "../shared/runtime.js";

/** GET /api/primary/{utype} — GetPrimary: the live primary of one role, or null. */
export async function getPrimary(request: HttpRequest, { service }: Runtime): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  const utype = parseId("utype", request.params["utype"]);
  return json(200, await service.getPrimary(utype));
}

/** PUT /api/primary/{utype} — UpdateHeartBeat: acquire, renew or take over the lease. */
export async function updateHeartBeat(request: HttpRequest, { service }: Runtime): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  const utype = parseId("utype", request.params["utype"]);
  const body = parseHeartbeatBody(await readBody(request));
  const result = await service.heartbeat({ utype, ...body });
  switch (result.outcome) {
    case "accepted":
      return json(200, { ...result.view, lease: result.lease });
    case "held":
      return errorResponse(409, "LeaseHeld", `Another live primary holds ${utype}; retry after its lease expires.`, result.view);
    case "conflict":
      return errorResponse(409, "Conflict", `Another write to ${utype} won the race; read the primary and decide again.`, result.view);
  }
}

/** DELETE /api/primary/{utype}?uuid=… — release the lease so a standby can take it at once. */
export async function releasePrimary(request: HttpRequest, { service }: Runtime): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, ["uuid"]);
  const utype = parseId("utype", request.params["utype"]);
  const uuid = parseId("uuid", request.query.get("uuid") ?? undefined);
  const result = await service.release(utype, uuid);
  switch (result.outcome) {
    case "released":
      return json(200, result.view);
    case "held":
      return errorResponse(409, "LeaseHeld", `${utype} is held by another uuid; only the holder can release it.`, result.view);
    case "conflict":
      return errorResponse(409, "Conflict", `Another write to ${utype} won the race; read the primary and decide again.`, result.view);
  }
}

/** GET /api/primary — name resolving across roles: every live primary. */
export async function listPrimaries(request: HttpRequest, { service }: Runtime): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  return json(200, { primaries: await service.listPrimaries() });
}

async function readBody(request: HttpRequest): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) {
    throw new HttpError(413, "PayloadTooLarge", `The request body is ${declared} bytes; the limit is ${MAX_BODY_BYTES}.`);
  }
  return new Uint8Array(await request.arrayBuffer());
}

/** `code` is the Functions key parameter, so it is always allowed. */
function rejectUnknownQuery(request: HttpRequest, allowed: string[]): void {
  for (const key of request.query.keys()) {
    if (key !== "code" && !allowed.includes(key)) {
      throw new HttpError(400, "InvalidRequest", `Unknown query parameter "${key}".`);
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

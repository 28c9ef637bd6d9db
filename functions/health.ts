import { errorResponse, json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { RouteLog } from "../shared/http/route.js";
import type { Runtime } from "../shared/http/runtime.js";
import type { RequestArrival } from "../shared/service/request-budget.js";
import { StoreUnavailableError } from "../shared/service/store-unavailable-error.js";
import type { OperationDoc } from "../shared/contract/operation-doc.js";

/**
 * GET /api/health — 200 when the lease store answers, 503 when it does not. The caller
 * learns only that the store is unavailable; the cause (the store's error) is logged.
 * Telemetry that could not start at the app's start does not make it 503 (the service
 * serves without it): `telemetry` then names the failure and what to change, in both answers.
 */
export async function health(request: HandlerRequest, { service, telemetryFailure }: Runtime, arrival: RequestArrival, log: RouteLog): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  const telemetry = telemetryFailure === undefined ? {} : { telemetry: telemetryFailure };
  try {
    await service.health(arrival);
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    log.warn(error.message);
    return errorResponse("StoreUnavailable", "The lease store is unreachable.", { status: "unavailable", store: service.storeKind, ...telemetry });
  }
  return json(200, { status: "ok", store: service.storeKind, ...telemetry });
}

export const healthDoc: OperationDoc = {
  tag: "operations",
  summary: "200 when the store answers, 503 when it does not",
  description: "`telemetry` is there only when the app's telemetry could not start: the service serves as usual without it, and it names the failure and what to change.",
  ok: { description: "The store answers.", json: "HealthView" },
  errors: [{ code: "StoreUnavailable", with: "HealthView" }],
};

import type { HttpMethod, HttpRequest, HttpResponseInit, InvocationContext } from "@azure/functions";
import type { RequestArrival } from "../lease/request-budget.js";
import type { Runtime } from "./runtime.js";
import { StoreUnavailableError } from "../lease/store-unavailable-error.js";
import { ERROR_STATUS, type ErrorCode } from "../contract/error-codes.js";
import { HttpError } from "./http-error.js";
import { processStallMonitor } from "./stall-monitor.js";

/** `arrival` is when the request arrived: its store calls must fit in the budget from there. */
export type RouteHandler = (request: HttpRequest, runtime: Runtime, arrival: RequestArrival) => Promise<HttpResponseInit>;

/**
 * One route of the REST contract, declared once. The Functions registration
 * (functions/index.ts) and the local host (shared/host) both serve it through
 * `handleRoute`, so they answer alike, down to 405 for a method the route lacks.
 */
export interface RouteDefinition {
  /** The function's name in Azure. */
  readonly name: string;
  /** The route below /api, in Functions syntax: "primary/{utype}". */
  readonly route: string;
  readonly handlers: Partial<Record<HttpMethod, RouteHandler>>;
}

/** Registered for every route so that a wrong method gets 405, not the host's 404. */
export const ROUTE_METHODS: HttpMethod[] = ["GET", "PUT", "DELETE", "POST", "PATCH"];

export async function handleRoute(
  route: RouteDefinition,
  request: HttpRequest,
  context: InvocationContext,
  runtime: () => Promise<Runtime>,
): Promise<HttpResponseInit> {
  // Taken first, before waiting for anything: the request's time budget runs from here,
  // or from the start of a stall of this process that it sat through (SPEC §2).
  const reachedAt = performance.now();
  const arrivedAt = processStallMonitor.start().arrivalOf(reachedAt);
  if (arrivedAt < reachedAt) {
    context.warn(`${route.name}: this process did not run for ${Math.round(reachedAt - arrivedAt)} ms; the request's time budget counts from before that.`);
  }
  const handler = route.handlers[request.method as HttpMethod];
  if (handler === undefined) {
    const allowed = Object.keys(route.handlers).join(", ");
    return {
      ...errorResponse("MethodNotAllowed", `${request.method} is not allowed on /api/${route.route}; use ${allowed}.`),
      headers: { allow: allowed },
    };
  }
  try {
    return await handler(request, await runtime(), { arrivedAt });
  } catch (error) {
    if (error instanceof HttpError) return errorResponse(error.code, error.message);
    if (error instanceof StoreUnavailableError) {
      context.warn(`${route.name}: ${error.message}`);
      return errorResponse("StoreUnavailable", "The lease store is unavailable; retry shortly.");
    }
    context.error(`${route.name}: unexpected error`, error);
    throw error;
  }
}

export function json(status: number, body: unknown): HttpResponseInit {
  return { status, jsonBody: body, headers: { "cache-control": "no-store" } };
}

/** The contract's error answer: the code's status, `{"error": {code, message}}` and `extra`. */
export function errorResponse(code: ErrorCode, message: string, extra: object = {}): HttpResponseInit {
  return json(ERROR_STATUS[code], { error: { code, message }, ...extra });
}

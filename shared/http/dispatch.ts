import type { HttpResponseInit } from "./azure-functions.js";
import type { HandlerContext, HandlerRequest } from "./handler-request.js";
import { errorResponse } from "./answers.js";
import { announcesBody, codingRefusal } from "./content-coding.js";
import { crossOriginRefusal } from "./cross-origin.js";
import { failureAnswer } from "./failure-answer.js";
import { isCaller, PLATFORM_KEYS, type Access, type Caller } from "./access.js";
import { allowedMethods, bodyLimitOf, operationFor, type Route, type RouteLog } from "./route.js";
import type { Runtime } from "./runtime.js";
import { processStallMonitor } from "../service/stall-monitor.js";

/**
 * Answers one request to `route`, the same way under both hosts: the Functions
 * registration (one function per operation, and one 405 function per route) and the local
 * host both call it, so the arrival, the checks and the error mapping cannot differ.
 */
export async function handleRoute(
  route: Route,
  request: HandlerRequest,
  context: HandlerContext,
  runtime: () => Promise<Runtime>,
  access: Access = PLATFORM_KEYS,
  authenticated?: Caller,
): Promise<HttpResponseInit> {
  // Taken first, before waiting for anything: the request's time budget runs from here,
  // or from the start of a stall of this process that it sat through (docs/protocol.md#the-request-budget-and-stalls-of-the-service).
  const reachedAt = performance.now();
  const arrivedAt = processStallMonitor.start().arrivalOf(reachedAt);
  const operation = operationFor(route, request.method);
  const name = operation?.name ?? route.methodNotAllowedName;
  if (arrivedAt < reachedAt) {
    context.warn(`${name}: this process did not run for ${Math.round(reachedAt - arrivedAt)} ms; the request's time budget counts from before that.`);
  }
  // Who calls, before anything else is told (the local host has asked already: `authenticated`).
  const caller = authenticated ?? (await access.authenticate(request));
  if (!isCaller(caller)) return caller;
  if (operation === undefined) return methodNotAllowed(route, request.method);
  const header = (name: string): string | undefined => request.headers.get(name) ?? undefined;
  // A body without Content-Length (a stream handed over by the Functions host) is still a body.
  const hasBody = announcesBody(header) || (header("content-length") === undefined && request.body !== null);
  const refused = codingRefusal(header, hasBody, bodyLimitOf(operation));
  if (refused !== undefined) return errorResponse(refused.code, refused.message);
  // A write a browser sent from a page of another origin (a form post to 127.0.0.1 from any
  // site the operator has open) goes no further: here, so that both hosts refuse it alike.
  const crossOrigin = crossOriginRefusal(request.method, header);
  if (crossOrigin !== undefined) return crossOrigin;
  // Before the runtime and any store call: a write outside the caller's grants writes nothing.
  const granted = access.authorize(operation, request, caller);
  if (!("mayRevoke" in granted)) return granted;
  const log: RouteLog = { warn: (message) => context.warn(`${name}: ${message}`), error: (message, error) => context.error(`${name}: ${message}`, error) };
  try {
    return await operation.handler(request, await runtime(), { arrivedAt }, log, granted);
  } catch (error) {
    const answer = failureAnswer(error, log);
    if (answer !== undefined) return answer;
    log.error("unexpected error", error);
    throw error;
  }
}

/** 405 with the Allow header, for a method `route` does not serve. */
export function methodNotAllowed(route: Route, method: string): HttpResponseInit {
  const allow = allowedMethods(route).join(", ");
  const response = errorResponse("MethodNotAllowed", `${method} is not allowed on /api/${route.route}; use ${allow}.`);
  return { ...response, headers: { ...(response.headers as Record<string, string>), allow } };
}

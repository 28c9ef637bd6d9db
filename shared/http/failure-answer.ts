import { ConfigError } from "../config/config-error.js";
import { OverloadedError } from "../service/overloaded-error.js";
import { StoreUnavailableError } from "../service/store-unavailable-error.js";
import { errorResponse } from "./answers.js";
import type { HttpResponseInit } from "./azure-functions.js";
import { HttpError } from "./http-error.js";
import type { RouteLog } from "./route.js";

/**
 * The answer to what a handler threw, the one mapping of both a whole request (handleRoute)
 * and each part of a participant heartbeat (docs/api.md#participant-heartbeat), so that a
 * part answers exactly what its own route would: a refused request its code, a shed one
 * 503 Overloaded with Retry-After, a bad setting 503 Misconfigured, an unreachable store
 * 503 StoreUnavailable (its cause logged for operators, never shown). Undefined for
 * anything else: a bug, which the caller logs and answers as it must (internalErrorAnswer).
 */
export function failureAnswer(error: unknown, log: RouteLog): HttpResponseInit | undefined {
  if (error instanceof HttpError) return errorResponse(error.code, error.message);
  if (error instanceof OverloadedError) return overloaded(error);
  // A bad setting, logged once at start (azure-app.ts): every request says which and what to change.
  if (error instanceof ConfigError) return errorResponse("Misconfigured", `This app cannot serve until a setting is fixed: ${error.message}`);
  if (error instanceof StoreUnavailableError) {
    log.warn(error.message);
    return errorResponse("StoreUnavailable", "The lease store is unavailable; retry shortly.");
  }
  return undefined;
}

/** A bug's answer: 500 InternalError without any detail (the stack goes to the log only). */
export function internalErrorAnswer(): HttpResponseInit {
  return errorResponse("InternalError", "The server failed; see its log.");
}

/** 503 Overloaded, shed before the store: nothing was done; Retry-After says when to come back. Not logged: it is the design working. */
function overloaded(error: OverloadedError): HttpResponseInit {
  const response = errorResponse("Overloaded", error.message);
  return { ...response, headers: { ...(response.headers as Record<string, string>), "retry-after": String(error.retryAfterSeconds) } };
}

import { ERROR_STATUS, type ErrorCode } from "../contract/error-codes.js";
import type { HttpResponseInit } from "./azure-functions.js";

/** A JSON answer; never cached, since every answer is the lease's state at one instant. */
export function json(status: number, body: unknown): HttpResponseInit {
  return { status, jsonBody: body, headers: { "cache-control": "no-store" } };
}

/** The contract's error answer: the code's status, `{"error": {code, message}}` and `extra`. */
export function errorResponse(code: ErrorCode, message: string, extra: object = {}): HttpResponseInit {
  return json(ERROR_STATUS[code], { error: { code, message }, ...extra });
}

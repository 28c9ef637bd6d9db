/** The error codes of the REST contract (SPEC §4). */
export type ErrorCode =
  | "InvalidRequest"
  | "Unauthorized"
  | "NotFound"
  | "MethodNotAllowed"
  | "LeaseHeld"
  | "LeaseRevoked"
  | "Conflict"
  | "PayloadTooLarge"
  | "StoreUnavailable";

/** A request the handlers refuse, with the status and message the caller sees. */
export class HttpError extends Error {
  override readonly name = "HttpError";

  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function invalid(message: string): HttpError {
  return new HttpError(400, "InvalidRequest", message);
}

import { ERROR_STATUS, type ErrorCode } from "../contract/error-codes.js";

/** A request the handlers refuse, with the code (and so the status) and message the caller sees. */
export class HttpError extends Error {
  override readonly name = "HttpError";
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

export function invalid(message: string): HttpError {
  return new HttpError("InvalidRequest", message);
}

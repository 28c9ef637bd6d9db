/**
 * The service refused a request before it reached the store, because too many were
 * already waiting for it (AdmissionGate). Nothing was read or written. Both hosts answer it
 * with 503 Overloaded and `Retry-After: retryAfterSeconds`.
 */
export class OverloadedError extends Error {
  override readonly name = "OverloadedError";

  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

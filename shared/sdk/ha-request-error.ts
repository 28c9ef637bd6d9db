/**
 * A call that did not get a usable answer: the service refused it (400, 401, 503 …), or it
 * could not be reached, or it did not answer in time. `code` is the REST contract's error
 * code when the service sent one, otherwise "Timeout", "NetworkError" or "UnexpectedResponse".
 */
export class HaRequestError extends Error {
  override readonly name = "HaRequestError";

  constructor(
    message: string,
    readonly code: string,
    /** The HTTP status, or undefined when no response arrived. */
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A call that did not get a usable answer: the service refused it (400, 401, 503 …), or it
 * could not be reached, or it did not answer in time. `code` is the REST contract's error
 * code when the service sent one, otherwise "Timeout", "NetworkError" or "UnexpectedResponse".
 * Two refusals have classes of their own: UnauthorizedError (401) and EndpointNotFoundError (404).
 */
export class HaRequestError extends Error {
  /** "HaRequestError", or the name of the subclass. */
  override readonly name: string = "HaRequestError";
  /**
   * Whether the same request may succeed if it is simply sent again: true for timeouts,
   * unreachable services and 5xx answers (and 408, 429); false for the other 4xx answers,
   * which need something changed first (the key, the endpoint, the request).
   */
  readonly retryable: boolean;
  /**
   * How long the service asked us to wait before sending again (its `Retry-After`, e.g. with
   * `503 Overloaded`), in milliseconds; undefined when it did not say.
   */
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    /** The REST contract's error code (`StoreUnavailable`, `LeaseHeld` …), or "Timeout", "NetworkError" or "UnexpectedResponse". */
    readonly code: string,
    /** The HTTP status, or undefined when no response arrived. */
    readonly status: number | undefined,
    options?: { cause?: unknown; retryAfterMs?: number | undefined },
  ) {
    super(message, options);
    this.retryable = status === undefined || status >= 500 || status === 408 || status === 429 || status < 400;
    this.retryAfterMs = options?.retryAfterMs;
  }
}

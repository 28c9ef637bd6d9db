/**
 * The store could not be reached or did not answer in time. Callers map it to
 * 503 StoreUnavailable; the cause is kept for logs and never shown to a client.
 */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

import type { WriteOutcome } from "../service/store-call.js";
import { StoreUnavailableError } from "../service/store-unavailable-error.js";

/**
 * What both adapters do with a failure that is not a typed outcome: one message shape,
 * `Could not <what> in <store> (<detail>).`, with the cause kept for the log only.
 */
export function unavailable(store: string, what: string, detail: string, cause: unknown): StoreUnavailableError {
  return new StoreUnavailableError(`Could not ${what} in ${store} (${detail}).`, { cause });
}

/** The detail of an error that carries no HTTP status: a timeout, or the error's message. */
export function describeFailure(error: unknown): string {
  if (error instanceof Error) return error.name === "AbortError" || error.name === "TimeoutError" ? "timed out" : error.message;
  return String(error);
}

/** A successful write's outcome; a write answered without an ETag cannot be trusted. */
export function written(store: string, etag: string | undefined): WriteOutcome {
  if (etag === undefined) throw new StoreUnavailableError(`${store} answered a write without an ETag.`);
  return { ok: true, etag };
}

/** Options every store call takes, for the lease and the member store alike. The signal bounds the call's time budget. */
export interface StoreCallOptions {
  readonly abortSignal?: AbortSignal;
}

/**
 * The outcome of a conditional write. Losing the race (the row exists on create, or its
 * ETag moved on update) is a normal outcome, not an exception: the caller decides.
 */
export type WriteOutcome =
  | { readonly ok: true; readonly etag: string }
  | { readonly ok: false; readonly reason: "exists" | "changed" | "missing" };

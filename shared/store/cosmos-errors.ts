import { ErrorResponse, OperationType, type OperationResponse, type PluginConfig, type Response } from "@azure/cosmos";
import type { WriteOutcome } from "../service/store-call.js";
import { StoreUnavailableError } from "../service/store-unavailable-error.js";
import { describeFailure, written } from "./store-failure.js";

/** Cosmos answers 404 with this substatus when the database or container is missing. */
export const OWNER_RESOURCE_NOT_FOUND = 1003;

/** Used when a 429 carries no retry-after hint (Cosmos always sends one). */
const FALLBACK_RETRY_AFTER_MS = 100;

/**
 * The HTTP status of a Cosmos SDK error. Its ErrorResponse carries the status as a numeric
 * `code` (a network failure has a string code such as "ECONNREFUSED": no status).
 */
export function statusOf(error: unknown): number | undefined {
  return error instanceof ErrorResponse && typeof error.code === "number" ? error.code : undefined;
}

export function substatusOf(error: unknown): number | undefined {
  return error instanceof ErrorResponse && typeof error.substatus === "number" ? error.substatus : undefined;
}

/** The wait a 429 asks for: the parsed hint, the raw header, or a short fallback; undefined for any other error. */
export function throttleWaitOf(error: unknown): number | undefined {
  if (!(error instanceof ErrorResponse) || error.code !== 429) return undefined;
  const parsed = error.retryAfterInMs;
  if (typeof parsed === "number" && Number.isFinite(parsed) && parsed >= 0) return parsed;
  const raw: unknown = error.headers?.["x-ms-retry-after-ms"];
  const header = Number(raw);
  return raw !== undefined && Number.isFinite(header) && header >= 0 ? header : FALLBACK_RETRY_AFTER_MS;
}

/** The typed outcomes of an If-Match write (412/409 changed, 404 missing); anything else is rethrown. */
export function lostRace(error: unknown): WriteOutcome {
  const status = statusOf(error);
  if (status === 412 || status === 409) return { ok: false, reason: "changed" };
  if (status === 404 && substatusOf(error) !== OWNER_RESOURCE_NOT_FOUND) return { ok: false, reason: "missing" };
  throw error;
}

/**
 * Runs one conditional write and answers its outcome: the new ETag; for a `create`, 409 as
 * `exists`; for an If-Match write, the lost race (lostRace). Anything else is rethrown, for
 * the CosmosCaller to wait out (429) or report as unavailable.
 */
export async function conditionalCosmosWrite(
  store: string,
  kind: "create" | "update",
  write: () => Promise<{ readonly etag?: string | undefined }>,
): Promise<WriteOutcome> {
  let etag: string | undefined;
  try {
    ({ etag } = await write());
  } catch (error) {
    if (kind === "update") return lostRace(error);
    if (statusOf(error) === 409) return { ok: false, reason: "exists" };
    throw error;
  }
  return written(store, etag);
}

/** The status Cosmos DB gives the operations of a failed batch that did not fail themselves. */
const FAILED_DEPENDENCY = 424;

/**
 * A transactional batch's answer as one write's: the ETag of the entry's operation
 * (`entryIndex`, the first by default) when every operation succeeded; otherwise the
 * failing status thrown as the ErrorResponse a single write would have thrown (so that 412
 * is a lost race, 409 on a create `exists`, 429 is waited out, and anything else is
 * unavailable). Cosmos DB answers a batch whose operation failed with a status per
 * operation: the failing one's own, 424 (failed dependency) for the others; the HTTP status
 * of the whole batch says no more than that. A batch refused as a whole (429 throttled, a
 * 5xx: no operation ran) has no per-operation statuses: its own status, substatus and
 * headers are thrown, retry-after included (see BATCH_FAILURES_AS_RESPONSES).
 */
export function batchOutcome(response: Response<OperationResponse[]>, entryIndex = 0): { etag: string | undefined } {
  const results = Array.isArray(response.result) ? response.result : [];
  const refusedWhole = response.code !== undefined && response.code >= 400;
  if (!refusedWhole && results.length > 0 && results.every((result) => result.statusCode < 300)) return { etag: results[entryIndex]?.eTag };
  const failed = results.find((result) => result.statusCode >= 300 && result.statusCode !== FAILED_DEPENDENCY);
  const status = failed?.statusCode ?? response.code ?? FAILED_DEPENDENCY;
  const error = Object.assign(new ErrorResponse(`The transactional batch failed with HTTP ${status}.`), { code: status, headers: response.headers });
  if (failed === undefined && response.substatus !== undefined) error.substatus = response.substatus;
  throw error;
}

/**
 * A plugin for every client the Cosmos stores run on. The SDK (4.9, the last for Node 20)
 * rethrows an HTTP error of a transactional batch as a plain Error ("Batch request error:
 * …") with neither status nor headers, so a throttled batch (a takeover's, a release's)
 * could not be told from a broken connection: it was a 503, its retry-after ignored. This
 * plugin answers such an error, for batches only, as the batch's response carrying the
 * status, substatus and headers (no per-operation results: none ran), which the SDK passes
 * through untouched; batchOutcome then throws it as the ErrorResponse a single call would
 * have thrown, and CosmosCaller waits out a 429 as it does a single call's. Anything
 * without an HTTP status (a timeout, an abort, a refused connection) is rethrown as it is.
 * The SDK's plugin hook is not in its typed options; create-cosmos-store.ts passes it anyway.
 */
export const BATCH_FAILURES_AS_RESPONSES: PluginConfig = {
  on: "operation",
  plugin: async (context, _diagnostics, next) => {
    try {
      return await next(context);
    } catch (error) {
      const status = statusOf(error);
      if (context.operationType !== OperationType.Batch || status === undefined) throw error;
      const failure = error as ErrorResponse;
      return { headers: failure.headers ?? {}, code: status, ...(failure.substatus === undefined ? {} : { substatus: failure.substatus }) };
    }
  },
};

/** A missing database or container is a misconfiguration, never "no lease yet". */
export function throwIfOwnerMissing(substatus: number | undefined): void {
  if (substatus === OWNER_RESOURCE_NOT_FOUND) {
    throw new StoreUnavailableError(
      "Cosmos DB has no such database or container (HTTP 404/1003): check HA_COSMOS_DATABASE and HA_COSMOS_CONTAINER, or set HA_STORE_CREATE=true.",
    );
  }
}

/** For the StoreUnavailableError message: `HTTP 503/1002`, or what failed without a status. */
export function describeCosmosError(error: unknown): string {
  const status = statusOf(error);
  if (status === undefined) return describeFailure(error);
  const substatus = substatusOf(error);
  return `HTTP ${status}${substatus ? `/${substatus}` : ""}`;
}

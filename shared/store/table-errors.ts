import { RestError } from "@azure/data-tables";
import { describeFailure } from "./store-failure.js";

/** The HTTP status of a Table SDK error, or undefined for anything that is not a RestError. */
export function statusOf(error: unknown): number | undefined {
  return error instanceof RestError ? error.statusCode : undefined;
}

/** The service's error code (`TableNotFound`, `UpdateConditionNotSatisfied`, …), when it sent one. */
export function errorCodeOf(error: unknown): string | undefined {
  if (!(error instanceof RestError)) return undefined;
  const details = error.details as { errorCode?: unknown; odataError?: { code?: unknown } } | undefined;
  const code = details?.errorCode ?? details?.odataError?.code ?? error.code;
  return typeof code === "string" ? code : undefined;
}

/** 404 for the entity itself, as opposed to a missing table (a misconfiguration). */
export function isEntityNotFound(error: unknown): boolean {
  return statusOf(error) === 404 && errorCodeOf(error) !== "TableNotFound";
}

/** For the StoreUnavailableError message: `HTTP 503 ServerBusy`, or what failed without a status. */
export function describeTableError(error: unknown): string {
  const status = statusOf(error);
  if (status === undefined) return describeFailure(error);
  const code = errorCodeOf(error);
  return `HTTP ${status}${code ? ` ${code}` : ""}`;
}

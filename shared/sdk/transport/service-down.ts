import { HaRequestError } from "./ha-request-error.js";

/**
 * Whether a failed call shows that the service itself is down, rather than that this
 * client cannot reach it: a 503 (the store is unavailable, or the platform answers for
 * functions that do not run), or a refused connection (the host answered: nothing listens
 * on the port). A timeout or an unreachable network proves neither.
 */
export function isServiceDown(error: unknown): boolean {
  if (!(error instanceof HaRequestError)) return false;
  if (error.status === 503) return true;
  return error.code === "NetworkError" && causeCodes(error).includes("ECONNREFUSED");
}

function causeCodes(error: unknown): string[] {
  const codes: string[] = [];
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth += 1) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string") codes.push(code);
  }
  return codes;
}

/**
 * Whether a failed call still got an answer from the service (an HTTP status), as
 * opposed to one lost on the way: a timeout or an unreachable network says nothing about
 * whether the service is up.
 */
export function isServiceAnswer(error: unknown): boolean {
  return error instanceof HaRequestError && error.status !== undefined;
}

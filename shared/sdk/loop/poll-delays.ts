import type { LeaseTiming } from "../../contract/timing.js";

/**
 * How far apart a standby's polls are. Standbys started together (a deploy, a restart of
 * every host) would otherwise poll in the same millisecond forever; a random stretch of
 * each wait lets them drift apart. Only standby polls wait this way: renewals keep their
 * I, and a takeover is sent at the holder's expiry, never later (failover time).
 */

/** Each standby poll waits I·(1 + POLL_JITTER·U), U uniform in [0, 1): I to 1.2·I, 1.1·I on average. */
export const POLL_JITTER = 0.2;

/** The factor a standby's wait is stretched by: 1 + POLL_JITTER·U, with U drawn from `random` (clamped to [0, 1]). */
export function pollStretch(random: () => number): number {
  return 1 + POLL_JITTER * uniform(random);
}

/** One draw of `random`, clamped to [0, 1] (0 for a non-number): a bad `random` cannot make a wait negative. */
function uniform(random: () => number): number {
  const draw = random();
  return Number.isFinite(draw) ? Math.min(Math.max(draw, 0), 1) : 0;
}

/**
 * After `refusals` calls in a row that no retry can fix (an error whose `retryable` is
 * false: a wrong key, a wrong endpoint), a standby waits 2·I, 4·I, … up to T before it asks
 * again, instead of asking every I for ever. Until the service has answered once, the
 * retry delay stands in for I and five times it for T.
 */
export function backoffMs(refusals: number, timing: LeaseTiming | undefined, retryDelayMs: number): number {
  const intervalMs = timing?.intervalMs ?? retryDelayMs;
  const capMs = timing?.timeoutMs ?? 5 * retryDelayMs;
  return Math.min(capMs, intervalMs * 2 ** Math.min(refusals, 30));
}

/** An error that says sending the same request again cannot help. */
export function isRefusal(error: unknown): boolean {
  return typeof error === "object" && error !== null && "retryable" in error && error.retryable === false;
}

/**
 * An error that says the service could not be reached or could not serve: no answer (a
 * refused or dropped connection, a timeout) or a 5xx. Such a failure may have been
 * everyone's: it is what holds a standby back after the service returns
 * (contact-hold-back.ts), and what a primary with `rideThroughMs` rides through. Not an
 * outage: a refusal (a 4xx answer), a corrupted answer, an error of a transport that says
 * neither, and `503 Overloaded` — a live service shedding load, which admits renewals
 * first (docs/protocol.md#overload-shedding-before-the-store-falls-behind), so its holders
 * keep renewing and a standby it refused has no holder to wait for.
 */
export function isOutage(error: unknown): boolean {
  if (typeof error !== "object" || error === null || !("retryable" in error) || error.retryable !== true) return false;
  if ("code" in error && error.code === "Overloaded") return false;
  const status = "status" in error ? error.status : undefined;
  return status === undefined || (typeof status === "number" && (status >= 500 || status === 408));
}

/** The most a failed call's backoff stretches a standby's poll interval. */
export const FAILURE_BACKOFF_MAX_INTERVALS = 4;

/**
 * After `failures` calls in a row that got no answer (timeouts, 503s, an unreachable
 * service), a standby waits about 2·I, then 4·I (never more than T) before it asks again:
 * a service past its capacity is not asked harder by the very callers it could not answer.
 * The cap is 4·I rather than T because the same backoff follows a service that was down
 * and came back: a standby must find the leaderless role within a few I of the service's
 * return, not a whole T later (test/e2e/service-stall.test.ts). The wait is jittered over
 * its upper half (between half and all of it, never below I), so standbys that failed
 * together do not come back together. `random` draws U uniform in [0, 1).
 */
export function failureBackoffMs(failures: number, timing: LeaseTiming | undefined, retryDelayMs: number, random: () => number): number {
  const intervalMs = timing?.intervalMs ?? retryDelayMs;
  const capMs = Math.min(timing?.timeoutMs ?? 5 * retryDelayMs, FAILURE_BACKOFF_MAX_INTERVALS * intervalMs);
  const ceilingMs = Math.min(capMs, intervalMs * 2 ** Math.min(Math.max(failures, 0), 30));
  return Math.max(intervalMs, ceilingMs * (0.5 + 0.5 * uniform(random)));
}

/** How long the service asked us to wait (Retry-After, in ms), when the error carries it. */
export function retryAfterOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null || !("retryAfterMs" in error)) return undefined;
  const value = error.retryAfterMs;
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

import type { LeaseTiming } from "../../contract/timing.js";
import { UsageError } from "../usage-error.js";

/**
 * The grace period of `ha-module run`: how long the command gets between SIGTERM and
 * SIGKILL. `run` sends SIGTERM once the time left on the lease falls to the grace, so the
 * SIGKILL lands by the lease's deadline (sentAt + T − I) and the I that follows absorbs the
 * rest (the group's dying, clock error) before anyone can take over (docs/protocol.md#when-the-command-is-stopped).
 *
 * Why the grace must stay below T − 2·I: right after a renewal the time left is about
 * T − I − round trip, and it falls by I before the next renewal is answered. A grace of
 * T − 2·I or more would therefore stop the command in normal operation, every time.
 * A grace of G tolerates renewals late by up to T − 2·I − G before the command is stopped.
 */
export function graceLimitMs({ intervalMs, timeoutMs }: LeaseTiming): number {
  return timeoutMs - 2 * intervalMs;
}

/**
 * Without --grace-ms: (T − 2·I)/2, which splits the room evenly between renewals that run
 * late and the command's wind-down (1500 ms at the defaults I = 1000 ms, T = 5000 ms).
 */
export function defaultGraceMs(timing: LeaseTiming): number {
  return Math.floor(graceLimitMs(timing) / 2);
}

/** The grace to use: the one asked for if it fits, else the default; a UsageError (exit 2) when none fits. */
export function chooseGraceMs(requested: number | undefined, timing: LeaseTiming): number {
  const limit = graceLimitMs(timing);
  const service = `the service's I = ${timing.intervalMs} ms and T = ${timing.timeoutMs} ms`;
  if (requested === undefined) {
    const grace = defaultGraceMs(timing);
    if (grace < 1) {
      throw new UsageError(`${service} leave no room for a grace period: T − 2·I must be at least 2 ms. Raise HA_TIMEOUT_MS on the service.`);
    }
    return grace;
  }
  if (requested >= limit) {
    throw new UsageError(
      `--grace-ms ${requested} does not fit in the lease: with ${service}, the time left on the lease falls to about ` +
        `T − 2·I = ${limit} ms between renewals, so a grace of ${requested} ms would stop the command in normal operation. ` +
        `Give --grace-ms below ${limit}, or leave it out for (T − 2·I)/2 = ${defaultGraceMs(timing)} ms.`,
    );
  }
  return requested;
}

import type { LeaseTiming } from "../../contract/timing.js";
import { parseDuration } from "../client-flags.js";
import type { OptionSpec } from "../command-spec.js";
import type { HealthSettings } from "./health-check.js";
import { UsageError } from "../usage-error.js";

/** `run`'s health-check options, with Docker's HEALTHCHECK names and defaults. */
export const HEALTH_OPTIONS: readonly OptionSpec[] = [
  { name: "health-cmd", value: "CMD", help: "while primary, check the command with `sh -c CMD` (exit 0: healthy); after\n--health-retries failures in a row, stop it, release the lease and stand by" },
  { name: "health-interval", value: "D", help: "from the command's start to the first check, and between checks (default 30s)" },
  { name: "health-timeout", value: "D", help: "a check still running after D is killed and fails (default 30s)" },
  { name: "health-retries", value: "N", help: "consecutive failures that make the command unhealthy (default 3)" },
  { name: "health-start-period", value: "D", help: "failures in D after the command's start do not count, until one check\npasses (default 0s)" },
  { name: "health-cooldown", value: "D", help: "after stepping down unhealthy, only watch for D before competing again, so a\nstandby takes over (default T, the service's lease length; at least 2·I)" },
];

const DEFAULTS = { intervalMs: 30_000, timeoutMs: 30_000, retries: 3, startPeriodMs: 0 } as const;

export interface HealthFlags {
  readonly command: string;
  readonly settings: HealthSettings;
  /** --health-cooldown; undefined: T, known once the service has answered (chooseCooldownMs). */
  readonly cooldownMs: number | undefined;
}

/**
 * The health flags as given: undefined without --health-cmd (and then no other health flag
 * may be given). Durations are read as every duration flag is (parseDuration): 500ms, 5s, 1m30s, 1h.
 */
export function parseHealthFlags(values: Readonly<Record<string, string | boolean | undefined>>): HealthFlags | undefined {
  const command = values["health-cmd"];
  if (command === undefined) {
    const stray = HEALTH_OPTIONS.find((option) => values[option.name] !== undefined);
    if (stray !== undefined) throw new UsageError(`--${stray.name} sets up a health check, which needs --health-cmd CMD too (or leave --${stray.name} out).`);
    return undefined;
  }
  if (typeof command !== "string" || command.trim() === "") {
    throw new UsageError('--health-cmd needs the check to run, e.g. --health-cmd "curl -fsS http://127.0.0.1:8080/health" (exit 0: healthy).');
  }
  return {
    command,
    settings: {
      intervalMs: parseDuration("health-interval", values["health-interval"], { minMs: 1 }) ?? DEFAULTS.intervalMs,
      timeoutMs: parseDuration("health-timeout", values["health-timeout"], { minMs: 1 }) ?? DEFAULTS.timeoutMs,
      retries: parseRetries(values["health-retries"]),
      startPeriodMs: parseDuration("health-start-period", values["health-start-period"]) ?? DEFAULTS.startPeriodMs,
    },
    cooldownMs: parseDuration("health-cooldown", values["health-cooldown"]),
  };
}

/**
 * The cool-down: the one asked for, or T. T gives a standby, which looks every I, several
 * looks at the vacant role before this process competes again, and if no standby is there,
 * the role is vacant for no longer than a crashed primary's lease would have kept it. It
 * must be at least 2·I (a standby's look can come up to 10% after I, plus its round trip),
 * else this process could win the role straight back: a UsageError (exit 2) otherwise.
 */
export function chooseCooldownMs(requested: number | undefined, timing: LeaseTiming): number {
  if (requested === undefined) return timing.timeoutMs;
  const floor = 2 * timing.intervalMs;
  if (requested < floor) {
    throw new UsageError(
      `--health-cooldown ${requested}ms is too short: a standby looks at the role every I = ${timing.intervalMs} ms, so after a step-down ` +
        `this process could win it straight back. Give at least 2·I = ${floor}ms, or leave it out for T = ${timing.timeoutMs}ms.`,
    );
  }
  return requested;
}

function parseRetries(value: string | boolean | undefined): number {
  if (value === undefined) return DEFAULTS.retries;
  const retries = typeof value === "string" && /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(retries) || retries < 1) {
    throw new UsageError(`--health-retries must be a whole number of consecutive failures, at least 1 (got ${JSON.stringify(value)}).`);
  }
  return retries;
}

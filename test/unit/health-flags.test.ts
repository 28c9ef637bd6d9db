import { describe, expect, it } from "vitest";
import { chooseCooldownMs, parseHealthFlags } from "../../shared/cli/supervise/health-flags.js";
import { UsageError } from "../../shared/cli/usage-error.js";

/** `run`'s health flags: Docker's names, defaults and duration syntax, each refused where it enters with what to change. */
const parse = (values: Record<string, string>) => parseHealthFlags(values);
const refusal = (values: Record<string, string>): string => {
  try {
    parse(values);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(values)}`);
};

describe("run's health flags", () => {
  it("Docker's defaults: every 30s, timeout 30s, 3 retries, no start period; the cool-down follows T", () => {
    expect(parse({ "health-cmd": "true" })).toEqual({
      command: "true",
      settings: { intervalMs: 30_000, timeoutMs: 30_000, retries: 3, startPeriodMs: 0 },
      cooldownMs: undefined,
    });
    expect(parse({})).toBeUndefined();
  });

  it("durations as Docker writes them: 500ms, 5s, 1m30s, 1.5h, 0 for the start period", () => {
    const flags = parse({
      "health-cmd": "true",
      "health-interval": "1m30s",
      "health-timeout": "500ms",
      "health-start-period": "0",
      "health-retries": "5",
      "health-cooldown": "1.5h",
    });
    expect(flags).toMatchObject({ settings: { intervalMs: 90_000, timeoutMs: 500, retries: 5, startPeriodMs: 0 }, cooldownMs: 5_400_000 });
    expect(parse({ "health-cmd": "true", "health-interval": "1h2m3s4ms" })?.settings.intervalMs).toBe(3_723_004);
  });

  it("refuses each wrong value naming the flag and what to give", () => {
    expect(refusal({ "health-cmd": "true", "health-retries": "0" })).toMatch(/--health-retries must be a whole number of consecutive failures, at least 1 \(got "0"\)/);
    expect(refusal({ "health-cmd": "true", "health-retries": "two" })).toMatch(/--health-retries .* \(got "two"\)/);
    expect(refusal({ "health-cmd": "true", "health-timeout": "0" })).toMatch(/--health-timeout must be longer than 0, such as 5s \(got "0"\)/);
    expect(refusal({ "health-cmd": "true", "health-interval": "0s" })).toMatch(/--health-interval must be longer than 0/);
    expect(refusal({ "health-cmd": "true", "health-interval": "30" })).toMatch(/--health-interval must be a duration with a unit, such as 500ms, 10s, 2m or 1m30s \(got "30"\)/);
    expect(refusal({ "health-cmd": "true", "health-start-period": "-1s" })).toMatch(/--health-start-period must be a duration/);
    expect(refusal({ "health-cmd": "true", "health-cooldown": "1m30" })).toMatch(/--health-cooldown must be a duration/);
    expect(refusal({ "health-cmd": "  " })).toMatch(/--health-cmd needs the check to run/);
  });

  it("a health flag without --health-cmd is refused, naming both", () => {
    expect(refusal({ "health-retries": "3" })).toBe("--health-retries sets up a health check, which needs --health-cmd CMD too (or leave --health-retries out).");
    expect(refusal({ "health-cooldown": "10s" })).toMatch(/--health-cooldown .* needs --health-cmd/);
  });

  it("the cool-down: T by default; at least 2·I, else a standby may not have looked before this process competes again", () => {
    const timing = { intervalMs: 1000, timeoutMs: 5000 };
    expect(chooseCooldownMs(undefined, timing)).toBe(5000);
    expect(chooseCooldownMs(2000, timing)).toBe(2000);
    expect(() => chooseCooldownMs(1999, timing)).toThrow(/--health-cooldown 1999ms is too short: .* Give at least 2·I = 2000ms, or leave it out for T = 5000ms\./);
  });
});

import { describe, expect, it } from "vitest";
import { parseRideThrough } from "../../shared/cli/commands/run.js";
import { UsageError } from "../../shared/cli/usage-error.js";

/** `run --ride-through D` and HA_RIDE_THROUGH (docs/cli.md#run): read as every duration of the command line, refused with a message naming the source. */
describe("run --ride-through", () => {
  it("off by default, read from the flag, else from HA_RIDE_THROUGH", () => {
    expect(parseRideThrough(undefined, {})).toBe(0);
    expect(parseRideThrough(undefined, { HA_RIDE_THROUGH: "" })).toBe(0);
    expect(parseRideThrough("5m", {})).toBe(300_000);
    expect(parseRideThrough(undefined, { HA_RIDE_THROUGH: "30s" })).toBe(30_000);
    expect(parseRideThrough("0", { HA_RIDE_THROUGH: "30s" })).toBe(0);
    expect(parseRideThrough("500ms", { HA_RIDE_THROUGH: "30s" })).toBe(500);
  });

  it.each([
    ["10", {}, /--ride-through must be a duration with a unit/],
    ["-5s", {}, /--ride-through must be a duration with a unit/],
    [true, {}, /--ride-through must be a duration with a unit/],
    ["30d", {}, /--ride-through must be a duration with a unit/],
    ["600h", {}, /--ride-through 2160000000ms is longer than a timer can wait: give at most 2147483647ms/],
    [undefined, { HA_RIDE_THROUGH: "forever" }, /HA_RIDE_THROUGH must be a duration with a unit, such as 30s or 5m, or 0 for off \(got "forever"\)/],
    [undefined, { HA_RIDE_THROUGH: "600h" }, /HA_RIDE_THROUGH 2160000000ms is longer than a timer can wait/],
  ] as const)("refuses %s (env %j)", (flag, env, message) => {
    expect(() => parseRideThrough(flag, env)).toThrow(UsageError);
    expect(() => parseRideThrough(flag, env)).toThrow(message);
  });
});

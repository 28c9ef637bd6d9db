import { describe, expect, it } from "vitest";
import { chooseGraceMs, defaultGraceMs, graceLimitMs } from "../../shared/cli/supervise/run-grace.js";
import { UsageError } from "../../shared/cli/usage-error.js";

const DEFAULTS = { intervalMs: 1000, timeoutMs: 5000 };

describe("the grace of ha-module run must fit in the lease", () => {
  it("the limit is T − 2·I: the least time left between renewals in normal operation", () => {
    expect(graceLimitMs(DEFAULTS)).toBe(3000);
    expect(graceLimitMs({ intervalMs: 200, timeoutMs: 2000 })).toBe(1600);
  });

  it("without --grace-ms the grace is (T − 2·I)/2, rounded down", () => {
    expect(defaultGraceMs(DEFAULTS)).toBe(1500);
    expect(chooseGraceMs(undefined, { intervalMs: 200, timeoutMs: 2001 })).toBe(800);
  });

  it("accepts a grace below the limit as given", () => {
    expect(chooseGraceMs(1, DEFAULTS)).toBe(1);
    expect(chooseGraceMs(2999, DEFAULTS)).toBe(2999);
  });

  it("refuses a grace at or above the limit, naming --grace-ms, I, T, the limit and the default", () => {
    for (const grace of [3000, 5000]) {
      expect(() => chooseGraceMs(grace, DEFAULTS)).toThrow(UsageError);
    }
    expect(() => chooseGraceMs(5000, DEFAULTS)).toThrow(
      /--grace-ms 5000 does not fit in the lease: with the service's I = 1000 ms and T = 5000 ms.*T − 2·I = 3000 ms.*below 3000.*\(T − 2·I\)\/2 = 1500 ms/,
    );
  });

  it("refuses to run when I and T leave no room for any grace", () => {
    expect(() => chooseGraceMs(undefined, { intervalMs: 1000, timeoutMs: 2001 })).toThrow(/leave no room for a grace period/);
  });
});

import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_QUEUED, DEFAULT_SHED_BUSY_PERCENT, defaultShedDelayMs, loadAdmissionConfig } from "../../shared/config/admission-config.js";
import { ConfigError } from "../../shared/config/config-error.js";
import { loadServerConfig } from "../../shared/config/server-config.js";

const TIMING = { intervalMs: 1000, timeoutMs: 5000 };

describe("load shedding's settings (HA_MAX_IN_FLIGHT, HA_MAX_QUEUED, HA_SHED_BUSY_PERCENT, HA_SHED_DELAY_MS)", () => {
  it("defaults to 64 in flight, 256 waiting and shedding at 90 % busy or past a 100 ms delay (I / 10), and the server configuration carries them", () => {
    expect(DEFAULT_SHED_BUSY_PERCENT).toBe(90);
    expect(loadAdmissionConfig({}, TIMING)).toEqual({ maxInFlight: DEFAULT_MAX_IN_FLIGHT, maxQueued: DEFAULT_MAX_QUEUED, shedBusyFraction: 0.9, shedDelayMs: 100 });
    expect(loadServerConfig({ HA_MAX_IN_FLIGHT: "8", HA_MAX_QUEUED: "40", HA_SHED_BUSY_PERCENT: "75", HA_SHED_DELAY_MS: "75" }).admission).toEqual({
      maxInFlight: 8,
      maxQueued: 40,
      shedBusyFraction: 0.75,
      shedDelayMs: 75,
    });
    expect(loadServerConfig({ HA_INTERVAL_MS: "50", HA_TIMEOUT_MS: "200" }).admission?.shedDelayMs).toBeUndefined();
  });

  it("the default budget is I / 10 within 50–100 ms, and off when that is not under I", () => {
    expect([30_000, 1000, 700, 200, 51, 50, 1].map((intervalMs) => defaultShedDelayMs(intervalMs))).toEqual([100, 100, 70, 50, 50, undefined, undefined]);
  });

  it("HA_SHED_DELAY_MS=0 switches off shedding on a delayed process, and only that", () => {
    expect(loadAdmissionConfig({ HA_SHED_DELAY_MS: "0" }, TIMING)).toEqual({ maxInFlight: DEFAULT_MAX_IN_FLIGHT, maxQueued: DEFAULT_MAX_QUEUED, shedBusyFraction: 0.9, shedDelayMs: undefined });
  });

  it("HA_SHED_BUSY_PERCENT=0 switches off shedding on a busy process, and only that", () => {
    expect(loadAdmissionConfig({ HA_SHED_BUSY_PERCENT: "0" }, TIMING)).toEqual({ maxInFlight: DEFAULT_MAX_IN_FLIGHT, maxQueued: DEFAULT_MAX_QUEUED, shedBusyFraction: undefined, shedDelayMs: 100 });
  });

  it("HA_MAX_IN_FLIGHT=0 switches shedding off", () => {
    expect(loadAdmissionConfig({ HA_MAX_IN_FLIGHT: "0" }, TIMING)).toBeUndefined();
  });

  it.each([
    [{ HA_MAX_IN_FLIGHT: "-1" }, "HA_MAX_IN_FLIGHT", /whole number from 0 to 100000 \(got "-1"\)/],
    [{ HA_MAX_IN_FLIGHT: "lots" }, "HA_MAX_IN_FLIGHT", /got "lots"/],
    [{ HA_MAX_QUEUED: "1.5" }, "HA_MAX_QUEUED", /whole number/],
    [{ HA_MAX_QUEUED: "1" }, "HA_MAX_QUEUED", /at least 2 \(got 1\).*HA_MAX_IN_FLIGHT=0/],
    [{ HA_SHED_DELAY_MS: "0.5" }, "HA_SHED_DELAY_MS", /whole number.*got "0.5".*for example, 100/],
    [{ HA_SHED_DELAY_MS: "9" }, "HA_SHED_DELAY_MS", /0 \(off\) or from 10 ms.*less than HA_INTERVAL_MS, 1000 ms.*\(got 9\).*for example, 100/],
    [{ HA_SHED_DELAY_MS: "1000" }, "HA_SHED_DELAY_MS", /less than HA_INTERVAL_MS, 1000 ms.*\(got 1000\)/],
    [{ HA_SHED_BUSY_PERCENT: "101" }, "HA_SHED_BUSY_PERCENT", /whole number from 0 to 100 \(got "101"\).*for example, 90/],
    [{ HA_SHED_BUSY_PERCENT: "0.9" }, "HA_SHED_BUSY_PERCENT", /got "0.9"/],
  ])("%o is refused naming %s and what to change", (env, name, message) => {
    let thrown: unknown;
    try {
      loadAdmissionConfig(env, TIMING);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).message).toMatch(message);
    expect((thrown as Error).message).toContain(name);
  });
});

import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_QUEUED, DEFAULT_SHED_BUSY_PERCENT, loadAdmissionConfig } from "../../shared/config/admission-config.js";
import { ConfigError } from "../../shared/config/config-error.js";
import { loadServerConfig } from "../../shared/config/server-config.js";

describe("load shedding's settings (HA_MAX_IN_FLIGHT, HA_MAX_QUEUED, HA_SHED_BUSY_PERCENT)", () => {
  it("defaults to 64 in flight, 256 waiting and shedding past 90 % busy, and the server configuration carries them", () => {
    expect(loadAdmissionConfig({})).toEqual({ maxInFlight: DEFAULT_MAX_IN_FLIGHT, maxQueued: DEFAULT_MAX_QUEUED, shedBusyFraction: DEFAULT_SHED_BUSY_PERCENT / 100 });
    expect(DEFAULT_SHED_BUSY_PERCENT).toBe(90);
    expect(loadServerConfig({ HA_MAX_IN_FLIGHT: "8", HA_MAX_QUEUED: "40", HA_SHED_BUSY_PERCENT: "75" }).admission).toEqual({ maxInFlight: 8, maxQueued: 40, shedBusyFraction: 0.75 });
  });

  it("HA_SHED_BUSY_PERCENT=0 switches off shedding on a busy process, and only that", () => {
    expect(loadAdmissionConfig({ HA_SHED_BUSY_PERCENT: "0" })).toEqual({ maxInFlight: DEFAULT_MAX_IN_FLIGHT, maxQueued: DEFAULT_MAX_QUEUED, shedBusyFraction: undefined });
  });

  it("HA_MAX_IN_FLIGHT=0 switches shedding off", () => {
    expect(loadAdmissionConfig({ HA_MAX_IN_FLIGHT: "0" })).toBeUndefined();
  });

  it.each([
    [{ HA_MAX_IN_FLIGHT: "-1" }, "HA_MAX_IN_FLIGHT", /whole number from 0 to 100000 \(got "-1"\)/],
    [{ HA_MAX_IN_FLIGHT: "lots" }, "HA_MAX_IN_FLIGHT", /got "lots"/],
    [{ HA_MAX_QUEUED: "1.5" }, "HA_MAX_QUEUED", /whole number/],
    [{ HA_MAX_QUEUED: "1" }, "HA_MAX_QUEUED", /at least 2 \(got 1\).*HA_MAX_IN_FLIGHT=0/],
    [{ HA_SHED_BUSY_PERCENT: "101" }, "HA_SHED_BUSY_PERCENT", /whole number from 0 to 100 \(got "101"\).*for example, 90/],
    [{ HA_SHED_BUSY_PERCENT: "0.9" }, "HA_SHED_BUSY_PERCENT", /got "0.9"/],
  ])("%o is refused naming %s and what to change", (env, name, message) => {
    let thrown: unknown;
    try {
      loadAdmissionConfig(env);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).message).toMatch(message);
    expect((thrown as Error).message).toContain(name);
  });
});

import { describe, expect, it } from "vitest";
import { ConfigError } from "../../shared/config/config-error.js";
import { loadMembersConfig, sweepPeriodOf } from "../../shared/config/members-config.js";
import { loadServerConfig, loadStoreConfig } from "../../shared/config/server-config.js";

const TIMING = { intervalMs: 1000, timeoutMs: 5000 };

function configErrorOf(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("membership configuration", () => {
  it("defaults: ttl = 3·T, retention = ttl, 1000 rows a group, a sweep every 5 s", () => {
    expect(loadMembersConfig({}, TIMING)).toEqual({ ttlMs: 15_000, retentionMs: 15_000, maxPerGroup: 1000, sweepSchedule: "*/5 * * * * *", sweepPeriodMs: 5000 });
    expect(loadServerConfig({}).members.ttlMs).toBe(15_000);
  });

  it("takes every setting from the environment", () => {
    const env = { HA_MEMBER_TTL_MS: "9000", HA_MEMBER_RETENTION_MS: "0", HA_MEMBERS_MAX_PER_GROUP: "50", HA_SWEEP_SCHEDULE: "0 */2 * * * *" };
    expect(loadMembersConfig(env, TIMING)).toEqual({ ttlMs: 9000, retentionMs: 0, maxPerGroup: 50, sweepSchedule: "0 */2 * * * *", sweepPeriodMs: 120_000 });
  });

  it("refuses a ttl that is not above T, saying what to change", () => {
    const error = configErrorOf(() => loadMembersConfig({ HA_MEMBER_TTL_MS: "5000" }, TIMING));
    expect(error.setting).toBe("HA_MEMBER_TTL_MS");
    expect(error.message).toMatch(/must be greater than HA_TIMEOUT_MS \(5000\).*default 3 × T = 15000/);
  });

  it.each([
    ["HA_MEMBER_RETENTION_MS", "-1"],
    ["HA_MEMBERS_MAX_PER_GROUP", "0"],
    ["HA_MEMBERS_MAX_PER_GROUP", "many"],
  ])("refuses %s=%s, naming it", (setting, value) => {
    expect(configErrorOf(() => loadMembersConfig({ [setting]: value }, TIMING)).setting).toBe(setting);
  });

  it.each([
    ["*/5 * * * * *", 5000],
    ["* * * * * *", 1000],
    ["*/1 * * * * *", 1000],
    ["*/30 * * * * *", 30_000],
    ["0 * * * * *", 60_000],
    ["0 */15 * * * *", 900_000],
  ])("knows the period of the schedule %s: %d ms", (schedule, periodMs) => {
    expect(sweepPeriodOf(schedule)).toBe(periodMs);
  });

  it.each(["*/7 * * * * *", "0 0 * * * *", "*/5 * * * *", "5 * * * * *", "every 5 s", "*/5 * 1 * * *"])(
    "refuses a schedule it cannot tell the period of (%s), saying which forms work",
    (schedule) => {
      const error = configErrorOf(() => loadMembersConfig({ HA_SWEEP_SCHEDULE: schedule }, TIMING));
      expect(error.setting).toBe("HA_SWEEP_SCHEDULE");
      expect(error.message).toMatch(/"\*\/N \* \* \* \* \*" \(every N seconds\)/);
    },
  );

  it("names the members table and container, and refuses to share the lease table or container", () => {
    expect(loadStoreConfig({ HA_MEMBERS_TABLE_NAME: "haMembers" })).toMatchObject({ membersTableName: "haMembers" });
    expect(loadStoreConfig({ HA_STORE: "cosmos", HA_COSMOS_MEMBERS_CONTAINER: "ha-members" })).toMatchObject({ membersContainerName: "ha-members" });
    expect(configErrorOf(() => loadStoreConfig({ HA_MEMBERS_TABLE_NAME: "Leases" })).setting).toBe("HA_MEMBERS_TABLE_NAME");
    expect(configErrorOf(() => loadStoreConfig({ HA_MEMBERS_TABLE_NAME: "no_underscores" })).setting).toBe("HA_MEMBERS_TABLE_NAME");
    expect(configErrorOf(() => loadStoreConfig({ HA_STORE: "cosmos", HA_COSMOS_CONTAINER: "x", HA_COSMOS_MEMBERS_CONTAINER: "x" })).setting).toBe("HA_COSMOS_MEMBERS_CONTAINER");
  });
});

import { describe, expect, it } from "vitest";
import { ConfigError } from "../../shared/config/config-error.js";
import { loadStoreConfig } from "../../shared/config/server-config.js";

function configErrorOf(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

/** HA_COSMOS_PREFERRED_REGIONS: each app of a multi-region deployment reads its own region first (docs/deploy.md#several-regions). */
describe("HA_COSMOS_PREFERRED_REGIONS", () => {
  it("is a comma-separated list, in order, trimmed; unset or empty means the SDK's default (the write region)", () => {
    expect(loadStoreConfig({ HA_STORE: "cosmos", HA_COSMOS_PREFERRED_REGIONS: "North Europe, West Europe,westus2" })).toMatchObject({
      preferredRegions: ["North Europe", "West Europe", "westus2"],
    });
    expect(loadStoreConfig({ HA_STORE: "cosmos" })).not.toHaveProperty("preferredRegions");
    expect(loadStoreConfig({ HA_STORE: "cosmos", HA_COSMOS_PREFERRED_REGIONS: " " })).not.toHaveProperty("preferredRegions");
  });

  it.each([
    ["West Europe,,North Europe", /must list Azure regions separated by commas.*got ""/],
    ["West Europe;North Europe", /got "West Europe;North Europe"/],
    ["West Europe,westeurope", /names "westeurope" twice/],
  ])("refuses %j, naming the setting and what to change", (value, message) => {
    const error = configErrorOf(() => loadStoreConfig({ HA_STORE: "cosmos", HA_COSMOS_PREFERRED_REGIONS: value }));
    expect(error.setting).toBe("HA_COSMOS_PREFERRED_REGIONS");
    expect(error.message).toMatch(message);
  });
});

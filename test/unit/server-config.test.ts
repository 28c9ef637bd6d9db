import { describe, expect, it } from "vitest";
import { loadServeSettings } from "../../shared/config/serve-config.js";
import { ConfigError } from "../../shared/config/config-error.js";
import { loadServerConfig, loadStoreConfig, loadTiming } from "../../shared/config/server-config.js";

function configErrorOf(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("timing configuration", () => {
  it("defaults to I = 1000 ms and T = 5000 ms", () => {
    expect(loadTiming({})).toEqual({ intervalMs: 1000, timeoutMs: 5000 });
  });

  it("accepts positive integers with T > 2·I", () => {
    expect(loadTiming({ HA_INTERVAL_MS: "200", HA_TIMEOUT_MS: "401" })).toEqual({ intervalMs: 200, timeoutMs: 401 });
  });

  it.each([
    ["HA_INTERVAL_MS", "0"],
    ["HA_INTERVAL_MS", "-5"],
    ["HA_INTERVAL_MS", "1.5"],
    ["HA_INTERVAL_MS", "abc"],
    ["HA_TIMEOUT_MS", "5s"],
    ["HA_TIMEOUT_MS", "1e4"],
  ])("refuses %s=%s, naming the variable and what to set", (name, value) => {
    const error = configErrorOf(() => loadTiming({ [name]: value }));
    expect(error.setting).toBe(name);
    expect(error.message).toContain(name);
    expect(error.message).toContain(`"${value}"`);
    expect(error.message).toMatch(/whole number/);
  });

  it("refuses T <= 2·I at the boundary, saying what to change", () => {
    const error = configErrorOf(() => loadTiming({ HA_INTERVAL_MS: "1000", HA_TIMEOUT_MS: "2000" }));
    expect(error.setting).toBe("HA_TIMEOUT_MS");
    expect(error.message).toMatch(/raise HA_TIMEOUT_MS above 2000 or lower HA_INTERVAL_MS/);
  });
});

describe("store configuration", () => {
  it("uses the embedded default when no Table connection is set", () => {
    expect(loadStoreConfig({})).toEqual({
      kind: "table",
      tableName: "leases",
      connection: { mode: "embedded" },
      createIfMissing: true,
    });
  });

  it("uses a connection string, creating the table by default", () => {
    const connectionString = "UseDevelopmentStorage=true";
    expect(loadStoreConfig({ HA_TABLE_CONNECTION_STRING: connectionString, HA_TABLE_NAME: "haLeases" })).toEqual({
      kind: "table",
      tableName: "haLeases",
      connection: { mode: "connection-string", connectionString },
      createIfMissing: true,
    });
  });

  it("uses managed identity with only an endpoint, leaving table creation to the deployment", () => {
    expect(loadStoreConfig({ HA_TABLE_ENDPOINT: "https://acct.table.core.windows.net/" })).toEqual({
      kind: "table",
      tableName: "leases",
      connection: { mode: "identity", endpoint: "https://acct.table.core.windows.net" },
      createIfMissing: false,
    });
  });

  it.each([
    [{ HA_TABLE_CONNECTION_STRING: "UseDevelopmentStorage=true", HA_TABLE_ENDPOINT: "https://a.table.core.windows.net" }, "HA_TABLE_ENDPOINT", /not both/],
    [{ HA_TABLE_CONNECTION_STRING: "hello" }, "HA_TABLE_CONNECTION_STRING", /connection string/],
    [{ HA_TABLE_ENDPOINT: "not a url" }, "HA_TABLE_ENDPOINT", /absolute URL/],
    [{ HA_TABLE_ENDPOINT: "ftp://x" }, "HA_TABLE_ENDPOINT", /http\(s\) URL/],
    [{ HA_TABLE_NAME: "1bad" }, "HA_TABLE_NAME", /letters and digits/],
    [{ HA_TABLE_NAME: "has-dash" }, "HA_TABLE_NAME", /letters and digits/],
    [{ HA_STORE: "redis" }, "HA_STORE", /table, cosmos/],
    [{ HA_STORE_CREATE: "maybe" }, "HA_STORE_CREATE", /true or false/],
  ])("refuses %j, naming %s", (env, setting, message) => {
    const error = configErrorOf(() => loadStoreConfig(env));
    expect(error.setting).toBe(setting);
    expect(error.message).toContain(setting);
    expect(error.message).toMatch(message);
  });
});

describe("server configuration", () => {
  it("reads everything once with defaults", () => {
    expect(loadServerConfig({})).toMatchObject({
      timing: { intervalMs: 1000, timeoutMs: 5000 },
      storeTimeoutMs: 2000,
      leaseSecret: undefined,
    });
  });

  it("refuses a short lease secret", () => {
    const error = configErrorOf(() => loadServerConfig({ HA_LEASE_SECRET: "short" }));
    expect(error.setting).toBe("HA_LEASE_SECRET");
    expect(error.message).toMatch(/at least 32 characters/);
  });

  it("refuses a bad store time budget", () => {
    expect(configErrorOf(() => loadServerConfig({ HA_STORE_TIMEOUT_MS: "0" })).setting).toBe("HA_STORE_TIMEOUT_MS");
  });
});

describe("local host settings", () => {
  it("defaults to port 7071, data in .ha-data, on disk, no key", () => {
    expect(loadServeSettings({})).toEqual({ host: "127.0.0.1", port: 7071, dataDir: ".ha-data", inMemory: false, apiKey: undefined, auth: { identity: undefined, keys: [], grants: undefined } });
  });

  it.each([
    ["0.0.0.0", "0.0.0.0"],
    ["10.0.0.4", "10.0.0.4"],
    ["::", "::"],
    ["[::1]", "::1"],
    ["localhost", "localhost"],
  ])("HA_HOST %s listens on %s", (value, host) => {
    expect(loadServeSettings({ HA_HOST: value }).host).toBe(host);
  });

  it("refuses an HA_HOST that is not an address, naming HA_HOST and what to give", () => {
    const error = configErrorOf(() => loadServeSettings({ HA_HOST: "my-laptop.example" }));
    expect(error.setting).toBe("HA_HOST");
    expect(error.message).toMatch(/127\.0\.0\.1 \(the default\) for this machine only, 0\.0\.0\.0 \(or ::\) for every interface/);
  });

  it("refuses a port out of range, naming PORT", () => {
    expect(configErrorOf(() => loadServeSettings({ PORT: "70000" })).setting).toBe("PORT");
  });
});

import { afterEach, describe, expect, it, vi } from "vitest";
import { operations } from "../../functions/routes.js";
import { serveCommand } from "../../shared/cli/commands/serve.js";
import { ConfigError } from "../../shared/config/config-error.js";
import type { Env } from "../../shared/config/env.js";
import { loadStoreConfig, type StoreConfig } from "../../shared/config/server-config.js";
import { createCosmosStore } from "../../shared/store/create-cosmos-store.js";

const ENDPOINT = "https://ha-test.documents.azure.com:443";

function settingOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.setting;
    throw error;
  }
  return undefined;
}

describe("Cosmos store settings", () => {
  it("uses database ha and container leases unless told otherwise", () => {
    expect(loadStoreConfig({ HA_STORE: "cosmos", HA_COSMOS_ENDPOINT: ENDPOINT })).toMatchObject({
      kind: "cosmos",
      databaseName: "ha",
      containerName: "leases",
    });
    expect(
      loadStoreConfig({ HA_STORE: "COSMOS", HA_COSMOS_ENDPOINT: ENDPOINT, HA_COSMOS_DATABASE: "prod-ha", HA_COSMOS_CONTAINER: "leases_v2" }),
    ).toMatchObject({ databaseName: "prod-ha", containerName: "leases_v2" });
  });

  it("picks the credential from the settings: key, managed identity, or the embedded emulator", () => {
    const connectionOf = (env: Env) => (loadStoreConfig(env) as Extract<StoreConfig, { kind: "cosmos" }>).connection;
    expect(connectionOf({ HA_STORE: "cosmos", HA_COSMOS_ENDPOINT: ENDPOINT, HA_COSMOS_KEY: "k" })).toEqual({
      mode: "key",
      endpoint: ENDPOINT,
      key: "k",
    });
    expect(connectionOf({ HA_STORE: "cosmos", HA_COSMOS_ENDPOINT: ENDPOINT })).toEqual({ mode: "identity", endpoint: ENDPOINT });
    expect(connectionOf({ HA_STORE: "cosmos" })).toEqual({ mode: "embedded" });
  });

  it("creates the database and container only when asked, by default only outside Azure", () => {
    const createOf = (env: Env) => loadStoreConfig({ HA_STORE: "cosmos", ...env }).createIfMissing;
    expect(createOf({ HA_COSMOS_ENDPOINT: ENDPOINT })).toBe(false);
    expect(createOf({ HA_COSMOS_ENDPOINT: ENDPOINT, HA_STORE_CREATE: "true" })).toBe(true);
    expect(createOf({ HA_COSMOS_ENDPOINT: ENDPOINT, HA_COSMOS_KEY: "k" })).toBe(true);
    expect(createOf({ HA_COSMOS_ENDPOINT: ENDPOINT, HA_COSMOS_KEY: "k", HA_STORE_CREATE: "0" })).toBe(false);
  });

  const invalid: Array<{ env: Env; setting: string }> = [
    { env: { HA_STORE: "mongo" }, setting: "HA_STORE" },
    { env: { HA_STORE: "cosmos", HA_COSMOS_ENDPOINT: "ha-test.documents.azure.com" }, setting: "HA_COSMOS_ENDPOINT" },
    { env: { HA_STORE: "cosmos", HA_COSMOS_ENDPOINT: "ftp://ha-test.documents.azure.com" }, setting: "HA_COSMOS_ENDPOINT" },
    { env: { HA_STORE: "cosmos", HA_COSMOS_KEY: "k" }, setting: "HA_COSMOS_ENDPOINT" },
    { env: { HA_STORE: "cosmos", HA_COSMOS_DATABASE: "ha/prod" }, setting: "HA_COSMOS_DATABASE" },
    { env: { HA_STORE: "cosmos", HA_COSMOS_CONTAINER: "my leases" }, setting: "HA_COSMOS_CONTAINER" },
    { env: { HA_STORE: "cosmos", HA_COSMOS_CONTAINER: "x".repeat(256) }, setting: "HA_COSMOS_CONTAINER" },
    { env: { HA_STORE: "cosmos", HA_COSMOS_ENDPOINT: ENDPOINT, HA_STORE_CREATE: "yes please" }, setting: "HA_STORE_CREATE" },
  ];
  for (const { env, setting } of invalid) {
    it(`names ${setting} when ${JSON.stringify(env)} is refused`, () => {
      expect(settingOf(() => loadStoreConfig(env))).toBe(setting);
    });
  }
});

describe("Cosmos store construction", () => {
  const cosmos = (connection: Extract<StoreConfig, { kind: "cosmos" }>["connection"]): Extract<StoreConfig, { kind: "cosmos" }> => ({
    kind: "cosmos",
    databaseName: "ha",
    containerName: "leases",
    connection,
    createIfMissing: false,
  });

  it("builds a key or managed-identity store without touching the network", () => {
    for (const connection of [{ mode: "key", endpoint: ENDPOINT, key: "k" }, { mode: "identity", endpoint: ENDPOINT }] as const) {
      const configured = createCosmosStore(cosmos(connection));
      expect(configured.store.kind).toBe("cosmos");
      configured.close();
    }
  });

  it("refuses to run without an account outside the local host, naming HA_COSMOS_ENDPOINT", () => {
    expect(settingOf(() => createCosmosStore(cosmos({ mode: "embedded" })))).toBe("HA_COSMOS_ENDPOINT");
  });

  it("refuses a plain-http endpoint where it enters: Cosmos is only reached over TLS", () => {
    const load = (): unknown => loadStoreConfig({ HA_STORE: "cosmos", HA_COSMOS_ENDPOINT: "http://10.0.0.9:8081", HA_COSMOS_KEY: "k" });
    expect(settingOf(load)).toBe("HA_COSMOS_ENDPOINT");
    expect(load).toThrow(/HA_COSMOS_ENDPOINT must be an https URL/);
  });
});

describe("ha-module serve on bad Cosmos settings", () => {
  afterEach(() => vi.restoreAllMocks());

  it("stops before starting anything, exits 2 and names the setting", async () => {
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((message: unknown) => void errors.push(String(message)));
    const code = await serveCommand({ values: {}, positionals: [], trailing: [] }, { HA_STORE: "cosmos", HA_COSMOS_ENDPOINT: ENDPOINT, HA_COSMOS_CONTAINER: "a/b" }, operations);
    expect(code).toBe(2);
    expect(errors.join("\n")).toMatch(/^ha-module: HA_COSMOS_CONTAINER must be/);
  });
});

import { readFileSync } from "node:fs";
import { metrics } from "@opentelemetry/api";
import { afterAll, describe, expect, it } from "vitest";
import { entraClientId, setUpAzureTelemetry } from "../../shared/http/azure-telemetry.js";

/** What infra/modules/function-app.bicep gives the app, with an ingestion endpoint nothing listens on. */
const AZURE_SETTINGS = {
  APPLICATIONINSIGHTS_CONNECTION_STRING:
    "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=http://127.0.0.1:9/;LiveEndpoint=http://127.0.0.1:9/",
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: "ClientId=11111111-1111-1111-1111-111111111111;Authorization=AAD",
  AZURE_CLIENT_ID: "11111111-1111-1111-1111-111111111111",
  HA_TABLE_ENDPOINT: "https://acct.table.core.windows.net",
  HA_STORE_CREATE: "false",
};

describe("the Azure telemetry set-up", () => {
  afterAll(async () => {
    const { shutdownAzureMonitor } = await import("@azure/monitor-opentelemetry");
    await shutdownAzureMonitor();
    for (const name of Object.keys(AZURE_SETTINGS)) delete process.env[name];
  });

  it("host.json switches the Functions host to OpenTelemetry, as the Functions OpenTelemetry guidance says", () => {
    const host = JSON.parse(readFileSync(new URL("../../host.json", import.meta.url), "utf8")) as { telemetryMode?: string };
    expect(host.telemetryMode).toBe("OpenTelemetry");
  });

  it("reads the Entra client id of APPLICATIONINSIGHTS_AUTHENTICATION_STRING, in any order and case", () => {
    expect(entraClientId("ClientId=abc;Authorization=AAD")).toBe("abc");
    expect(entraClientId("authorization=aad; clientid=abc")).toBe("abc");
    expect(entraClientId("Authorization=AAD")).toBe(""); // system-assigned identity
    expect(entraClientId(undefined)).toBeUndefined();
    expect(entraClientId("Authorization=Key")).toBeUndefined();
  });

  it("sets up nothing without APPLICATIONINSIGHTS_CONNECTION_STRING: the service measures nothing", async () => {
    expect(await setUpAzureTelemetry({})).toBeUndefined();
    expect(await setUpAzureTelemetry({ APPLICATIONINSIGHTS_CONNECTION_STRING: "  " })).toBeUndefined();
    expect(metrics.getMeterProvider().constructor.name).toBe("NoopMeterProvider");
  });

  // The packaged entry under plain Node, as the worker loads it: test/package/package.test.ts.
  it("loads the functions entry with the settings Bicep gives: nothing throws, and the Azure Monitor meter provider is the global one", async () => {
    Object.assign(process.env, AZURE_SETTINGS);
    await expect(import("../../functions/index.js")).resolves.toBeDefined();
    expect(metrics.getMeterProvider().constructor.name).not.toBe("NoopMeterProvider");
    // The instruments the runtime made on it accept measurements.
    expect(() => metrics.getMeter("ha-module").createCounter("ha.test.loaded").add(1)).not.toThrow();
  });
});

import { metrics, type Meter } from "@opentelemetry/api";
import type { Env } from "../config/env.js";
import { azureFunctionsModule } from "./azure-functions.js";
import { METER_NAME } from "./metric-names.js";

/**
 * In Azure, the service's metrics go to Application Insights through OpenTelemetry, as the
 * Functions OpenTelemetry guidance describes: host.json sets `"telemetryMode":
 * "OpenTelemetry"` for the host, and the worker (this process) sets up the Azure Monitor
 * distro (@azure/monitor-opentelemetry) and the Functions instrumentation, which ties our
 * telemetry to each invocation. Both need APPLICATIONINSIGHTS_CONNECTION_STRING (Bicep sets
 * it); without it nothing is set up and the service measures nothing.
 *
 * Ingestion takes Microsoft Entra tokens only when the component disables local auth (ours
 * does): APPLICATIONINSIGHTS_AUTHENTICATION_STRING `Authorization=AAD;ClientId=<id>`, which
 * the Functions host reads, is read here too and turned into the managed identity's
 * credential, since the distro does not read that setting itself.
 *
 * Returns the meter for the runtime, or undefined when telemetry is off. Must run before the
 * runtime is made: a Meter taken before the global MeterProvider is set stays a no-op.
 */
/** The Azure Monitor distro's instrumentations for libraries this app never loads. */
export const UNUSED_INSTRUMENTATIONS = ["mongoDb", "mySql", "postgreSql", "redis", "redis4", "bunyan", "winston"] as const;

export async function setUpAzureTelemetry(env: Env): Promise<Meter | undefined> {
  const connectionString = env["APPLICATIONINSIGHTS_CONNECTION_STRING"]?.trim();
  if (connectionString === undefined || connectionString === "") return undefined;
  const clientId = entraClientId(env["APPLICATIONINSIGHTS_AUTHENTICATION_STRING"]);
  const [{ useAzureMonitor }, instrumentation] = await Promise.all([
    import("@azure/monitor-opentelemetry"),
    import("@azure/functions-opentelemetry-instrumentation"),
  ]);
  // A bundled CommonJS module: Node's ESM loader shows its classes on the default export only.
  // (Under a bundler or vitest it may be the named exports instead: either way, one of the two.)
  const { AzureFunctionsInstrumentationESM } = (instrumentation.default as typeof instrumentation.default | undefined) ?? instrumentation;
  const credential = clientId === undefined ? undefined : new (await import("@azure/identity")).ManagedIdentityCredential(clientId === "" ? {} : { clientId });
  useAzureMonitor({
    azureMonitorExporterOptions: { connectionString, ...(credential === undefined ? {} : { credential }) },
    // Off: the app uses none of these libraries, and the deploy bundle leaves them out (scripts/bundle-functions.mjs).
    instrumentationOptions: Object.fromEntries(UNUSED_INSTRUMENTATIONS.map((name) => [name, { enabled: false }])),
  });
  // Instrumentations enable themselves on construction and use the global providers just set.
  new AzureFunctionsInstrumentationESM().registerAzFunc(azureFunctionsModule);
  return metrics.getMeter(METER_NAME);
}

/**
 * The client id of APPLICATIONINSIGHTS_AUTHENTICATION_STRING ("Authorization=AAD;ClientId=…"):
 * "" for a system-assigned identity (AAD without ClientId), undefined when not AAD.
 */
export function entraClientId(setting: string | undefined): string | undefined {
  if (setting === undefined) return undefined;
  const parts = new Map(
    setting
      .split(";")
      .map((part) => part.split("="))
      .filter((pair): pair is [string, string] => pair.length === 2)
      .map(([key, value]) => [key.trim().toLowerCase(), value.trim()]),
  );
  if (parts.get("authorization")?.toLowerCase() !== "aad") return undefined;
  return parts.get("clientid") ?? "";
}

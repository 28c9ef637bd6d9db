import { ConfigError } from "../config/config-error.js";
import { readBoolean, readInteger, readString, type Env } from "../config/env.js";
import { loadServerConfig, type ServerConfig, type StoreConfig } from "../config/server-config.js";
import { DataDirInUseError } from "../host/data-dir-in-use-error.js";
import { startEmbeddedAzurite } from "../host/embedded-azurite.js";
import { startEmbeddedCosmos } from "../host/embedded-cosmos.js";
import type { Operation } from "../http/route.js";
import type { TimerOperation } from "../http/timer.js";
import { startLocalHost } from "../host/local-host.js";
import { startLocalTimers } from "../host/local-timers.js";
import { createRuntime } from "../http/runtime.js";
import { createConfiguredStore, type CreateConfiguredStoreOptions } from "../store/create-store.js";

export interface ServeSettings {
  readonly port: number;
  readonly dataDir: string;
  readonly inMemory: boolean;
  readonly apiKey: string | undefined;
}

export interface RunningService {
  readonly url: string;
  readonly banner: string;
  close(): Promise<void>;
}

/** The local host's own settings (the server's are in loadServerConfig). */
export function loadServeSettings(env: Env): ServeSettings {
  return {
    port: readInteger(env, "PORT", 7071, { min: 0, max: 65_535, example: 7071 }),
    dataDir: readString(env, "HA_DATA_DIR") ?? ".ha-data",
    inMemory: readBoolean(env, "HA_IN_MEMORY", false),
    apiKey: readString(env, "HA_API_KEY"),
  };
}

/**
 * `npm start` / `ha-module serve`: the route table (`operations`, given by the composition
 * root) on a local host, over the configured store, or over an embedded Azurite (or, with
 * HA_STORE=cosmos, an embedded Cosmos emulator) when none is configured.
 */
export async function startService(
  config: ServerConfig,
  settings: ServeSettings,
  operations: readonly Operation[],
  timers: readonly TimerOperation[] = [],
): Promise<RunningService> {
  const closers: Array<() => Promise<void>> = [];
  const closeAll = async (): Promise<void> => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  };
  try {
    let storeConfig: StoreConfig = config.store;
    const storeLabel = describeStore(storeConfig, settings);
    if (storeConfig.kind === "table" && storeConfig.connection.mode === "embedded") {
      const azurite = await startEmbeddedAzurite({ dataDir: settings.dataDir, inMemory: settings.inMemory });
      closers.push(() => azurite.close());
      storeConfig = {
        ...storeConfig,
        connection: { mode: "connection-string", connectionString: azurite.connectionString },
        createIfMissing: true,
      };
    }
    let storeOptions: CreateConfiguredStoreOptions = {};
    if (storeConfig.kind === "cosmos" && storeConfig.connection.mode === "embedded") {
      const cosmos = await startEmbeddedCosmos();
      closers.push(() => cosmos.close());
      storeConfig = {
        ...storeConfig,
        connection: { mode: "key", endpoint: cosmos.endpoint, key: cosmos.key },
        createIfMissing: true,
      };
      // The emulator's own certificate, made for this run: TLS verification stays on.
      storeOptions = { trustedCosmosCertificate: cosmos.certificatePem };
    }
    const configured = createConfiguredStore(storeConfig, storeOptions);
    closers.push(async () => configured.close());
    await configured.prepare({ abortSignal: AbortSignal.timeout(30_000) });
    const runtime = createRuntime(config, configured.store, undefined, configured.members);
    const host = await startLocalHost({
      operations,
      runtime: async () => runtime,
      port: settings.port,
      apiKey: settings.apiKey,
    });
    closers.push(() => host.close());
    // The timer functions (the membership sweeper) run here as Azure would run them.
    const log = (level: "warn" | "error", message: string): void => console[level](message);
    const localTimers = startLocalTimers({ timers, runtime: async () => runtime, periodMs: config.members.sweepPeriodMs, log });
    closers.push(() => localTimers.close());
    const { intervalMs, timeoutMs } = config.timing;
    return {
      url: host.url,
      banner: [
        `ha-module listening on ${host.url}`,
        `  I = ${intervalMs} ms, T = ${timeoutMs} ms, store: ${storeLabel}`,
        `  API key: ${settings.apiKey === undefined ? "not required (set HA_API_KEY to require one)" : "required in x-functions-key"}`,
      ].join("\n"),
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

function describeStore(store: StoreConfig, settings: ServeSettings): string {
  if (store.kind === "table") {
    switch (store.connection.mode) {
      case "embedded":
        return `table "${store.tableName}" on embedded Azurite (${settings.inMemory ? "in memory" : `data in ${settings.dataDir}`})`;
      case "connection-string":
        return `table "${store.tableName}" via HA_TABLE_CONNECTION_STRING`;
      case "identity":
        return `table "${store.tableName}" at ${store.connection.endpoint} (DefaultAzureCredential)`;
    }
  }
  const container = `cosmos "${store.databaseName}/${store.containerName}"`;
  switch (store.connection.mode) {
    case "embedded":
      return `${container} on an embedded Cosmos emulator (in memory: leases are lost when it stops)`;
    case "key":
      return `${container} at ${store.connection.endpoint} (HA_COSMOS_KEY)`;
    case "identity":
      return `${container} at ${store.connection.endpoint} (DefaultAzureCredential)`;
  }
}

/**
 * Runs the service until SIGINT or SIGTERM; exits 2 with the message on a bad setting or
 * when another service holds HA_DATA_DIR.
 */
export async function serveCommand(env: Env, operations: readonly Operation[], timers: readonly TimerOperation[] = []): Promise<number> {
  let config: ServerConfig;
  let settings: ServeSettings;
  try {
    config = loadServerConfig(env);
    settings = loadServeSettings(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`ha-module: ${error.message}`);
      return 2;
    }
    throw error;
  }
  let service: RunningService;
  try {
    service = await startService(config, settings, operations, timers);
  } catch (error) {
    if (error instanceof DataDirInUseError) {
      console.error(`ha-module: ${error.message}`);
      return 2;
    }
    throw error;
  }
  // Listen for the signals before the banner: whoever waits for it may signal at once.
  const stopRequested = new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  console.log(service.banner);
  await stopRequested;
  await service.close();
  console.log("ha-module stopped");
  return 0;
}

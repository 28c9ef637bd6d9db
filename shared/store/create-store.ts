import { TableClient, type TableServiceClientOptions } from "@azure/data-tables";
import { DefaultAzureCredential } from "@azure/identity";
import { ConfigError } from "../config/config-error.js";
import type { StoreConfig } from "../config/server-config.js";
import type { LeaseStore } from "./lease-store.js";
import { TableLeaseStore } from "./table-store.js";

/**
 * Client retries stay short: a heartbeat answered after T - I is worthless to its
 * caller, and each request's AbortSignal cuts retries off at the store time budget.
 */
const TABLE_CLIENT_OPTIONS: TableServiceClientOptions = {
  retryOptions: { maxRetries: 2, retryDelayInMs: 50, maxRetryDelayInMs: 400 },
};

/** A store that needs nothing but its clients, plus the optional start-up step. */
export interface ConfiguredStore {
  readonly store: LeaseStore;
  /** Creates the table or container when configured to (HA_STORE_CREATE). */
  prepare(options?: { abortSignal?: AbortSignal }): Promise<void>;
}

/** Builds the configured store's clients. No network I/O happens here. */
export function createConfiguredStore(config: StoreConfig): ConfiguredStore {
  if (config.kind === "cosmos") {
    throw new ConfigError("HA_STORE", "HA_STORE=cosmos is not available in this build; use HA_STORE=table.");
  }
  const connection = config.connection;
  let client: TableClient;
  switch (connection.mode) {
    case "connectionString":
      client = TableClient.fromConnectionString(connection.connectionString, config.tableName, {
        ...TABLE_CLIENT_OPTIONS,
        // Azurite and other local endpoints speak plain http; Azure endpoints are https.
        allowInsecureConnection: /TableEndpoint\s*=\s*http:|UseDevelopmentStorage=true/i.test(connection.connectionString),
      });
      break;
    case "identity":
      client = new TableClient(connection.endpoint, config.tableName, new DefaultAzureCredential(), TABLE_CLIENT_OPTIONS);
      break;
    case "embedded":
      throw new ConfigError(
        "HA_TABLE_CONNECTION_STRING",
        "No lease store is configured: set HA_TABLE_CONNECTION_STRING (keys or Azurite) or HA_TABLE_ENDPOINT (managed identity). `npm start` embeds Azurite when neither is set.",
      );
  }
  const store = new TableLeaseStore(client);
  return {
    store,
    prepare: async (options) => {
      if (config.createIfMissing) await store.createTableIfMissing(options);
    },
  };
}

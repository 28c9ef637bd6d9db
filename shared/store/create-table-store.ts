import { TableClient, type TableServiceClientOptions } from "@azure/data-tables";
import { DefaultAzureCredential } from "@azure/identity";
import { ConfigError } from "../config/config-error.js";
import { DEFAULT_MEMBERS_TABLE_NAME, type StoreConfig } from "../config/server-config.js";
import type { ConfiguredStore } from "./configured-store.js";
import { TableMemberStore } from "./members-table-store.js";
import { TableLeaseStore } from "./table-store.js";

/**
 * Client retries stay short: a heartbeat answered after T - I is worthless to its
 * caller, and each request's AbortSignal cuts retries off at the store time budget.
 */
const TABLE_CLIENT_OPTIONS: TableServiceClientOptions = {
  retryOptions: { maxRetries: 2, retryDelayInMs: 50, maxRetryDelayInMs: 400 },
};

/** Builds the Table store's clients. No network I/O happens here. */
export function createTableStore(config: Extract<StoreConfig, { kind: "table" }>): ConfiguredStore {
  const connection = config.connection;
  let tableClient: (tableName: string) => TableClient;
  switch (connection.mode) {
    case "connection-string":
      tableClient = (tableName) =>
        TableClient.fromConnectionString(connection.connectionString, tableName, {
          ...TABLE_CLIENT_OPTIONS,
          // Azurite and other local endpoints speak plain http; Azure endpoints are https.
          allowInsecureConnection: /TableEndpoint\s*=\s*http:|UseDevelopmentStorage=true/i.test(connection.connectionString),
        });
      break;
    case "identity": {
      // One credential for both tables: the same managed identity, one token cache.
      const credential = new DefaultAzureCredential();
      tableClient = (tableName) => new TableClient(connection.endpoint, tableName, credential, TABLE_CLIENT_OPTIONS);
      break;
    }
    case "embedded":
      throw new ConfigError(
        "HA_TABLE_CONNECTION_STRING",
        "No lease store is configured: set HA_TABLE_CONNECTION_STRING (keys or Azurite) or HA_TABLE_ENDPOINT (managed identity). `npm start` embeds Azurite when neither is set.",
      );
  }
  const store = new TableLeaseStore(tableClient(config.tableName));
  const members = new TableMemberStore(tableClient(config.membersTableName ?? DEFAULT_MEMBERS_TABLE_NAME));
  return {
    store,
    members,
    prepare: async (options) => {
      if (!config.createIfMissing) return;
      await store.createTableIfMissing(options);
      await members.createTableIfMissing(options);
    },
    close: () => undefined,
  };
}


import { TableClient, type TableServiceClientOptions } from "@azure/data-tables";
import { DefaultAzureCredential } from "@azure/identity";
import { ConfigError } from "../config/config-error.js";
import { DEFAULT_MEMBERS_TABLE_NAME, type StoreConfig } from "../config/server-config.js";
import type { ConfiguredStore } from "./configured-store.js";
import { TableMemberStore } from "./members-table-store.js";
import { TableLeaseStore } from "./table-store.js";
import { sdkRows, sharedKeyFromConnectionString, TABLE_RETRY, TableConnections, TableRest, type TableRowClient } from "./table-rest.js";

/**
 * Client retries stay short: a heartbeat answered after T - I is worthless to its
 * caller, and each request's AbortSignal cuts retries off at the store time budget.
 */
const TABLE_CLIENT_OPTIONS: TableServiceClientOptions = { retryOptions: TABLE_RETRY };

/**
 * Builds the Table store's clients: the SDK's TableClient, and for a heartbeat's calls the
 * store's own (table-rest.ts) on one keep-alive agent. No network I/O happens here.
 */
export function createTableStore(config: Extract<StoreConfig, { kind: "table" }>): ConfiguredStore {
  const connection = config.connection;
  const connections = new TableConnections();
  let tableClient: (tableName: string) => TableClient;
  let rows: (tableName: string, client: TableClient) => TableRowClient;
  switch (connection.mode) {
    case "connection-string": {
      const shared = sharedKeyFromConnectionString(connection.connectionString);
      // A connection string with a SAS token instead of a key stays on the SDK throughout:
      // the store's own client signs with the account key or a bearer token only.
      rows = shared === undefined ? (_tableName, client) => sdkRows(client) : (tableName) => new TableRest(shared.endpoint, tableName, shared.auth, connections);
      tableClient = (tableName) =>
        TableClient.fromConnectionString(connection.connectionString, tableName, {
          ...TABLE_CLIENT_OPTIONS,
          // Azurite and other local endpoints speak plain http; Azure endpoints are https.
          allowInsecureConnection: /TableEndpoint\s*=\s*http:|UseDevelopmentStorage=true/i.test(connection.connectionString),
        });
      break;
    }
    case "identity": {
      // One credential for both tables: the same managed identity, one token cache.
      const credential = new DefaultAzureCredential();
      tableClient = (tableName) => new TableClient(connection.endpoint, tableName, credential, TABLE_CLIENT_OPTIONS);
      rows = (tableName) => new TableRest(connection.endpoint, tableName, { kind: "bearer", credential }, connections);
      break;
    }
    case "embedded":
      throw new ConfigError(
        "HA_TABLE_CONNECTION_STRING",
        "No lease store is configured: set HA_TABLE_CONNECTION_STRING (keys or Azurite) or HA_TABLE_ENDPOINT (managed identity). `npm start` embeds Azurite when neither is set.",
      );
  }
  const table = (tableName: string) => {
    const client = tableClient(tableName);
    return [client, rows(tableName, client)] as const;
  };
  const store = new TableLeaseStore(...table(config.tableName));
  const members = new TableMemberStore(...table(config.membersTableName ?? DEFAULT_MEMBERS_TABLE_NAME));
  return {
    store,
    members,
    secrets: store,
    prepare: async (options) => {
      if (!config.createIfMissing) return;
      await store.createTableIfMissing(options);
      await members.createTableIfMissing(options);
    },
    close: () => connections.close(),
  };
}


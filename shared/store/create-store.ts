import { Agent } from "node:https";
import { CosmosClient, type CosmosClientOptions } from "@azure/cosmos";
import { TableClient, type TableServiceClientOptions } from "@azure/data-tables";
import { DefaultAzureCredential } from "@azure/identity";
import { ConfigError } from "../config/config-error.js";
import { DEFAULT_MEMBERS_CONTAINER_NAME, DEFAULT_MEMBERS_TABLE_NAME, type StoreConfig } from "../config/server-config.js";
import { CosmosLeaseStore } from "./cosmos-store.js";
import type { LeaseStore } from "../lease/lease-store.js";
import type { MemberStore } from "../members/member-store.js";
import { CosmosMemberStore } from "./members-cosmos-store.js";
import { TableMemberStore } from "./members-table-store.js";
import { TableLeaseStore } from "./table-store.js";

/**
 * Client retries stay short: a heartbeat answered after T - I is worthless to its
 * caller, and each request's AbortSignal cuts retries off at the store time budget.
 */
const TABLE_CLIENT_OPTIONS: TableServiceClientOptions = {
  retryOptions: { maxRetries: 2, retryDelayInMs: 50, maxRetryDelayInMs: 400 },
};

/**
 * The Cosmos SDK's own 429 retries are off: CosmosLeaseStore decides, within each call's
 * time budget, whether a retry-after hint is worth waiting for. The SDK would otherwise
 * wait up to 30 s across 9 retries, long after the heartbeat stopped mattering.
 */
const COSMOS_CONNECTION_POLICY: NonNullable<CosmosClientOptions["connectionPolicy"]> = {
  retryOptions: { maxRetryAttemptCount: 0, fixedRetryIntervalInMilliseconds: 0, maxWaitTimeInSeconds: 0 },
};

/** A store that needs nothing but its clients, plus the optional start-up step. */
export interface ConfiguredStore {
  readonly store: LeaseStore;
  /** Membership, beside the leases: a second table, or a second container partitioned on /group. */
  readonly members: MemberStore;
  /** Creates the tables or containers when configured to (HA_STORE_CREATE). */
  prepare(options?: { abortSignal?: AbortSignal }): Promise<void>;
  /** Releases the clients' timers and sockets. */
  close(): void;
}

/** What only the local host can give: never read from the environment. */
export interface CreateConfiguredStoreOptions {
  /**
   * The PEM certificate of a Cosmos emulator started by this process. When set, the
   * Cosmos client trusts exactly this certificate (and nothing else); verification of
   * chain, expiry and host name stays on. Production never sets it.
   */
  readonly trustedCosmosCertificate?: string;
}

/** Builds the configured store's clients. No network I/O happens here. */
export function createConfiguredStore(config: StoreConfig, options: CreateConfiguredStoreOptions = {}): ConfiguredStore {
  if (config.kind === "cosmos") return createCosmosStore(config, options);
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

function createCosmosStore(
  config: Extract<StoreConfig, { kind: "cosmos" }>,
  options: CreateConfiguredStoreOptions,
): ConfiguredStore {
  const connection = config.connection;
  if (connection.mode === "embedded") {
    throw new ConfigError(
      "HA_COSMOS_ENDPOINT",
      "HA_STORE=cosmos needs HA_COSMOS_ENDPOINT (with HA_COSMOS_KEY, or managed identity without it). Only `npm start` embeds a Cosmos emulator when it is not set.",
    );
  }
  const clientOptions: CosmosClientOptions = {
    endpoint: connection.endpoint,
    connectionPolicy: COSMOS_CONNECTION_POLICY,
    agent: verifyingAgent(options.trustedCosmosCertificate),
  };
  const client =
    connection.mode === "key"
      ? new CosmosClient({ ...clientOptions, key: connection.key })
      : new CosmosClient({ ...clientOptions, aadCredentials: new DefaultAzureCredential() });
  const database = client.database(config.databaseName);
  const store = new CosmosLeaseStore(database.container(config.containerName));
  const members = new CosmosMemberStore(database.container(config.membersContainerName ?? DEFAULT_MEMBERS_CONTAINER_NAME));
  return {
    store,
    members,
    prepare: async (prepareOptions) => {
      if (!config.createIfMissing) return;
      await store.createContainerIfMissing(prepareOptions);
      await members.createContainerIfMissing(prepareOptions);
    },
    close: () => client.dispose(),
  };
}

/**
 * The agent of every Cosmos client. `rejectUnauthorized: true` is explicit because Node
 * otherwise reads NODE_TLS_REJECT_UNAUTHORIZED, and no environment variable may switch
 * verification off. With a trusted certificate (an emulator this process started), it
 * is the only one trusted; otherwise Node's CA list applies, as in the SDK's own agent.
 */
function verifyingAgent(trustedCertificate: string | undefined): Agent {
  return new Agent({
    keepAlive: true,
    minVersion: "TLSv1.2",
    rejectUnauthorized: true,
    ...(trustedCertificate === undefined ? {} : { ca: [trustedCertificate] }),
  });
}

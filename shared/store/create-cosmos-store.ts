import { Agent } from "node:https";
import { CosmosClient, type CosmosClientOptions, type PluginConfig } from "@azure/cosmos";
import { DefaultAzureCredential } from "@azure/identity";
import { ConfigError } from "../config/config-error.js";
import { DEFAULT_MEMBERS_CONTAINER_NAME, type StoreConfig } from "../config/server-config.js";
import { BATCH_FAILURES_AS_RESPONSES } from "./cosmos-errors.js";
import { CosmosLeaseStore } from "./cosmos-store.js";
import type { ConfiguredStore, CreateConfiguredStoreOptions } from "./configured-store.js";
import { CosmosMemberStore } from "./members-cosmos-store.js";

/**
 * The Cosmos SDK's own 429 retries are off: CosmosLeaseStore decides, within each call's
 * time budget, whether a retry-after hint is worth waiting for. The SDK would otherwise
 * wait up to 30 s across 9 retries, long after the heartbeat stopped mattering.
 */
const COSMOS_CONNECTION_POLICY: NonNullable<CosmosClientOptions["connectionPolicy"]> = {
  retryOptions: { maxRetryAttemptCount: 0, fixedRetryIntervalInMilliseconds: 0, maxWaitTimeInSeconds: 0 },
};

/** Builds the Cosmos DB store's clients. No network I/O happens here. */
export function createCosmosStore(
  config: Extract<StoreConfig, { kind: "cosmos" }>,
  options: CreateConfiguredStoreOptions = {},
): ConfiguredStore {
  const connection = config.connection;
  if (connection.mode === "embedded") {
    throw new ConfigError(
      "HA_COSMOS_ENDPOINT",
      "HA_STORE=cosmos needs HA_COSMOS_ENDPOINT (with HA_COSMOS_KEY, or managed identity without it). Only `npm start` embeds a Cosmos emulator when it is not set.",
    );
  }
  // `plugins` is a hook the SDK reads but does not type (see BATCH_FAILURES_AS_RESPONSES).
  const clientOptions: CosmosClientOptions & { plugins: PluginConfig[] } = {
    endpoint: connection.endpoint,
    // Reads go to this instance's own region first (HA_COSMOS_PREFERRED_REGIONS); writes
    // always go to the account's write region, whatever the list says.
    connectionPolicy: config.preferredRegions === undefined ? COSMOS_CONNECTION_POLICY : { ...COSMOS_CONNECTION_POLICY, preferredLocations: [...config.preferredRegions] },
    agent: verifyingAgent(options.trustedCosmosCertificate),
    plugins: [BATCH_FAILURES_AS_RESPONSES],
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
    secrets: store,
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

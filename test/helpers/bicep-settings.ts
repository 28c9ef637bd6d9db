/**
 * The app settings infra/modules/function-app.bicep gives the function app (commonSettings and
 * tableSettings, or cosmosSettings), with example values: an Application Insights ingestion
 * endpoint nothing listens on, so nothing is exported anywhere. Tests and the cold-start
 * benchmark load the packaged app with them; test/infra/bicep.test.ts checks the names.
 */
const COMMON = {
  AzureWebJobsStorage__accountName: "hoststorage",
  AzureWebJobsStorage__credential: "managedidentity",
  AzureWebJobsStorage__clientId: "11111111-1111-1111-1111-111111111111",
  APPLICATIONINSIGHTS_CONNECTION_STRING: "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=http://127.0.0.1:9/;LiveEndpoint=http://127.0.0.1:9/",
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: "ClientId=11111111-1111-1111-1111-111111111111;Authorization=AAD",
  AZURE_CLIENT_ID: "11111111-1111-1111-1111-111111111111",
  AZURE_TOKEN_CREDENTIALS: "ManagedIdentityCredential",
  HA_INTERVAL_MS: "1000",
  HA_TIMEOUT_MS: "5000",
  HA_LEASE_SECRET: "0123456789abcdef0123456789abcdef0123456789abcdef",
  HA_STORE_CREATE: "false",
  HA_SWEEP_SCHEDULE: "*/5 * * * * *",
};

/** The table store variant (the template's default). */
export const BICEP_TABLE_SETTINGS: Readonly<Record<string, string>> = {
  ...COMMON,
  HA_STORE: "table",
  HA_TABLE_ENDPOINT: "https://acct.table.core.windows.net",
  HA_TABLE_NAME: "leases",
  HA_MEMBERS_TABLE_NAME: "members",
};

/** The Cosmos DB variant. */
export const BICEP_COSMOS_SETTINGS: Readonly<Record<string, string>> = {
  ...COMMON,
  HA_STORE: "cosmos",
  HA_COSMOS_ENDPOINT: "https://acct.documents.azure.com:443/",
  HA_COSMOS_DATABASE: "ha",
  HA_COSMOS_CONTAINER: "leases",
  HA_COSMOS_MEMBERS_CONTAINER: "members",
};

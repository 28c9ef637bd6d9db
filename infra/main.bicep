// ha-module on Azure: a Flex Consumption function app that runs as a user-assigned managed
// identity, its host storage, the lease and membership store (Table Storage, Cosmos DB or
// Azure Database for PostgreSQL, by `store`) and Application Insights. No resource accepts keys, and no output carries a secret.
// Deploy: see docs/deploy.md.

targetScope = 'resourceGroup'

@description('Azure region for every resource; it must offer Flex Consumption (az functionapp list-flexconsumption-locations).')
param location string = resourceGroup().location

@description('Short prefix of every resource name: 2-8 lowercase letters or digits.')
@minLength(2)
@maxLength(8)
param namePrefix string = 'ha'

@description('Where leases live: table (Azure Table Storage), cosmos (Azure Cosmos DB for NoSQL, serverless) or postgres (Azure Database for PostgreSQL, Flexible Server, Entra authentication only).')
@allowed(['table', 'cosmos', 'postgres'])
param store string = 'table'

@description('With store postgres: the server\'s compute size, a General Purpose or Memory Optimized SKU (high availability needs one).')
param postgresSkuName string = 'Standard_D2ds_v5'

@description('With store postgres: the compute tier of postgresSkuName.')
@allowed(['GeneralPurpose', 'MemoryOptimized'])
param postgresSkuTier string = 'GeneralPurpose'

@description('With store postgres: ZoneRedundant (a standby in another availability zone), SameZone (for regions without zones) or Disabled.')
@allowed(['ZoneRedundant', 'SameZone', 'Disabled'])
param postgresHighAvailability string = 'ZoneRedundant'

@description('Heartbeat interval I in milliseconds (HA_INTERVAL_MS). Clients learn it from every response.')
@minValue(1)
param intervalMs int = 1000

@description('Lease timeout T in milliseconds (HA_TIMEOUT_MS); must be greater than 2 x intervalMs.')
@minValue(3)
param timeoutMs int = 5000

@description('NCRONTAB schedule of the membership sweeper (HA_SWEEP_SCHEDULE): every N seconds as */N * * * * *, or every N minutes as 0 */N * * * *.')
param sweepSchedule string = '*/5 * * * * *'

@description('Key that signs lease tokens (HA_LEASE_SECRET): empty (the default) or at least 32 random characters. Empty: the app keeps one secret in the lease store, drawn by the first instance and read by every later one, so it outlives deployments and restarts and no setting carries it. Give one only to rotate it by hand (docs/deploy.md#rotating-keys).')
@secure()
param leaseSecret string = ''

@description('What a deploy or a settings change does to running instances (functionAppConfig.siteUpdateStrategy.type): Recreate (the platform default, generally available) restarts every instance at once; RollingUpdate (preview, not recommended for production by Microsoft) drains and replaces them in batches. See docs/deploy.md#upgrades.')
@allowed(['Recreate', 'RollingUpdate'])
param siteUpdateStrategy string = 'Recreate'

@description('Largest number of instances the function app scales out to.')
@minValue(1)
@maxValue(1000)
param maximumInstanceCount int = 40

@description('Memory of each function app instance in MB. Execution is billed per GB-second of it, and a busy instance is billed all the time, so the small size is the default; 2048 gives more CPU.')
@allowed([512, 2048, 4096])
param instanceMemoryMB int = 512

@description('Concurrent HTTP requests one instance serves before the platform adds another.')
@minValue(1)
@maxValue(1000)
param httpPerInstanceConcurrency int = 16

@description('Days Log Analytics keeps logs.')
@minValue(30)
@maxValue(730)
param logRetentionInDays int = 30

@description('Daily Log Analytics ingestion cap in GB (-1 for none). Every heartbeat is a logged request.')
param logDailyQuotaGb int = 1

@description('Accept Microsoft Entra tokens for this audience (HA_AUTH_AUDIENCE): the application id URI, such as api://ha-module, or client id of an app registration that stands for the service; workers\' managed identities request tokens for it. Empty: no tokens, only keys.')
param authAudience string = ''

@description('Who may write what (HA_GRANTS): a list of grants {callers, hold, revoke, join}, see docs/deploy.md#grants. Empty: every authenticated caller may write every role and group.')
param grants array = []

@description('Secret URI of a Key Vault secret holding named keys, name=key pairs separated by commas (HA_API_KEYS), for callers that cannot use an identity; the app reads it as its identity (grant it Key Vault Secrets User on the vault). Empty: none.')
param apiKeysSecretUri string = ''

@description('Tags applied to every resource.')
param tags object = {}

// Deterministic per resource group and prefix: redeploying updates the same resources.
// Storage and Cosmos DB account names allow lowercase letters and digits (and, for Cosmos
// DB, hyphens) only, so the prefix is normalised before use.
var prefix = toLower(replace(namePrefix, '-', ''))
var token = toLower(uniqueString(subscription().id, resourceGroup().id, prefix))
var names = {
  identity: '${prefix}-id-${token}'
  workspace: '${prefix}-log-${token}'
  appInsights: '${prefix}-appi-${token}'
  storage: take('st${prefix}${token}', 24)
  deploymentContainer: 'app-package'
  plan: '${prefix}-plan-${token}'
  functionApp: '${prefix}-func-${token}'
  cosmos: '${prefix}-cosmos-${token}'
  postgres: '${prefix}-pg-${token}'
}
// The names the app's configuration expects by default (shared/config/server-config.ts).
var leaseTableName = 'leases'
var cosmosDatabaseName = 'ha'
var cosmosContainerName = 'leases'
var membersTableName = 'members'
var cosmosMembersContainerName = 'members'
var postgresDatabaseName = 'ha'

module identity 'modules/identity.bicep' = {
  name: 'identity'
  params: {
    location: location
    name: names.identity
    tags: tags
  }
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  params: {
    location: location
    workspaceName: names.workspace
    appInsightsName: names.appInsights
    retentionInDays: logRetentionInDays
    dailyQuotaGb: logDailyQuotaGb
    principalId: identity.outputs.principalId
    tags: tags
  }
}

module hostStorage 'modules/host-storage.bicep' = {
  name: 'host-storage'
  params: {
    location: location
    name: names.storage
    deploymentContainerName: names.deploymentContainer
    principalId: identity.outputs.principalId
    tags: tags
  }
}

module tableStore 'modules/table-store.bicep' = if (store == 'table') {
  name: 'table-store'
  params: {
    storageAccountName: hostStorage.outputs.name
    tableName: leaseTableName
    membersTableName: membersTableName
    principalId: identity.outputs.principalId
  }
}

module cosmosStore 'modules/cosmos-store.bicep' = if (store == 'cosmos') {
  name: 'cosmos-store'
  params: {
    location: location
    accountName: names.cosmos
    databaseName: cosmosDatabaseName
    containerName: cosmosContainerName
    membersContainerName: cosmosMembersContainerName
    principalId: identity.outputs.principalId
    tags: tags
  }
}

module postgresStore 'modules/postgres-store.bicep' = if (store == 'postgres') {
  name: 'postgres-store'
  params: {
    location: location
    serverName: names.postgres
    databaseName: postgresDatabaseName
    skuName: postgresSkuName
    skuTier: postgresSkuTier
    highAvailability: postgresHighAvailability
    principalId: identity.outputs.principalId
    principalName: identity.outputs.name
    tags: tags
  }
}

module functionApp 'modules/function-app.bicep' = {
  name: 'function-app'
  // The app starts serving as soon as it exists: let its roles be in place first.
  dependsOn: [
    monitoring
    tableStore
    cosmosStore
    postgresStore
  ]
  params: {
    location: location
    planName: names.plan
    appName: names.functionApp
    identityId: identity.outputs.id
    identityClientId: identity.outputs.clientId
    storageAccountName: hostStorage.outputs.name
    deploymentContainerUrl: hostStorage.outputs.deploymentContainerUrl
    appInsightsName: monitoring.outputs.appInsightsName
    maximumInstanceCount: maximumInstanceCount
    instanceMemoryMB: instanceMemoryMB
    httpPerInstanceConcurrency: httpPerInstanceConcurrency
    intervalMs: intervalMs
    timeoutMs: timeoutMs
    leaseSecret: leaseSecret
    siteUpdateStrategy: siteUpdateStrategy
    store: store
    tableEndpoint: hostStorage.outputs.tableEndpoint
    tableName: leaseTableName
    membersTableName: membersTableName
    cosmosEndpoint: store == 'cosmos' ? cosmosStore.outputs.endpoint : ''
    cosmosDatabaseName: cosmosDatabaseName
    cosmosContainerName: cosmosContainerName
    cosmosMembersContainerName: cosmosMembersContainerName
    // The identity signs in as itself with an Entra token: the URL names the user, never a password.
    postgresUrl: store == 'postgres' ? 'postgres://${uriComponent(identity.outputs.name)}@${postgresStore.outputs.fqdn}:5432/${postgresDatabaseName}?sslmode=verify-full' : ''
    sweepSchedule: sweepSchedule
    authAudience: authAudience
    grants: grants
    apiKeysSecretUri: apiKeysSecretUri
    tags: tags
  }
}

@description('Base URL of the function app.')
output functionAppUrl string = 'https://${functionApp.outputs.defaultHostName}'

@description('Base URL of the REST API: what clients pass as --endpoint / HA_ENDPOINT.')
output apiBaseUrl string = 'https://${functionApp.outputs.defaultHostName}/api'

@description('Name of the function app.')
output functionAppName string = functionApp.outputs.name

@description('Name of the Flex Consumption plan.')
output planName string = functionApp.outputs.planName

@description('Name of the user-assigned managed identity the app runs as.')
output identityName string = identity.outputs.name

@description('Name of the host storage account (also the lease table account when store is table).')
output storageAccountName string = hostStorage.outputs.name

@description('The lease store in use.')
output store string = store

@description('Name of the lease table, or empty when store is cosmos.')
output leaseTableName string = store == 'table' ? leaseTableName : ''

@description('Name of the membership table, or empty when store is cosmos.')
output membersTableName string = store == 'table' ? membersTableName : ''

@description('Name of the Cosmos DB account, or empty when store is table.')
output cosmosAccountName string = store == 'cosmos' ? names.cosmos : ''

@description('Name of the PostgreSQL server, or empty unless store is postgres.')
output postgresServerName string = store == 'postgres' ? names.postgres : ''

@description('Name of the Application Insights component.')
output appInsightsName string = monitoring.outputs.appInsightsName

@description('Name of the Log Analytics workspace.')
output logAnalyticsWorkspaceName string = monitoring.outputs.workspaceName

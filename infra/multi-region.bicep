// ha-module in several Azure regions: one Cosmos DB account spanning them (one write region,
// service-managed failover), and in each region a Flex Consumption function app with its own
// host storage and Application Insights, reading its own region of the account first. One
// user-assigned identity runs every app. No resource accepts keys; no output carries a secret.
// What each consistency promises, and a region drill: docs/deploy.md#several-regions.

targetScope = 'resourceGroup'

@description('The regions, each offering Flex Consumption, as Cosmos DB names them (e.g. [\'West Europe\', \'North Europe\']): the first is the account\'s write region, the rest its failover order. Two or more.')
@minLength(2)
param regions array

@description('Cosmos DB default consistency: Session (one write region, service-managed failover: a failover may lose its last writes not yet replicated, and no epoch is ever handed out twice for it) or Strong (every write acknowledged by a majority of regions: give three or more, and a failover loses nothing).')
@allowed(['Session', 'Strong'])
param consistency string = 'Session'

@description('Largest autoscale throughput (RU/s) of the Cosmos DB database, shared by its containers and billed in every region.')
@minValue(1000)
param maxThroughput int = 1000

@description('Short prefix of every resource name: 2-8 lowercase letters or digits.')
@minLength(2)
@maxLength(8)
param namePrefix string = 'ha'

@description('Heartbeat interval I in milliseconds (HA_INTERVAL_MS). Clients learn it from every response.')
@minValue(1)
param intervalMs int = 1000

@description('Lease timeout T in milliseconds (HA_TIMEOUT_MS); must be greater than 2 x intervalMs.')
@minValue(3)
param timeoutMs int = 5000

@description('NCRONTAB schedule of the membership sweeper (HA_SWEEP_SCHEDULE).')
param sweepSchedule string = '*/5 * * * * *'

@description('Key that signs lease tokens (HA_LEASE_SECRET): empty (the default: one secret kept in the Cosmos DB account, read by every app of every region) or at least 32 random characters, the same for every region.')
@secure()
param leaseSecret string = ''

@description('What a deploy does to running instances (functionAppConfig.siteUpdateStrategy.type): Recreate or RollingUpdate (preview).')
@allowed(['Recreate', 'RollingUpdate'])
param siteUpdateStrategy string = 'Recreate'

@description('Largest number of instances each region\'s function app scales out to.')
@minValue(1)
@maxValue(1000)
param maximumInstanceCount int = 40

@description('Memory of each function app instance in MB.')
@allowed([512, 2048, 4096])
param instanceMemoryMB int = 512

@description('Concurrent HTTP requests one instance serves before the platform adds another.')
@minValue(1)
@maxValue(1000)
param httpPerInstanceConcurrency int = 16

@description('Days each region\'s Log Analytics workspace keeps logs.')
@minValue(30)
@maxValue(730)
param logRetentionInDays int = 30

@description('Daily Log Analytics ingestion cap in GB per region (-1 for none).')
param logDailyQuotaGb int = 1

@description('Accept Microsoft Entra tokens for this audience (HA_AUTH_AUDIENCE); empty: no tokens, only keys.')
param authAudience string = ''

@description('Who may write what (HA_GRANTS), the same in every region; see docs/deploy.md#grants.')
param grants array = []

@description('Secret URI of a Key Vault secret holding named keys (HA_API_KEYS); empty: none.')
param apiKeysSecretUri string = ''

@description('Tags applied to every resource.')
param tags object = {}

var prefix = toLower(replace(namePrefix, '-', ''))
var token = toLower(uniqueString(subscription().id, resourceGroup().id, prefix))
var cosmosDatabaseName = 'ha'
var cosmosContainerName = 'leases'
var cosmosMembersContainerName = 'members'

module identity 'modules/identity.bicep' = {
  name: 'identity'
  params: {
    location: regions[0]
    name: '${prefix}-id-${token}'
    tags: tags
  }
}

// Each region's telemetry stays in that region, so that a region's loss takes none of the
// others' logs with it.
module monitoring 'modules/monitoring.bicep' = [for (region, index) in regions: {
  name: 'monitoring-${index}'
  params: {
    location: region
    workspaceName: '${prefix}-log-${index}-${token}'
    appInsightsName: '${prefix}-appi-${index}-${token}'
    retentionInDays: logRetentionInDays
    dailyQuotaGb: logDailyQuotaGb
    principalId: identity.outputs.principalId
    tags: tags
  }
}]

module hostStorage 'modules/host-storage.bicep' = [for (region, index) in regions: {
  name: 'host-storage-${index}'
  params: {
    location: region
    name: take('st${prefix}${index}${token}', 24)
    deploymentContainerName: 'app-package'
    principalId: identity.outputs.principalId
    tags: tags
  }
}]

module cosmosStore 'modules/cosmos-store.bicep' = {
  name: 'cosmos-store'
  params: {
    location: regions[0]
    regions: regions
    consistency: consistency
    maxThroughput: maxThroughput
    accountName: '${prefix}-cosmos-${token}'
    databaseName: cosmosDatabaseName
    containerName: cosmosContainerName
    membersContainerName: cosmosMembersContainerName
    principalId: identity.outputs.principalId
    tags: tags
  }
}

module functionApp 'modules/function-app.bicep' = [for (region, index) in regions: {
  name: 'function-app-${index}'
  // The app starts serving as soon as it exists: let its roles be in place first.
  dependsOn: [
    monitoring
    cosmosStore
  ]
  params: {
    location: region
    planName: '${prefix}-plan-${index}-${token}'
    appName: '${prefix}-func-${index}-${token}'
    identityId: identity.outputs.id
    identityClientId: identity.outputs.clientId
    storageAccountName: hostStorage[index].outputs.name
    deploymentContainerUrl: hostStorage[index].outputs.deploymentContainerUrl
    appInsightsName: monitoring[index].outputs.appInsightsName
    maximumInstanceCount: maximumInstanceCount
    instanceMemoryMB: instanceMemoryMB
    httpPerInstanceConcurrency: httpPerInstanceConcurrency
    intervalMs: intervalMs
    timeoutMs: timeoutMs
    leaseSecret: leaseSecret
    siteUpdateStrategy: siteUpdateStrategy
    store: 'cosmos'
    tableEndpoint: ''
    tableName: 'leases'
    membersTableName: 'members'
    cosmosEndpoint: cosmosStore.outputs.endpoint
    cosmosDatabaseName: cosmosDatabaseName
    cosmosContainerName: cosmosContainerName
    cosmosMembersContainerName: cosmosMembersContainerName
    // Its own region first, then the others in failover order.
    cosmosPreferredRegions: join(concat([region], filter(regions, other => other != region)), ',')
    sweepSchedule: sweepSchedule
    authAudience: authAudience
    grants: grants
    apiKeysSecretUri: apiKeysSecretUri
    tags: tags
  }
}]

// Each region's REST API, in the order of regions (a lambda may not index a module collection).
var apiBaseUrls = [for (region, index) in regions: 'https://${functionApp[index].outputs.defaultHostName}/api']

@description('Per region, in the order of regions: the app\'s name, its REST API, and the endpoint list for the workers of that region (HA_ENDPOINT / --endpoint): its own region first, then the others in failover order.')
output regions array = [for (region, index) in regions: {
  region: region
  functionAppName: functionApp[index].outputs.name
  apiBaseUrl: apiBaseUrls[index]
  endpoints: join(concat([apiBaseUrls[index]], filter(apiBaseUrls, url => url != apiBaseUrls[index])), ',')
}]

@description('Name of the Cosmos DB account.')
output cosmosAccountName string = cosmosStore.outputs.accountName

@description('The Cosmos DB account\'s regions, the write region first.')
output cosmosRegions array = cosmosStore.outputs.regions

@description('The account\'s default consistency.')
output consistency string = consistency

@description('Name of the user-assigned managed identity every app runs as.')
output identityName string = identity.outputs.name

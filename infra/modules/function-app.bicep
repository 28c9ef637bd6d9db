// The function app on the Flex Consumption plan. It runs as the user-assigned identity and
// gets only endpoints in its settings: the code builds DefaultAzureCredential clients for
// them (shared/store/create-store.ts), so no key or connection string exists anywhere.

@description('Azure region of the plan and the app.')
param location string

@description('Name of the Flex Consumption plan.')
param planName string

@description('Name of the function app; also its default host name, so it must be globally unique.')
param appName string

@description('Resource id of the user-assigned identity the app runs as.')
param identityId string

@description('Client id of that identity, for DefaultAzureCredential and the Functions host.')
param identityClientId string

@description('Name of the host storage account (AzureWebJobsStorage).')
param storageAccountName string

@description('URL of the blob container Flex Consumption deploys the app package from.')
param deploymentContainerUrl string

@description('Name of the Application Insights component the app reports to.')
param appInsightsName string

@description('Largest number of instances the app scales out to.')
@minValue(1)
@maxValue(1000)
param maximumInstanceCount int

@description('Memory of each instance in MB; billing is per GB-second of it.')
@allowed([512, 2048, 4096])
param instanceMemoryMB int

@description('Concurrent HTTP requests one instance takes before the platform adds another.')
@minValue(1)
@maxValue(1000)
param httpPerInstanceConcurrency int

@description('Heartbeat interval I in milliseconds (HA_INTERVAL_MS).')
param intervalMs int

@description('Lease timeout T in milliseconds (HA_TIMEOUT_MS); must be greater than 2 x intervalMs.')
param timeoutMs int

@description('Key that signs lease tokens (HA_LEASE_SECRET); empty: the secret the app keeps in the lease store, which every instance shares.')
@secure()
param leaseSecret string

@description('How a site update (a deploy, a settings change) replaces running instances: Recreate or RollingUpdate (preview).')
@allowed(['Recreate', 'RollingUpdate'])
param siteUpdateStrategy string

@description('Which lease store the app uses (HA_STORE).')
@allowed(['table', 'cosmos', 'postgres'])
param store string

@description('Table service endpoint of the lease table (HA_TABLE_ENDPOINT); used when store is table.')
param tableEndpoint string

@description('Name of the lease table (HA_TABLE_NAME).')
param tableName string

@description('Name of the membership table (HA_MEMBERS_TABLE_NAME).')
param membersTableName string

@description('Cosmos DB account endpoint (HA_COSMOS_ENDPOINT); used when store is cosmos.')
param cosmosEndpoint string

@description('Cosmos DB database name (HA_COSMOS_DATABASE).')
param cosmosDatabaseName string

@description('Cosmos DB container name (HA_COSMOS_CONTAINER).')
param cosmosContainerName string

@description('Cosmos DB membership container name (HA_COSMOS_MEMBERS_CONTAINER).')
param cosmosMembersContainerName string

@description('PostgreSQL URL without a password (HA_POSTGRES_URL); used when store is postgres.')
param postgresUrl string = ''
@description('The Cosmos DB regions this app reads from first, comma-separated, its own first (HA_COSMOS_PREFERRED_REGIONS); empty: the write region. Set by multi-region.bicep.')
param cosmosPreferredRegions string = ''

@description('NCRONTAB schedule of the membership sweeper timer (HA_SWEEP_SCHEDULE).')
param sweepSchedule string

@description('Audience of the Microsoft Entra tokens the app accepts (HA_AUTH_AUDIENCE); empty for none.')
param authAudience string

@description('The grants (HA_GRANTS); empty for none.')
param grants array

@description('Key Vault secret URI of the named keys (HA_API_KEYS); empty for none.')
param apiKeysSecretUri string

@description('Tags applied to the plan and the app.')
param tags object

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: appInsightsName
}

resource plan 'Microsoft.Web/serverfarms@2024-04-01' = {
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    name: 'FC1'
    tier: 'FlexConsumption'
  }
  properties: {
    reserved: true
  }
}

resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: appName
  location: location
  tags: tags
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    // Key Vault references in the app settings (HA_API_KEYS) are resolved as this identity.
    keyVaultReferenceIdentity: identityId
    httpsOnly: true
    clientAffinityEnabled: false
    siteConfig: {
      minTlsVersion: '1.2'
      scmMinTlsVersion: '1.2'
      ftpsState: 'Disabled'
      http20Enabled: true
    }
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: deploymentContainerUrl
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      scaleAndConcurrency: {
        maximumInstanceCount: maximumInstanceCount
        instanceMemoryMB: instanceMemoryMB
        triggers: {
          http: {
            perInstanceConcurrency: httpPerInstanceConcurrency
          }
        }
      }
      runtime: {
        name: 'node'
        version: '22'
      }
      // Recreate by default: RollingUpdate is in preview. Under Recreate every instance
      // restarts at once and the service is out for everyone for the restart; primaries keep
      // their roles through it (sticky recovery) and, with ride-through, their work
      // (docs/deploy.md#upgrades). Takes effect from the site update after the one that sets it.
      siteUpdateStrategy: {
        type: siteUpdateStrategy
      }
    }
  }
}

// Settings every store needs. Flex Consumption takes the language and the Functions
// version from functionAppConfig.runtime, so FUNCTIONS_WORKER_RUNTIME is not set here.
var commonSettings = {
  AzureWebJobsStorage__accountName: storageAccountName
  AzureWebJobsStorage__credential: 'managedidentity'
  AzureWebJobsStorage__clientId: identityClientId
  // Telemetry (host.json telemetryMode OpenTelemetry; docs/operations.md): the host and the
  // app's Azure Monitor OpenTelemetry set-up both export to this component when the
  // connection string is set, authenticating as the identity (the component takes Entra
  // tokens only); the app reads ClientId here for its ManagedIdentityCredential.
  APPLICATIONINSIGHTS_CONNECTION_STRING: appInsights.properties.ConnectionString
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=${identityClientId};Authorization=AAD'
  // DefaultAzureCredential picks the user-assigned identity by this client id; pinning the
  // chain to managed identity skips probing developer tools on a cold start.
  AZURE_CLIENT_ID: identityClientId
  AZURE_TOKEN_CREDENTIALS: 'ManagedIdentityCredential'
  HA_INTERVAL_MS: string(intervalMs)
  HA_TIMEOUT_MS: string(timeoutMs)
  HA_LEASE_SECRET: leaseSecret
  // The sweepMembers timer trigger's schedule; the app also derives the sweep period from it.
  HA_SWEEP_SCHEDULE: sweepSchedule
  // Who may call (docs/deploy.md#how-workers-authenticate). A blank setting is unset: with all
  // four blank the platform checks function keys, as before; any of them makes the app check
  // callers itself. Tokens of this tenant for the audience; named keys only from Key Vault.
  HA_AUTH_TENANT_ID: empty(authAudience) ? '' : tenant().tenantId
  HA_AUTH_AUDIENCE: authAudience
  HA_GRANTS: empty(grants) ? '' : string(grants)
  HA_API_KEYS: empty(apiKeysSecretUri) ? '' : '@Microsoft.KeyVault(SecretUri=${apiKeysSecretUri})'
}

// The template creates the tables or containers, so the app never needs to (HA_STORE_CREATE
// false); ARM cannot run SQL, so on PostgreSQL the app creates its schema and tables itself.
var tableSettings = {
  HA_STORE: 'table'
  HA_STORE_CREATE: 'false'
  HA_TABLE_ENDPOINT: tableEndpoint
  HA_TABLE_NAME: tableName
  HA_MEMBERS_TABLE_NAME: membersTableName
}

var cosmosSettings = {
  HA_STORE: 'cosmos'
  HA_STORE_CREATE: 'false'
  HA_COSMOS_ENDPOINT: cosmosEndpoint
  HA_COSMOS_DATABASE: cosmosDatabaseName
  HA_COSMOS_CONTAINER: cosmosContainerName
  HA_COSMOS_MEMBERS_CONTAINER: cosmosMembersContainerName
  HA_COSMOS_PREFERRED_REGIONS: cosmosPreferredRegions
}

var postgresSettings = {
  HA_STORE: 'postgres'
  HA_STORE_CREATE: 'true'
  HA_POSTGRES_URL: postgresUrl
  // Each new connection's password is a token of the app's identity (AZURE_CLIENT_ID).
  HA_POSTGRES_AUTH: 'entra'
}

resource appSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: union(commonSettings, store == 'table' ? tableSettings : store == 'cosmos' ? cosmosSettings : postgresSettings)
}

// Publishing with a user name and password (FTP, or basic auth on the SCM site) stays off;
// deployments authenticate with Microsoft Entra ID.
resource ftpPublishing 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = {
  parent: site
  name: 'ftp'
  properties: {
    allow: false
  }
}

resource scmPublishing 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = {
  parent: site
  name: 'scm'
  properties: {
    allow: false
  }
}

output name string = site.name
output defaultHostName string = site.properties.defaultHostName
output planName string = plan.name

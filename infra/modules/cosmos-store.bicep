// The lease store on Azure Cosmos DB for NoSQL: an account with keys disabled, the database,
// the lease and the members containers, and a data-plane role assignment for the app's
// identity. Safety rests on ETag-conditional writes, which always go to the write
// region, so Session consistency is enough and reads stay at the cheapest RU price.
// One region (main.bicep): serverless. Several (multi-region.bicep): one write region with
// service-managed failover, provisioned autoscale throughput (a serverless account has one
// region), Session or Strong consistency: docs/stores.md#several-regions says what each
// promises and what a failover may lose.

@description('Azure region of the Cosmos DB account.')
param location string

@description('Name of the Cosmos DB account: 3-44 lowercase letters, digits and hyphens, globally unique.')
@minLength(3)
@maxLength(44)
param accountName string

@description('Name of the SQL database (HA_COSMOS_DATABASE).')
param databaseName string

@description('Name of the lease container (HA_COSMOS_CONTAINER).')
param containerName string

@description('Name of the membership container (HA_COSMOS_MEMBERS_CONTAINER), partitioned on /group.')
param membersContainerName string

@description('Principal (object) id of the function app identity.')
param principalId string

@description('The account\'s regions in failover order, the first the write region (e.g. [\'West Europe\', \'North Europe\']); default: location alone.')
param regions array = [location]

@description('Default consistency: Session (a failover of the write region may lose its last writes not yet replicated) or Strong (a write is acknowledged by a majority of regions: three or more, for a failover that loses nothing).')
@allowed(['Session', 'Strong'])
param consistency string = 'Session'

@description('Largest autoscale throughput (RU/s) of the database of a multi-region account, shared by its containers.')
@minValue(1000)
param maxThroughput int = 1000

@description('Tags applied to the account.')
param tags object

var multiRegion = length(regions) > 1

// Cosmos DB built-in data-plane role "Cosmos DB Built-in Data Contributor".
var cosmosDataContributorRoleId = '00000000-0000-0000-0000-000000000002'

resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' = {
  name: accountName
  location: location
  tags: tags
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    locations: [for (region, index) in regions: {
      locationName: region
      failoverPriority: index
      isZoneRedundant: false
    }]
    // Service-managed failover: when the write region goes away, Cosmos DB makes the next
    // region of the list the write region. Never several write regions: two regions that
    // both accept a conditional write would both grant one lease.
    enableAutomaticFailover: multiRegion
    enableMultipleWriteLocations: false
    consistencyPolicy: {
      defaultConsistencyLevel: consistency
    }
    capabilities: multiRegion ? [] : [
      {
        name: 'EnableServerless'
      }
    ]
    disableLocalAuth: true
    disableKeyBasedMetadataWriteAccess: true
    minimalTlsVersion: 'Tls12'
    publicNetworkAccess: 'Enabled'
  }
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2024-11-15' = {
  parent: account
  name: databaseName
  properties: {
    resource: {
      id: databaseName
    }
    options: multiRegion ? {
      autoscaleSettings: {
        maxThroughput: maxThroughput
      }
    } : {}
  }
}

// Leases are read and written by id within their utype partition; listing every role's
// primary reads the whole (small) container without a filter. No query needs an index,
// so no path is indexed and every write costs fewer RUs.
resource container 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  parent: database
  name: containerName
  properties: {
    resource: {
      id: containerName
      partitionKey: {
        paths: [
          '/utype'
        ]
        kind: 'Hash'
      }
      indexingPolicy: {
        indexingMode: 'consistent'
        automatic: true
        includedPaths: []
        excludedPaths: [
          {
            path: '/*'
          }
        ]
      }
    }
  }
}

// Membership: a group is one logical partition; its rows and its sweep marker are read by
// one partition query filtering on /group (and on id, which is always indexed), so /group
// is the one path indexed.
resource membersContainer 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  parent: database
  name: membersContainerName
  properties: {
    resource: {
      id: membersContainerName
      partitionKey: {
        paths: [
          '/group'
        ]
        kind: 'Hash'
      }
      indexingPolicy: {
        indexingMode: 'consistent'
        automatic: true
        includedPaths: [
          {
            path: '/group/?'
          }
        ]
        excludedPaths: [
          {
            path: '/*'
          }
        ]
      }
    }
  }
}

// Scoped to the account: it covers the lease and the members containers alike.
resource dataContributor 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = {
  parent: account
  name: guid(account.id, principalId, cosmosDataContributorRoleId)
  properties: {
    roleDefinitionId: '${account.id}/sqlRoleDefinitions/${cosmosDataContributorRoleId}'
    principalId: principalId
    scope: account.id
  }
}

output accountName string = account.name
output endpoint string = account.properties.documentEndpoint
output databaseName string = database.name
output containerName string = container.name
output membersContainerName string = membersContainer.name
output regions array = regions

// The lease store on Azure Database for PostgreSQL, Flexible Server: Microsoft Entra
// authentication only (no password to leak), zone-redundant high availability where the
// region has availability zones (a standby in another zone, synchronously replicated: a
// commit is answered once both have it, so a failover loses no answered write), the
// database, and the app's identity as its Entra administrator, the user the app signs in as
// with a token (HA_POSTGRES_AUTH=entra). The app creates its schema and tables at start-up
// (ARM cannot run SQL); docs/stores.md has the DDL and grants for a narrower user.

@description('Azure region of the server.')
param location string

@description('Name of the server: 3-63 lowercase letters, digits and hyphens, globally unique.')
@minLength(3)
@maxLength(63)
param serverName string

@description('Name of the database (the path of HA_POSTGRES_URL).')
param databaseName string

@description('Compute size: a General Purpose or Memory Optimized SKU (Burstable servers cannot have high availability).')
param skuName string

@description('Compute tier of skuName.')
@allowed(['GeneralPurpose', 'MemoryOptimized'])
param skuTier string

@description('High availability: ZoneRedundant (the standby in another zone; regions with availability zones), SameZone (regions without), or Disabled.')
@allowed(['ZoneRedundant', 'SameZone', 'Disabled'])
param highAvailability string

@description('Principal (object) id of the function app identity.')
param principalId string

@description('Name of the function app identity: the PostgreSQL user it signs in as.')
param principalName string

@description('Tags applied to the server.')
param tags object

resource server 'Microsoft.DBforPostgreSQL/flexibleServers@2024-08-01' = {
  name: serverName
  location: location
  tags: tags
  sku: {
    name: skuName
    tier: skuTier
  }
  properties: {
    version: '17'
    storage: {
      storageSizeGB: 32
      autoGrow: 'Enabled'
    }
    authConfig: {
      activeDirectoryAuth: 'Enabled'
      passwordAuth: 'Disabled'
      tenantId: tenant().tenantId
    }
    highAvailability: {
      mode: highAvailability
    }
    backup: {
      backupRetentionDays: 7
      geoRedundantBackup: 'Disabled'
    }
    network: {
      publicNetworkAccess: 'Enabled'
    }
  }
}

// Only from Azure's own addresses (the Flex Consumption app has no fixed outbound address
// without VNet integration); every connection still needs TLS and an Entra token.
resource allowAzure 'Microsoft.DBforPostgreSQL/flexibleServers/firewallRules@2024-08-01' = {
  parent: server
  name: 'AllowAzureServices'
  properties: {
    startIpAddress: '0.0.0.0'
    endIpAddress: '0.0.0.0'
  }
}

resource database 'Microsoft.DBforPostgreSQL/flexibleServers/databases@2024-08-01' = {
  parent: server
  name: databaseName
  properties: {
    charset: 'UTF8'
    collation: 'en_US.utf8'
  }
}

// The app's identity signs in as this Entra principal (a PostgreSQL role of the same name).
resource appAdministrator 'Microsoft.DBforPostgreSQL/flexibleServers/administrators@2024-08-01' = {
  parent: server
  name: principalId
  dependsOn: [
    database
  ]
  properties: {
    principalType: 'ServicePrincipal'
    principalName: principalName
    tenantId: tenant().tenantId
  }
}

output serverName string = server.name
output fqdn string = server.properties.fullyQualifiedDomainName
output databaseName string = database.name

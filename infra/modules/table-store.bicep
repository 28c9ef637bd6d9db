// The lease store on Azure Table Storage: the leases table and the members table in the
// host storage account, and a role assignment scoped to each of those two tables, so the
// app's identity can read and write leases and members and nothing else in Table Storage.

@description('Name of the existing storage account that holds the table.')
param storageAccountName string

@description('Name of the lease table (HA_TABLE_NAME).')
param tableName string

@description('Name of the membership table (HA_MEMBERS_TABLE_NAME): PartitionKey = group, RowKey = member.')
param membersTableName string

@description('Principal (object) id of the function app identity.')
param principalId string

// Built-in role "Storage Table Data Contributor".
var storageTableDataContributorRoleId = '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource tableService 'Microsoft.Storage/storageAccounts/tableServices@2023-05-01' = {
  parent: storage
  name: 'default'
}

resource leaseTable 'Microsoft.Storage/storageAccounts/tableServices/tables@2023-05-01' = {
  parent: tableService
  name: tableName
}

resource tableDataContributor 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(leaseTable.id, principalId, storageTableDataContributorRoleId)
  scope: leaseTable
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', storageTableDataContributorRoleId)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

resource membersTable 'Microsoft.Storage/storageAccounts/tableServices/tables@2023-05-01' = {
  parent: tableService
  name: membersTableName
}

resource membersTableDataContributor 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(membersTable.id, principalId, storageTableDataContributorRoleId)
  scope: membersTable
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', storageTableDataContributorRoleId)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

output tableName string = leaseTable.name
output membersTableName string = membersTable.name

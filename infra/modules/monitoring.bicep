// Log Analytics workspace and the Application Insights component that stores into it.
// Ingestion accepts Microsoft Entra tokens only (DisableLocalAuth), so the app's identity
// gets Monitoring Metrics Publisher on the component.

@description('Azure region of the workspace and the component.')
param location string

@description('Name of the Log Analytics workspace.')
param workspaceName string

@description('Name of the Application Insights component.')
param appInsightsName string

@description('Days the workspace keeps logs (30 is included in the ingestion price).')
@minValue(30)
@maxValue(730)
param retentionInDays int

@description('Daily ingestion cap in GB; -1 removes the cap. Every heartbeat is a logged request, so the cap bounds a runaway bill.')
param dailyQuotaGb int

@description('Principal (object) id of the function app identity.')
param principalId string

@description('Tags applied to both resources.')
param tags object

// Built-in role "Monitoring Metrics Publisher": lets the identity send telemetry.
var monitoringMetricsPublisherRoleId = '3913510d-42f4-4e42-8a64-420c390055eb'

resource workspace 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: workspaceName
  location: location
  tags: tags
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: retentionInDays
    workspaceCapping: {
      dailyQuotaGb: dailyQuotaGb
    }
    features: {
      enableLogAccessUsingOnlyResourcePermissions: true
    }
  }
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: appInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: workspace.id
    IngestionMode: 'LogAnalytics'
    DisableLocalAuth: true
  }
}

resource metricsPublisher 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(appInsights.id, principalId, monitoringMetricsPublisherRoleId)
  scope: appInsights
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', monitoringMetricsPublisherRoleId)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

output workspaceName string = workspace.name
output appInsightsName string = appInsights.name

// The one identity the function app runs as. It is user-assigned so that every role
// assignment it needs can exist before the app starts: the host's first storage call
// then already has its permissions, instead of failing until role propagation catches up.

@description('Azure region of the identity.')
param location string

@description('Name of the user-assigned managed identity.')
param name string

@description('Tags applied to the identity.')
param tags object

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: name
  location: location
  tags: tags
}

output id string = identity.id
output name string = identity.name
output principalId string = identity.properties.principalId
output clientId string = identity.properties.clientId

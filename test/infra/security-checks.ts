/**
 * The security and platform properties the deployment promises (docs/deploy.md), each as a check
 * over parsed Bicep files that returns what it found wrong, one message per violation.
 * bicep.test.ts runs every check on infra/ (expecting nothing) and on a broken fixture
 * (expecting each check to object), so a check that cannot fail does not go unnoticed.
 */
import path from "node:path";
import {
  call,
  descendants,
  expressionWords,
  literalValue,
  modules,
  objectEntries,
  objectVariants,
  outputs,
  parameters,
  property,
  renderString,
  resolveVariable,
  resources,
  resourcesOfType,
  stringValue,
  type BicepFile,
  type BicepResource,
  type Node,
} from "./bicep-tree.js";

export type Check = (files: readonly BicepFile[]) => string[];

/** Built-in Azure role definition ids (learn.microsoft.com, "Azure built-in roles"). */
export const ROLE = {
  storageBlobDataOwner: "b7e6dc6d-f1e8-4753-8033-0f276bb0955b",
  storageTableDataContributor: "0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3",
  monitoringMetricsPublisher: "3913510d-42f4-4e42-8a64-420c390055eb",
} as const;
/** Cosmos DB's data-plane role "Cosmos DB Built-in Data Contributor". */
export const COSMOS_DATA_CONTRIBUTOR = "00000000-0000-0000-0000-000000000002";

const where = (resource: BicepResource): string => `${resource.file.path} ${resource.symbol} (${resource.type})`;

/** Reports unless `resource.body` has a literal `expected` at `keys`. */
function expectLiteral(
  problems: string[],
  resource: BicepResource,
  keys: string[],
  expected: string | number | boolean,
): void {
  const node = property(resource.body, ...keys);
  const actual = literalValue(node);
  if (actual !== expected) {
    problems.push(`${where(resource)}: ${keys.join(".")} must be ${JSON.stringify(expected)}, found ${node === undefined ? "nothing" : node.text}`);
  }
}

function expectSome(problems: string[], found: readonly unknown[], what: string): void {
  if (found.length === 0) problems.push(`no ${what} is declared`);
}

/** No shared keys: storage refuses Shared Key auth, Cosmos DB and App Insights refuse local keys. */
export const noSharedKeys: Check = (files) => {
  const problems: string[] = [];
  const accounts = resourcesOfType(files, "Microsoft.Storage/storageAccounts");
  expectSome(problems, accounts, "storage account");
  for (const account of accounts) expectLiteral(problems, account, ["properties", "allowSharedKeyAccess"], false);
  for (const cosmos of resourcesOfType(files, "Microsoft.DocumentDB/databaseAccounts")) {
    expectLiteral(problems, cosmos, ["properties", "disableLocalAuth"], true);
  }
  for (const insights of resourcesOfType(files, "Microsoft.Insights/components")) {
    expectLiteral(problems, insights, ["properties", "DisableLocalAuth"], true);
  }
  for (const node of files.flatMap((file) => descendants(file.root, ["call_expression"]))) {
    const name = call(node)?.name ?? "";
    if (/^list/i.test(name)) problems.push(`a ${name}() call reads keys at line ${node.startPosition.row + 1}: use the managed identity instead`);
  }
  return problems;
};

/** Storage: no anonymous blob access, TLS 1.2 and HTTPS only. */
export const storageHardened: Check = (files) => {
  const problems: string[] = [];
  for (const account of resourcesOfType(files, "Microsoft.Storage/storageAccounts")) {
    expectLiteral(problems, account, ["properties", "allowBlobPublicAccess"], false);
    expectLiteral(problems, account, ["properties", "minimumTlsVersion"], "TLS1_2");
    expectLiteral(problems, account, ["properties", "supportsHttpsTrafficOnly"], true);
  }
  for (const container of resourcesOfType(files, "Microsoft.Storage/storageAccounts/blobServices/containers")) {
    expectLiteral(problems, container, ["properties", "publicAccess"], "None");
  }
  return problems;
};

/** The function app: HTTPS only, TLS 1.2, FTP and basic-auth publishing off. */
export const functionAppHardened: Check = (files) => {
  const problems: string[] = [];
  const sites = resourcesOfType(files, "Microsoft.Web/sites");
  expectSome(problems, sites, "function app (Microsoft.Web/sites)");
  for (const site of sites) {
    expectLiteral(problems, site, ["properties", "httpsOnly"], true);
    expectLiteral(problems, site, ["properties", "siteConfig", "minTlsVersion"], "1.2");
    expectLiteral(problems, site, ["properties", "siteConfig", "ftpsState"], "Disabled");
    const identityType = stringValue(property(site.body, "identity", "type")) ?? "";
    if (!/Assigned/.test(identityType)) problems.push(`${where(site)}: identity.type must give the app a managed identity, found "${identityType}"`);
  }
  const policies = resourcesOfType(files, "Microsoft.Web/sites/basicPublishingCredentialsPolicies");
  for (const method of ["ftp", "scm"]) {
    const policy = policies.find((candidate) => stringValue(property(candidate.body, "name")) === method);
    if (policy === undefined) problems.push(`no basicPublishingCredentialsPolicies '${method}' turns ${method} basic authentication off`);
    else expectLiteral(problems, policy, ["properties", "allow"], false);
  }
  return problems;
};

/** Flex Consumption (FC1), Linux, Node.js 22, package deployed from blob storage with an identity. */
export const flexConsumptionNode22: Check = (files) => {
  const problems: string[] = [];
  const plans = resourcesOfType(files, "Microsoft.Web/serverfarms");
  expectSome(problems, plans, "App Service plan");
  for (const plan of plans) {
    expectLiteral(problems, plan, ["sku", "name"], "FC1");
    expectLiteral(problems, plan, ["sku", "tier"], "FlexConsumption");
    expectLiteral(problems, plan, ["properties", "reserved"], true);
  }
  for (const site of resourcesOfType(files, "Microsoft.Web/sites")) {
    const kind = stringValue(property(site.body, "kind")) ?? "";
    if (!kind.split(",").includes("linux")) problems.push(`${where(site)}: kind must include linux, found "${kind}"`);
    const config = ["properties", "functionAppConfig"];
    expectLiteral(problems, site, [...config, "runtime", "name"], "node");
    expectLiteral(problems, site, [...config, "runtime", "version"], "22");
    expectLiteral(problems, site, [...config, "deployment", "storage", "type"], "blobContainer");
    const auth = stringValue(property(site.body, ...config, "deployment", "storage", "authentication", "type")) ?? "";
    if (auth !== "UserAssignedIdentity" && auth !== "SystemAssignedIdentity") {
      problems.push(`${where(site)}: the deployment container must be reached with a managed identity, found authentication type "${auth}"`);
    }
    for (const key of ["maximumInstanceCount", "instanceMemoryMB"]) {
      if (property(site.body, ...config, "scaleAndConcurrency", key) === undefined) {
        problems.push(`${where(site)}: functionAppConfig.scaleAndConcurrency.${key} is not set`);
      }
    }
    // What a deploy does to running primaries is the template's choice, written down
    // (docs/deploy.md#upgrades), never the platform's default left implicit.
    const strategy = property(site.body, ...config, "siteUpdateStrategy", "type");
    const strategies = strategy === undefined ? [] : literalValue(strategy) !== undefined ? [literalValue(strategy)] : allowedOf(site.file, strategy.text);
    if (strategies.length === 0 || strategies.some((value) => value !== "Recreate" && value !== "RollingUpdate")) {
      problems.push(`${where(site)}: functionAppConfig.siteUpdateStrategy.type must be 'Recreate' or 'RollingUpdate' (or a parameter allowing only those), found ${strategy?.text ?? "nothing"}`);
    }
  }
  return problems;
};

/** The `@allowed([...])` values of the parameter `name` of `file`; none when it has no such decorator. */
function allowedOf(file: BicepFile, name: string): unknown[] {
  const parameter = parameters(file).find((candidate) => candidate.name === name);
  const decorators = parameter?.node.previousNamedSibling;
  if (decorators?.type !== "decorators") return [];
  const allowed = decorators.namedChildren.map((decorator) => call(decorator.namedChildren[0])).find((found) => found?.name === "allowed");
  return allowed?.args[0]?.namedChildren.map(literalValue) ?? [];
}

/**
 * Nothing the app is given changes by itself from one deployment to the next: no parameter
 * default draws newGuid() or utcNow(). A setting that changes is a site update, which
 * restarts every instance under Recreate; a lease-token secret drawn anew would also turn
 * every outstanding token's release into a revoke (docs/deploy.md#upgrades).
 */
export const stableAcrossDeployments: Check = (files) => {
  const problems: string[] = [];
  for (const file of files) {
    for (const parameter of parameters(file)) {
      const drawn = parameter.value === undefined ? [] : [parameter.value, ...descendants(parameter.value, ["call_expression"])].map((node) => call(node)?.name).filter((name) => name === "newGuid" || name === "utcNow");
      if (drawn.length > 0) problems.push(`${file.path}: param ${parameter.name} draws a new value on every deployment (${drawn[0]}())`);
    }
  }
  return problems;
};

/** The role id a roleDefinitionId expression names, whether written inline or through a var. */
function roleIdOf(file: BicepFile, roleDefinitionId: Node | undefined): string | undefined {
  const node = resolveVariable(file, roleDefinitionId);
  const subscriptionResourceId = call(node);
  if (subscriptionResourceId?.name !== "subscriptionResourceId") return undefined;
  const [type, id] = subscriptionResourceId.args;
  if (stringValue(type) !== "Microsoft.Authorization/roleDefinitions") return undefined;
  return stringValue(resolveVariable(file, id));
}

/** `guid(scope.id, principalId, roleId)`: stable per scope, principal and role, so redeploys do not collide. */
function guidNameProblems(resource: BicepResource, scope: string, roleId: string | undefined): string[] {
  const name = call(property(resource.body, "name"));
  if (name?.name !== "guid") return [`${where(resource)}: name must be guid(scope, principal, role)`];
  const args = name.args.map((arg) => resolveVariable(resource.file, arg));
  const problems: string[] = [];
  if (!args.some((arg) => arg?.text === `${scope}.id`)) problems.push(`${where(resource)}: guid() must include ${scope}.id, the assignment's scope`);
  if (!args.some((arg) => arg?.text === "principalId")) problems.push(`${where(resource)}: guid() must include the principal id`);
  if (roleId !== undefined && !args.some((arg) => stringValue(arg) === roleId)) problems.push(`${where(resource)}: guid() must include the role id`);
  return problems;
}

/** The app's identity holds exactly the data roles it needs, each assignment named by guid(). */
export const roleAssignments: Check = (files) => {
  const problems: string[] = [];
  const assignments = resourcesOfType(files, "Microsoft.Authorization/roleAssignments").map((resource) => {
    const scope = property(resource.body, "scope")?.text ?? "";
    const scopeType = resources(resource.file).find((candidate) => candidate.symbol === scope)?.type ?? "";
    const roleId = roleIdOf(resource.file, property(resource.body, "properties", "roleDefinitionId"));
    return { resource, scope, scopeType, roleId };
  });
  for (const { resource, scope, roleId } of assignments) {
    if (roleId === undefined) problems.push(`${where(resource)}: roleDefinitionId must be subscriptionResourceId('Microsoft.Authorization/roleDefinitions', <built-in role id>)`);
    if (property(resource.body, "properties", "principalId")?.text !== "principalId") problems.push(`${where(resource)}: principalId must be the app identity's principalId`);
    expectLiteral(problems, resource, ["properties", "principalType"], "ServicePrincipal");
    problems.push(...guidNameProblems(resource, scope, roleId));
  }
  const required: { role: string; scopeType: string; what: string }[] = [
    { role: ROLE.storageBlobDataOwner, scopeType: "Microsoft.Storage/storageAccounts", what: "Storage Blob Data Owner on the host storage account" },
    { role: ROLE.storageTableDataContributor, scopeType: "Microsoft.Storage/storageAccounts/tableServices/tables", what: "Storage Table Data Contributor on the lease table" },
    { role: ROLE.monitoringMetricsPublisher, scopeType: "Microsoft.Insights/components", what: "Monitoring Metrics Publisher on Application Insights" },
  ];
  for (const { role, scopeType, what } of required) {
    if (!assignments.some((found) => found.roleId === role && found.scopeType.toLowerCase() === scopeType.toLowerCase())) {
      problems.push(`missing role assignment: ${what} (${role})`);
    }
  }
  // Every table the app uses (leases, members) needs its own assignment: one scoped to the
  // lease table alone would leave the members table unwritable.
  for (const table of resourcesOfType(files, "Microsoft.Storage/storageAccounts/tableServices/tables")) {
    if (!assignments.some((found) => found.roleId === ROLE.storageTableDataContributor && found.resource.file === table.file && found.scope === table.symbol)) {
      problems.push(`${where(table)}: no Storage Table Data Contributor role assignment is scoped to this table`);
    }
  }
  const cosmosAssignments = resourcesOfType(files, "Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments");
  const cosmosRole = `/sqlRoleDefinitions/${COSMOS_DATA_CONTRIBUTOR}`;
  if (!cosmosAssignments.some((resource) => renderString(resource.file, property(resource.body, "properties", "roleDefinitionId"))?.endsWith(cosmosRole))) {
    problems.push(`missing Cosmos DB SQL role assignment: Cosmos DB Built-in Data Contributor (${COSMOS_DATA_CONTRIBUTOR})`);
  }
  for (const resource of cosmosAssignments) {
    const parent = property(resource.body, "parent")?.text ?? "";
    problems.push(...guidNameProblems(resource, parent, undefined));
    if (property(resource.body, "properties", "principalId")?.text !== "principalId") problems.push(`${where(resource)}: principalId must be the app identity's principalId`);
  }
  return problems;
};

/**
 * The Cosmos DB containers: the lease container partitioned by utype with nothing indexed,
 * and the members container partitioned by group with only /group indexed (its partition
 * queries filter on it). A container partitioned on /group is judged as the members one.
 */
export const cosmosContainers: Check = (files) => {
  const problems: string[] = [];
  const containers = resourcesOfType(files, "Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers");
  expectSome(problems, containers, "Cosmos DB container");
  const resource = ["properties", "resource"];
  const partitionKeys = (container: BicepResource): string[] => property(container.body, ...resource, "partitionKey", "paths")?.namedChildren.map((path) => stringValue(path) ?? "") ?? [];
  for (const container of containers) {
    const paths = property(container.body, ...resource, "partitionKey", "paths");
    const keys = partitionKeys(container);
    const members = keys.length === 1 && keys[0] === "/group";
    if (!members && (keys.length !== 1 || keys[0] !== "/utype")) problems.push(`${where(container)}: partitionKey.paths must be ['/utype'] (leases) or ['/group'] (members), found ${paths?.text ?? "nothing"}`);
    const included = property(container.body, ...resource, "indexingPolicy", "includedPaths");
    const includedPaths = included?.type === "array" ? included.namedChildren.filter((child) => child.type !== "comment").map((entry) => stringValue(property(entry, "path"))) : undefined;
    const expectedIncluded = members ? ["/group/?"] : [];
    if (includedPaths === undefined || includedPaths.join(",") !== expectedIncluded.join(",")) {
      problems.push(`${where(container)}: indexingPolicy.includedPaths must be [${expectedIncluded.map((path) => `{path: '${path}'}`).join(", ")}], found ${included?.text ?? "nothing"}`);
    }
    const excluded = property(container.body, ...resource, "indexingPolicy", "excludedPaths");
    const excludedPaths = excluded?.namedChildren.map((entry) => stringValue(property(entry, "path"))) ?? [];
    if (!excludedPaths.includes("/*")) problems.push(`${where(container)}: indexingPolicy.excludedPaths must exclude '/*'`);
  }
  if (containers.length > 0 && !containers.some((container) => partitionKeys(container).join(",") === "/group")) {
    problems.push("no members container partitioned on /group is declared");
  }
  return problems;
};

const SECRET_WORD = /key|secret|password|connectionstring|connection_string|sas|token|credential/i;

/** No output hands out a key, secret or connection string. */
export const noSecretOutputs: Check = (files) => {
  const problems: string[] = [];
  for (const output of files.flatMap(outputs)) {
    if (SECRET_WORD.test(output.name)) problems.push(`${output.file.path}: output '${output.name}' is named like a secret`);
    const words = output.value === undefined ? [] : expressionWords(output.value);
    const secretWord = words.find((word) => SECRET_WORD.test(word));
    if (secretWord !== undefined) problems.push(`${output.file.path}: output '${output.name}' reads '${secretWord}'`);
    if (output.value !== undefined && descendants(output.value, ["call_expression"]).some((node) => /^list/i.test(call(node)?.name ?? ""))) {
      problems.push(`${output.file.path}: output '${output.name}' calls a list*() function`);
    }
  }
  return problems;
};

/** The app's settings carry endpoints only: no key, no connection string, identity-based host storage. */
export const appSettingsKeyless: Check = (files) => {
  const problems: string[] = [];
  const settingsResources = resourcesOfType(files, "Microsoft.Web/sites/config").filter(
    (resource) => stringValue(property(resource.body, "name")) === "appsettings",
  );
  expectSome(problems, settingsResources, "appsettings resource");
  for (const resource of settingsResources) {
    for (const settings of objectVariants(resource.file, property(resource.body, "properties"))) {
      for (const name of settings.keys()) {
        if (name === "APPLICATIONINSIGHTS_CONNECTION_STRING") continue; // an ingestion address; ingestion itself needs Entra ID (DisableLocalAuth)
        if (isKeyVaultReference(settings.get(name)?.text ?? "")) continue; // the secret stays in Key Vault
        if (/KEY|CONNECTION_?STRING|PASSWORD|SAS/i.test(name) || name === "AzureWebJobsStorage") {
          problems.push(`${where(resource)}: app setting ${name} carries a key or connection string`);
        }
      }
      if (stringValue(settings.get("AzureWebJobsStorage__credential")) !== "managedidentity") {
        problems.push(`${where(resource)}: AzureWebJobsStorage__credential must be 'managedidentity'`);
      }
      if (settings.get("AzureWebJobsStorage__accountName") === undefined) {
        problems.push(`${where(resource)}: AzureWebJobsStorage__accountName must be set (identity-based host storage)`);
      }
      for (const name of ["HA_INTERVAL_MS", "HA_TIMEOUT_MS", "HA_STORE"]) {
        if (settings.get(name) === undefined) problems.push(`${where(resource)}: app setting ${name} is missing`);
      }
    }
  }
  return problems;
};

/** A setting whose value is only a Key Vault reference to a secret URI parameter (or blank when that parameter is empty). */
function isKeyVaultReference(value: string): boolean {
  const reference = String.raw`'@Microsoft\.KeyVault\(SecretUri=\$\{[A-Za-z]+\}\)'`;
  return new RegExp(String.raw`^(empty\([A-Za-z]+\) \? '' : )?${reference}$`).test(value);
}

/** Every parameter, in every file, says what it is for. */
export const parametersDescribed: Check = (files) =>
  files
    .flatMap(parameters)
    .filter((parameter) => !parameter.decorators.includes("description"))
    .map((parameter) => `${parameter.file.path}: param ${parameter.name} has no @description`);

/** `store` picks the lease store: 'table' deploys the Table module, 'cosmos' the Cosmos one. */
export const storeSelection: Check = (files) => {
  const problems: string[] = [];
  const main = files.find((file) => file.path.endsWith("main.bicep"));
  if (main === undefined) return ["no main.bicep"];
  const store = parameters(main).find((parameter) => parameter.name === "store");
  const allowedNode = store?.node.previousNamedSibling;
  const allowed = allowedNode?.type === "decorators"
    ? allowedNode.namedChildren.map((decorator) => call(decorator.namedChildren[0])).find((found) => found?.name === "allowed")
    : undefined;
  const choices = allowed?.args[0]?.namedChildren.map(stringValue).sort() ?? [];
  if (choices.join(",") !== "cosmos,postgres,table") problems.push(`main.bicep: param store must be @allowed(['table', 'cosmos', 'postgres']), found ${JSON.stringify(choices)}`);
  for (const [choice, source] of [["table", "table-store.bicep"], ["cosmos", "cosmos-store.bicep"], ["postgres", "postgres-store.bicep"]] as const) {
    const module = modules(main).find((candidate) => candidate.source.endsWith(source));
    const condition = module?.condition?.namedChildren[0];
    const sides = condition?.type === "binary_expression"
      ? [condition.childForFieldName("left"), condition.childForFieldName("right")]
      : [];
    if (module === undefined || !sides.some((side) => side?.text === "store") || !sides.some((side) => stringValue(side) === choice)) {
      problems.push(`main.bicep: module ${source} must be deployed if (store == '${choice}')`);
    }
  }
  return problems;
};

/**
 * Azure Database for PostgreSQL (store postgres): Microsoft Entra authentication only (no
 * password to leak), high availability zone-redundant by default (a parameter that allows
 * it, or the literal), the app's identity an Entra principal of the server, and the app
 * signing in with tokens: HA_POSTGRES_AUTH 'entra', a URL without a password that verifies
 * the server's certificate.
 */
export const postgresHardened: Check = (files) => {
  const problems: string[] = [];
  const servers = resourcesOfType(files, "Microsoft.DBforPostgreSQL/flexibleServers");
  expectSome(problems, servers, "PostgreSQL flexible server");
  for (const server of servers) {
    expectLiteral(problems, server, ["properties", "authConfig", "passwordAuth"], "Disabled");
    expectLiteral(problems, server, ["properties", "authConfig", "activeDirectoryAuth"], "Enabled");
    if (property(server.body, "properties", "administratorLoginPassword") !== undefined) problems.push(`${where(server)}: properties.administratorLoginPassword must not be set (Entra authentication only)`);
    const mode = property(server.body, "properties", "highAvailability", "mode");
    const zoneRedundant = literalValue(mode) === "ZoneRedundant" || (mode !== undefined && allowedOf(server.file, mode.text).includes("ZoneRedundant"));
    if (!zoneRedundant) problems.push(`${where(server)}: properties.highAvailability.mode must be 'ZoneRedundant' or a parameter allowing it, found ${mode?.text ?? "nothing"}`);
  }
  const admins = resourcesOfType(files, "Microsoft.DBforPostgreSQL/flexibleServers/administrators");
  expectSome(problems, admins, "Entra administrator of the PostgreSQL server (the app's identity)");
  for (const admin of admins) expectLiteral(problems, admin, ["properties", "principalType"], "ServicePrincipal");
  const settingsResources = resourcesOfType(files, "Microsoft.Web/sites/config").filter((resource) => stringValue(property(resource.body, "name")) === "appsettings");
  for (const resource of settingsResources) {
    const variants = objectVariants(resource.file, property(resource.body, "properties")).filter((settings) => stringValue(settings.get("HA_STORE")) === "postgres");
    if (variants.length === 0) problems.push(`${where(resource)}: no app settings variant with HA_STORE 'postgres'`);
    for (const settings of variants) {
      if (stringValue(settings.get("HA_POSTGRES_AUTH")) !== "entra") problems.push(`${where(resource)}: app setting HA_POSTGRES_AUTH must be 'entra', found ${settings.get("HA_POSTGRES_AUTH")?.text ?? "nothing"}`);
      if (settings.get("HA_POSTGRES_PASSWORD") !== undefined) problems.push(`${where(resource)}: app setting HA_POSTGRES_PASSWORD carries a password`);
    }
  }
  // Where the URL is built (main.bicep): the user only, and sslmode=verify-full. A module
  // call whose store is fixed to another (multi-region.bicep's Cosmos DB) builds none.
  for (const file of files) {
    for (const module of modules(file).filter((candidate) => candidate.source.endsWith("function-app.bicep"))) {
      const store = stringValue(property(property(module.body, "params"), "store"));
      if (store !== undefined && store !== "postgres") continue;
      const url = property(property(module.body, "params"), "postgresUrl")?.text ?? "";
      if (!/postgres:\/\/\$\{[^}]+\}@/.test(url) || !url.includes("sslmode=verify-full")) problems.push(`${file.path}: postgresUrl must be postgres://<identity>@<server>…?sslmode=verify-full (a user, no password, the certificate verified), found ${url || "nothing"}`);
    }
  }
  return problems;
};

export const CHECKS = {
  noSharedKeys,
  storageHardened,
  functionAppHardened,
  flexConsumptionNode22,
  roleAssignments,
  cosmosContainers,
  noSecretOutputs,
  appSettingsKeyless,
  stableAcrossDeployments,
  parametersDescribed,
  storeSelection,
  postgresHardened,
} as const satisfies Record<string, Check>;

/** The app settings of the template's appsettings resource, one map per store choice. */
export function appSettingsVariants(files: readonly BicepFile[]): Map<string, Node>[] {
  const resource = resourcesOfType(files, "Microsoft.Web/sites/config").find(
    (candidate) => stringValue(property(candidate.body, "name")) === "appsettings",
  );
  if (resource === undefined) throw new Error("no appsettings resource in the templates");
  return objectVariants(resource.file, property(resource.body, "properties"));
}

/**
 * What the Bicep compiler would catch and CI cannot run: each module gets exactly the
 * parameters its file declares (every one without a default), and every
 * `<module>.outputs.<name>` names an output the module file declares.
 */
export const moduleWiring: Check = (files) => {
  const problems: string[] = [];
  for (const file of files) {
    for (const module of modules(file)) {
      const targetPath = path.posix.normalize(path.posix.join(path.posix.dirname(file.path), module.source));
      const target = files.find((candidate) => candidate.path === targetPath);
      if (target === undefined) {
        problems.push(`${file.path}: module ${module.symbol} points at ${targetPath}, which is not among the parsed files`);
        continue;
      }
      const declared = parameters(target);
      const params = property(module.body, "params");
      const given = new Set(params === undefined ? [] : objectEntries(params).map(([key]) => key));
      for (const name of given) {
        if (!declared.some((parameter) => parameter.name === name)) problems.push(`${file.path}: module ${module.symbol} passes ${name}, which ${targetPath} does not declare`);
      }
      for (const parameter of declared) {
        if (parameter.value === undefined && !given.has(parameter.name)) problems.push(`${file.path}: module ${module.symbol} does not pass ${parameter.name}, which ${targetPath} requires`);
      }
      const declaredOutputs = new Set(outputs(target).map((output) => output.name));
      for (const reference of descendants(file.root, ["member_expression"])) {
        const owner = reference.childForFieldName("object");
        // `m.outputs.x`, or `m[i].outputs.x` for a module deployed in a loop.
        const of = owner?.type === "member_expression" ? owner.childForFieldName("object") : undefined;
        const symbol = of?.type === "subscript_expression" ? of.namedChildren[0]?.text : of?.text;
        if (owner?.type !== "member_expression" || owner.childForFieldName("property")?.text !== "outputs" || symbol !== module.symbol) continue;
        const name = reference.childForFieldName("property")?.text ?? "";
        if (!declaredOutputs.has(name)) problems.push(`${file.path}:${reference.startPosition.row + 1}: ${module.symbol}.outputs.${name} is not an output of ${targetPath}`);
      }
    }
  }
  return problems;
};

/**
 * CI checks for infra/: no Bicep compiler is available offline, so the templates are parsed
 * with tree-sitter-bicep and their security properties read from the parse tree.
 * Each check also runs on a deliberately broken fixture and must object to it.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import {
  call,
  literalValue,
  listBicepFiles,
  modules,
  parameters,
  parseBicep,
  parseBicepFile,
  property,
  repoPath,
  resourcesOfType,
  stringValue,
  syntaxProblems,
  type BicepFile,
  type Node,
} from "./bicep-tree.js";
import { BICEP_COSMOS_SETTINGS, BICEP_POSTGRES_SETTINGS, BICEP_TABLE_SETTINGS } from "../helpers/bicep-settings.js";
import { appSettingsVariants, CHECKS, moduleWiring, type Check } from "./security-checks.js";

const INFRA_DIR = repoPath("infra");
let infra: BicepFile[];
let insecure: BicepFile[];

beforeAll(async () => {
  infra = await Promise.all(listBicepFiles(INFRA_DIR).map(parseBicepFile));
  insecure = [await parseBicepFile(repoPath("test", "infra", "fixtures", "insecure", "main.bicep"))];
});

describe("infra/*.bicep syntax", () => {
  it("finds the main template and its modules", () => {
    const paths = infra.map((file) => file.path);
    expect(paths).toContain("infra/main.bicep");
    expect(paths.filter((file) => file.startsWith("infra/modules/")).length).toBeGreaterThanOrEqual(4);
  });

  it("parses every file without a syntax error", () => {
    expect(infra.flatMap(syntaxProblems)).toEqual([]);
  });

  it("reports the errors in a broken file, with their position", async () => {
    const broken = await parseBicepFile(repoPath("test", "infra", "fixtures", "syntax-error.bicep"));
    const problems = syntaxProblems(broken);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]).toMatchObject({ path: "test/infra/fixtures/syntax-error.bicep", line: 4 });
  });

  it("parses the insecure fixture cleanly, so its failures below are the checks' doing", () => {
    expect(insecure.flatMap(syntaxProblems)).toEqual([]);
  });
});

/** For each check: fragments of the messages it must produce for the insecure fixture. */
const EXPECTED_ON_FIXTURE: Record<keyof typeof CHECKS, string[]> = {
  noSharedKeys: [
    "properties.allowSharedKeyAccess must be false, found true",
    "properties.disableLocalAuth must be true, found false",
    "properties.DisableLocalAuth must be true, found nothing",
    "a listKeys() call reads keys",
  ],
  storageHardened: [
    "properties.allowBlobPublicAccess must be false",
    `properties.minimumTlsVersion must be "TLS1_2", found 'TLS1_0'`,
    "properties.supportsHttpsTrafficOnly must be true",
    `properties.publicAccess must be "None", found 'Blob'`,
  ],
  functionAppHardened: [
    "properties.httpsOnly must be true, found false",
    `properties.siteConfig.minTlsVersion must be "1.2", found '1.0'`,
    `properties.siteConfig.ftpsState must be "Disabled", found 'AllAllowed'`,
    "identity.type must give the app a managed identity",
    "no basicPublishingCredentialsPolicies 'ftp'",
    "no basicPublishingCredentialsPolicies 'scm'",
  ],
  flexConsumptionNode22: [
    `sku.name must be "FC1", found 'Y1'`,
    `sku.tier must be "FlexConsumption", found 'Dynamic'`,
    `kind must include linux, found "functionapp"`,
    `properties.functionAppConfig.runtime.version must be "22", found '20'`,
    `authentication type "StorageAccountConnectionString"`,
    "scaleAndConcurrency.maximumInstanceCount is not set",
    "functionAppConfig.siteUpdateStrategy.type must be 'Recreate' or 'RollingUpdate' (or a parameter allowing only those), found 'BlueGreen'",
  ],
  roleAssignments: [
    "blobOwner (Microsoft.Authorization/roleAssignments): roleDefinitionId must be subscriptionResourceId(",
    "blobOwner (Microsoft.Authorization/roleAssignments): name must be guid(scope, principal, role)",
    `properties.principalType must be "ServicePrincipal", found nothing`,
    "missing role assignment: Storage Blob Data Owner on the host storage account",
    "missing role assignment: Storage Table Data Contributor on the lease table",
    "missing role assignment: Monitoring Metrics Publisher",
    "missing Cosmos DB SQL role assignment",
    "members (Microsoft.Storage/storageAccounts/tableServices/tables): no Storage Table Data Contributor role assignment is scoped to this table",
  ],
  cosmosContainers: [
    "partitionKey.paths must be ['/utype'] (leases) or ['/group'] (members)",
    "indexingPolicy.includedPaths must be []",
    "indexingPolicy.excludedPaths must exclude '/*'",
    "no members container partitioned on /group is declared",
  ],
  noSecretOutputs: ["output 'storageKey' is named like a secret", "output 'storageKey' reads 'listKeys'", "output 'storageKey' calls a list*() function"],
  appSettingsKeyless: [
    "app setting AzureWebJobsStorage carries a key or connection string",
    "app setting HA_COSMOS_KEY carries a key or connection string",
    "app setting HA_API_KEYS carries a key or connection string",
    "AzureWebJobsStorage__credential must be 'managedidentity'",
    "app setting HA_INTERVAL_MS is missing",
  ],
  stableAcrossDeployments: ["test/infra/fixtures/insecure/main.bicep: param leaseSecret draws a new value on every deployment (newGuid())"],
  parametersDescribed: ["param location has no @description"],
  storeSelection: ["param store must be @allowed(['table', 'cosmos', 'postgres'])", "module table-store.bicep must be deployed if (store == 'table')", "module postgres-store.bicep must be deployed if (store == 'postgres')"],
  postgresHardened: [
    `properties.authConfig.passwordAuth must be "Disabled", found 'Enabled'`,
    `properties.authConfig.activeDirectoryAuth must be "Enabled", found nothing`,
    "properties.administratorLoginPassword must not be set",
    "properties.highAvailability.mode must be 'ZoneRedundant' or a parameter allowing it, found 'Disabled'",
    "no Entra administrator of the PostgreSQL server (the app's identity) is declared",
    "no app settings variant with HA_STORE 'postgres'",
  ],
};

describe.each(Object.entries(CHECKS) as [keyof typeof CHECKS, Check][])("security check %s", (name, check) => {
  it("passes on infra/", () => {
    expect(check(infra)).toEqual([]);
  });

  it("fails on the insecure fixture, naming each problem", () => {
    const problems = check(insecure);
    for (const fragment of EXPECTED_ON_FIXTURE[name]) {
      expect(problems, `expected a problem containing: ${fragment}`).toEqual(
        expect.arrayContaining([expect.stringContaining(fragment)]),
      );
    }
  });
});

describe("module wiring", () => {
  it("passes every module exactly its parameters and reads only outputs it declares", () => {
    expect(moduleWiring(infra)).toEqual([]);
  });

  it("reports an unknown parameter, a missing one and an undeclared output", async () => {
    const wrongMain = await parseBicep(
      [
        "module identity 'modules/identity.bicep' = {",
        "  name: 'identity'",
        "  params: {",
        "    location: 'westeurope'",
        "    nmae: 'typo'",
        "  }",
        "}",
        "output id string = identity.outputs.resourceId",
      ].join("\n"),
      "infra/main.bicep",
    );
    const modulesOnly = infra.filter((file) => file.path !== "infra/main.bicep");
    expect(moduleWiring([wrongMain, ...modulesOnly])).toEqual([
      "infra/main.bicep: module identity passes nmae, which infra/modules/identity.bicep does not declare",
      "infra/main.bicep: module identity does not pass name, which infra/modules/identity.bicep requires",
      "infra/main.bicep: module identity does not pass tags, which infra/modules/identity.bicep requires",
      "infra/main.bicep:8: identity.outputs.resourceId is not an output of infra/modules/identity.bicep",
    ]);
  });
});

describe("what the template deploys", () => {
  it("has one app-settings variant per store, selected by HA_STORE", () => {
    const stores = appSettingsVariants(infra).map((settings) => stringValue(settings.get("HA_STORE")));
    expect(stores.sort()).toEqual(["cosmos", "postgres", "table"]);
  });

  it("gives the app its membership settings: the members table or container, and the sweeper's schedule", () => {
    for (const settings of appSettingsVariants(infra)) {
      const store = stringValue(settings.get("HA_STORE"));
      // PostgreSQL keeps members in the tables of its schema: no setting names them.
      if (store !== "postgres") expect(settings.get(store === "table" ? "HA_MEMBERS_TABLE_NAME" : "HA_COSMOS_MEMBERS_CONTAINER")?.text, `${store}`).toBeDefined();
      expect(settings.get("HA_SWEEP_SCHEDULE")?.text).toBe("sweepSchedule");
    }
    const main = infra.find((file) => file.path === "infra/main.bicep")!;
    expect(parameters(main).find((parameter) => parameter.name === "sweepSchedule")?.value?.text).toBe("'*/5 * * * * *'");
  });

  it("gives the app what its OpenTelemetry export needs: the component's connection string and Entra authentication as its identity", () => {
    for (const settings of appSettingsVariants(infra)) {
      expect(settings.get("APPLICATIONINSIGHTS_CONNECTION_STRING")?.text).toBe("appInsights.properties.ConnectionString");
      expect(settings.get("APPLICATIONINSIGHTS_AUTHENTICATION_STRING")?.text).toBe("'ClientId=${identityClientId};Authorization=AAD'");
    }
  });

  it("gives the app its auth settings: tokens of this tenant for authAudience, the grants parameter, named keys only as a Key Vault reference resolved as the app's identity", () => {
    for (const settings of appSettingsVariants(infra)) {
      expect(settings.get("HA_AUTH_TENANT_ID")?.text).toBe("empty(authAudience) ? '' : tenant().tenantId");
      expect(settings.get("HA_AUTH_AUDIENCE")?.text).toBe("authAudience");
      expect(settings.get("HA_GRANTS")?.text).toBe("empty(grants) ? '' : string(grants)");
      expect(settings.get("HA_API_KEYS")?.text).toBe("empty(apiKeysSecretUri) ? '' : '@Microsoft.KeyVault(SecretUri=${apiKeysSecretUri})'");
    }
    const [site] = resourcesOfType(infra, "Microsoft.Web/sites");
    expect(property(site!.body, "properties", "keyVaultReferenceIdentity")?.text).toBe("identityId");
    const main = infra.find((file) => file.path === "infra/main.bicep")!;
    const defaults = Object.fromEntries(parameters(main).map((parameter) => [parameter.name, parameter.value?.text]));
    // The defaults keep the platform's function keys: every auth setting blank.
    expect({ authAudience: defaults["authAudience"], grants: defaults["grants"], apiKeysSecretUri: defaults["apiKeysSecretUri"] }).toEqual({ authAudience: "''", grants: "[]", apiKeysSecretUri: "''" });
  });

  it("is what the packaged app is tested and measured with: test/helpers/bicep-settings.json names every app setting of each variant", () => {
    const given = { table: BICEP_TABLE_SETTINGS, cosmos: BICEP_COSMOS_SETTINGS, postgres: BICEP_POSTGRES_SETTINGS };
    for (const settings of appSettingsVariants(infra)) {
      const store = stringValue(settings.get("HA_STORE")) as keyof typeof given;
      expect(Object.keys(given[store]).sort(), store).toEqual([...settings.keys()].sort());
    }
  });

  it("sets the site update strategy from siteUpdateStrategy: Recreate by default, RollingUpdate (preview) only when asked", () => {
    const [site] = resourcesOfType(infra, "Microsoft.Web/sites");
    expect(property(site!.body, "properties", "functionAppConfig", "siteUpdateStrategy", "type")?.text).toBe("siteUpdateStrategy");
    const main = infra.find((file) => file.path === "infra/main.bicep")!;
    const parameter = parameters(main).find((candidate) => candidate.name === "siteUpdateStrategy")!;
    expect(parameter.value?.text).toBe("'Recreate'");
    expect(allowedValues(parameter.node)).toEqual(["Recreate", "RollingUpdate"]);
    expect(property(property(modules(main).find((module) => module.source.endsWith("function-app.bicep"))!.body, "params"), "siteUpdateStrategy")?.text).toBe("siteUpdateStrategy");
  });

  it("takes only parameters main.bicep declares from main.parameters.json, with allowed values", () => {
    const main = infra.find((file) => file.path === "infra/main.bicep")!;
    const declared = new Map(parameters(main).map((parameter) => [parameter.name, parameter]));
    const file = JSON.parse(readFileSync(repoPath("infra", "main.parameters.json"), "utf8")) as {
      parameters: Record<string, { value: unknown }>;
    };
    for (const [name, { value }] of Object.entries(file.parameters)) {
      const parameter = declared.get(name);
      expect(parameter, `main.bicep has no param ${name}`).toBeDefined();
      const allowed = allowedValues(parameter!.node);
      if (allowed !== undefined) expect(allowed, `${name} = ${JSON.stringify(value)}`).toContain(value);
    }
    expect(Object.keys(file.parameters)).not.toContain("leaseSecret");
  });

  it("creates the leases and members tables and the Cosmos DB containers the app's defaults name", () => {
    const tables = resourcesOfType(infra, "Microsoft.Storage/storageAccounts/tableServices/tables");
    expect(tables.map((table) => `${table.file.path} ${table.symbol}`)).toEqual(["infra/modules/table-store.bicep leaseTable", "infra/modules/table-store.bicep membersTable"]);
    const containers = resourcesOfType(infra, "Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers");
    expect(containers.map((container) => property(container.body, "properties", "resource", "partitionKey", "paths")?.namedChildren.map(stringValue))).toEqual([["/utype"], ["/group"]]);
    const cosmos = resourcesOfType(infra, "Microsoft.DocumentDB/databaseAccounts");
    expect(cosmos.map((account) => property(account.body, "properties", "capabilities")?.text)).toEqual([
      expect.stringContaining("EnableServerless"),
    ]);
  });
});

/** The values of a declaration's `@allowed([...])` decorator, if it has one. */
function allowedValues(declaration: Node): unknown[] | undefined {
  const decorators = declaration.previousNamedSibling;
  if (decorators?.type !== "decorators") return undefined;
  const allowed = decorators.namedChildren.map((decorator) => call(decorator.namedChildren[0])).find((found) => found?.name === "allowed");
  return allowed?.args[0]?.namedChildren.map(literalValue);
}

describe("the PostgreSQL variant (store postgres)", () => {
  it("deploys Flexible Server zone-redundant by default, Entra only, the app's identity its user, and the app's URL names that user and verifies TLS", () => {
    const main = infra.find((file) => file.path === "infra/main.bicep")!;
    const defaults = Object.fromEntries(parameters(main).map((parameter) => [parameter.name, parameter.value?.text]));
    expect(defaults["postgresHighAvailability"]).toBe("'ZoneRedundant'");
    const [server] = resourcesOfType(infra, "Microsoft.DBforPostgreSQL/flexibleServers");
    expect(property(server!.body, "properties", "highAvailability", "mode")?.text).toBe("highAvailability");
    expect(property(server!.body, "properties", "version")?.text).toBe("'17'");
    const [admin] = resourcesOfType(infra, "Microsoft.DBforPostgreSQL/flexibleServers/administrators");
    expect(property(admin!.body, "name")?.text).toBe("principalId");
    const module = modules(main).find((candidate) => candidate.source.endsWith("postgres-store.bicep"))!;
    expect(property(property(module.body, "params"), "principalName")?.text).toBe("identity.outputs.name");
    const app = modules(main).find((candidate) => candidate.source.endsWith("function-app.bicep"))!;
    expect(property(property(app.body, "params"), "postgresUrl")?.text).toBe(
      "store == 'postgres' ? 'postgres://${uriComponent(identity.outputs.name)}@${postgresStore.outputs.fqdn}:5432/${postgresDatabaseName}?sslmode=verify-full' : ''",
    );
    const postgres = appSettingsVariants(infra).find((settings) => stringValue(settings.get("HA_STORE")) === "postgres")!;
    expect(postgres.get("HA_STORE_CREATE")?.text).toBe("'true'");
    for (const other of appSettingsVariants(infra).filter((settings) => stringValue(settings.get("HA_STORE")) !== "postgres")) expect(other.get("HA_STORE_CREATE")?.text).toBe("'false'");
  });
});

/**
 * infra/multi-region.bicep, read from its parse tree as bicep.test.ts reads main.bicep (no
 * Bicep compiler offline): a function app per region over one Cosmos DB account spanning the
 * regions, one write region with service-managed failover, each app reading its own region
 * first, and the endpoint lists for the workers, their own region first (docs/deploy.md#several-regions).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, listBicepFiles, modules, outputs, parameters, parseBicep, parseBicepFile, property, repoPath, resourcesOfType, stringValue, type BicepFile, type Node } from "./bicep-tree.js";
import { moduleWiring } from "./security-checks.js";

let infra: BicepFile[];
let template: BicepFile;

beforeAll(async () => {
  infra = await Promise.all(listBicepFiles(repoPath("infra")).map(parseBicepFile));
  template = infra.find((file) => file.path === "infra/multi-region.bicep")!;
});

const moduleOf = (source: string): ReturnType<typeof modules>[number] => modules(template).find((module) => module.source === `modules/${source}`)!;
const loopOf = (symbol: string): Node | undefined =>
  template.root.namedChildren.find((statement) => statement.type === "module_declaration" && statement.namedChildren[0]?.text === symbol)?.namedChildren.find((child) => child.type === "for_statement");
const decoratorArgs = (declaration: Node, name: string): Node[] | undefined => {
  const decorators = declaration.previousNamedSibling;
  if (decorators?.type !== "decorators") return undefined;
  return decorators.namedChildren.map((decorator) => call(decorator.namedChildren[0])).find((found) => found?.name === name)?.args;
};

describe("infra/multi-region.bicep", () => {
  it("takes two regions or more, the first the write region, and Session (default) or Strong consistency", () => {
    const declared = new Map(parameters(template).map((parameter) => [parameter.name, parameter]));
    expect(declared.get("regions")?.value).toBeUndefined();
    expect(decoratorArgs(declared.get("regions")!.node, "minLength")?.[0]?.text).toBe("2");
    expect(declared.get("consistency")?.value?.text).toBe("'Session'");
    expect(decoratorArgs(declared.get("consistency")!.node, "allowed")?.[0]?.namedChildren.map(stringValue)).toEqual(["Session", "Strong"]);
    for (const parameter of parameters(template)) expect(decoratorArgs(parameter.node, "description"), parameter.name).toBeDefined();
  });

  it("deploys one Cosmos DB account over every region: one write region, service-managed failover, failover order as listed, serverless only with one region", () => {
    const cosmos = moduleOf("cosmos-store.bicep");
    expect(property(cosmos.body, "params", "regions")?.text).toBe("regions");
    expect(property(cosmos.body, "params", "consistency")?.text).toBe("consistency");
    const [account] = resourcesOfType(infra, "Microsoft.DocumentDB/databaseAccounts");
    const props = property(account!.body, "properties");
    expect(property(props, "enableAutomaticFailover")?.text).toBe("multiRegion");
    expect(property(props, "enableMultipleWriteLocations")?.text).toBe("false");
    expect(property(props, "consistencyPolicy", "defaultConsistencyLevel")?.text).toBe("consistency");
    const locations = property(props, "locations");
    expect(locations?.type).toBe("for_statement");
    const each = locations!.namedChildren.find((child) => child.type === "object");
    expect(property(each, "locationName")?.text).toBe("region");
    expect(property(each, "failoverPriority")?.text).toBe("index");
    expect(property(props, "capabilities")?.text).toMatch(/^multiRegion \? \[\] : \[[\s\S]*EnableServerless/);
    const [database] = resourcesOfType(infra, "Microsoft.DocumentDB/databaseAccounts/sqlDatabases");
    expect(property(database!.body, "properties", "options")?.text).toMatch(/^multiRegion \? \{[\s\S]*maxThroughput: maxThroughput/);
  });

  it("deploys a function app, its host storage and its telemetry in each region, over the one account, reading its own region first", () => {
    for (const symbol of ["functionApp", "hostStorage", "monitoring"]) {
      const loop = loopOf(symbol);
      expect(loop?.namedChildren[0]?.text, symbol).toBe("(region, index)");
      expect(loop?.namedChildren[1]?.text, symbol).toBe("regions");
      expect(property(modules(template).find((module) => module.symbol === symbol)!.body, "params", "location")?.text, symbol).toBe("region");
    }
    const app = moduleOf("function-app.bicep");
    const params = property(app.body, "params");
    expect(stringValue(property(params, "store"))).toBe("cosmos");
    expect(property(params, "cosmosEndpoint")?.text).toBe("cosmosStore.outputs.endpoint");
    expect(property(params, "storageAccountName")?.text).toBe("hostStorage[index].outputs.name");
    expect(property(params, "appInsightsName")?.text).toBe("monitoring[index].outputs.appInsightsName");
    // HA_COSMOS_PREFERRED_REGIONS: its own region, then the others in failover order.
    expect(property(params, "cosmosPreferredRegions")?.text).toBe("join(concat([region], filter(regions, other => other != region)), ',')");
    const [settings] = resourcesOfType(infra, "Microsoft.Web/sites/config");
    expect(property(settings!.file.root.namedChildren.find((statement) => statement.type === "variable_declaration" && statement.namedChildren[0]?.text === "cosmosSettings")?.namedChildren.find((child) => child.type === "object"), "HA_COSMOS_PREFERRED_REGIONS")?.text).toBe("cosmosPreferredRegions");
  });

  it("outputs, per region, the endpoint list for its workers: its own app first, then the others'", () => {
    const regions = outputs(template).find((output) => output.name === "regions")!;
    const each = regions.value?.namedChildren.find((child) => child.type === "object");
    const urls = template.root.namedChildren.find((statement) => statement.type === "variable_declaration" && statement.namedChildren[0]?.text === "apiBaseUrls");
    expect(urls?.namedChildren.find((child) => child.type === "for_statement")?.text).toBe("[for (region, index) in regions: 'https://${functionApp[index].outputs.defaultHostName}/api']");
    expect(property(each, "apiBaseUrl")?.text).toBe("apiBaseUrls[index]");
    expect(property(each, "endpoints")?.text).toBe("join(concat([apiBaseUrls[index]], filter(apiBaseUrls, url => url != apiBaseUrls[index])), ',')");
    expect(outputs(template).map((output) => output.name)).toEqual(expect.arrayContaining(["regions", "cosmosAccountName", "cosmosRegions", "consistency"]));
  });

  it("wires its looped modules as any: a wrong parameter or an output read by index that the module lacks is reported", async () => {
    expect(moduleWiring(infra)).toEqual([]);
    const wrong = await parseBicep(
      ["module apps 'modules/identity.bicep' = [for (region, index) in regions: {", "  name: 'id-${index}'", "  params: {", "    location: region", "    name: 'x'", "    tags: {}", "    nmae: 'typo'", "  }", "}]", "output o string = apps[0].outputs.resourceId"].join("\n"),
      "infra/multi-region.bicep",
    );
    expect(moduleWiring([wrong, ...infra.filter((file) => file.path !== "infra/multi-region.bicep")])).toEqual([
      "infra/multi-region.bicep: module apps passes nmae, which infra/modules/identity.bicep does not declare",
      "infra/multi-region.bicep:10: apps.outputs.resourceId is not an output of infra/modules/identity.bicep",
    ]);
  });
});

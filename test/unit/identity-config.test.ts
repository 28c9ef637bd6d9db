/**
 * The deployed app gets endpoints only (infra/modules/function-app.bicep): no key, no
 * connection string. These tests pin that such settings select the managed-identity
 * (DefaultAzureCredential) mode, and that the exact set of settings the template emits,
 * read from its parse tree, is accepted by loadServerConfig for either store.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { loadServerConfig, type ServerConfig } from "../../shared/config/server-config.js";
import { checksCallersItself, loadAuthConfig } from "../../shared/config/auth-config.js";
import {
  call,
  listBicepFiles,
  literalValue,
  modules,
  parameters,
  parseBicepFile,
  property,
  repoPath,
  resolveVariable,
  stringValue,
  type BicepFile,
  type Node,
} from "../infra/bicep-tree.js";
import { appSettingsVariants } from "../infra/security-checks.js";

const TABLE_ENDPOINT = "https://acct.table.core.windows.net";
const COSMOS_ENDPOINT = "https://acct.documents.azure.com:443/";

describe("managed-identity configuration", () => {
  it("selects the Table identity mode from HA_TABLE_ENDPOINT alone, without creating the table", () => {
    const config = loadServerConfig({ HA_TABLE_ENDPOINT: TABLE_ENDPOINT });
    expect(config.store).toEqual({
      kind: "table",
      tableName: "leases",
      connection: { mode: "identity", endpoint: TABLE_ENDPOINT },
      createIfMissing: false,
    });
  });

  it("drops the trailing slash Azure puts on primaryEndpoints.table", () => {
    const config = loadServerConfig({ HA_STORE: "table", HA_TABLE_ENDPOINT: `${TABLE_ENDPOINT}/` });
    expect(config.store.connection).toEqual({ mode: "identity", endpoint: TABLE_ENDPOINT });
  });

  it("selects the Cosmos identity mode from HA_COSMOS_ENDPOINT without HA_COSMOS_KEY", () => {
    const config = loadServerConfig({ HA_STORE: "cosmos", HA_COSMOS_ENDPOINT: COSMOS_ENDPOINT });
    expect(config.store).toEqual({
      kind: "cosmos",
      databaseName: "ha",
      containerName: "leases",
      connection: { mode: "identity", endpoint: "https://acct.documents.azure.com:443" },
      createIfMissing: false,
    });
  });

  it("still lets HA_STORE_CREATE=true opt in to creating the table under an identity", () => {
    const config = loadServerConfig({ HA_TABLE_ENDPOINT: TABLE_ENDPOINT, HA_STORE_CREATE: "true" });
    expect(config.store.createIfMissing).toBe(true);
  });

  it("refuses an endpoint and a connection string together, naming both settings", () => {
    expect(() =>
      loadServerConfig({ HA_TABLE_ENDPOINT: TABLE_ENDPOINT, HA_TABLE_CONNECTION_STRING: "UseDevelopmentStorage=true" }),
    ).toThrow(/HA_TABLE_CONNECTION_STRING or HA_TABLE_ENDPOINT/);
  });
});

describe("the app settings infra/ emits", () => {
  let infra: BicepFile[];
  let main: BicepFile;

  beforeAll(async () => {
    infra = await Promise.all(listBicepFiles(repoPath("infra")).map(parseBicepFile));
    const found = infra.find((file) => file.path === "infra/main.bicep");
    if (found === undefined) throw new Error("infra/main.bicep not found");
    main = found;
  });

  /**
   * The value main.bicep hands to function-app.bicep for a setting, traced through the
   * module's parameters, main's variables and parameter defaults; undefined when it is
   * only known at deployment time (an endpoint, a new GUID).
   */
  function templateValue(node: Node): string | undefined {
    const literal = literalValue(node);
    if (literal !== undefined && literal !== null) return String(literal);
    const toString = call(node);
    if (toString?.name === "string" && toString.args[0] !== undefined) return templateValue(toString.args[0]);
    if (node.type !== "identifier") return undefined;
    const app = modules(main).find((module) => module.source.endsWith("function-app.bicep"));
    const argument = property(property(app?.body, "params"), node.text);
    return argument === undefined ? undefined : mainValue(argument);
  }

  function mainValue(node: Node): string | undefined {
    const resolved = resolveVariable(main, node);
    const literal = literalValue(resolved);
    if (literal !== undefined && literal !== null) return String(literal);
    if (resolved?.type !== "identifier") return undefined;
    const parameter = parameters(main).find((candidate) => candidate.name === resolved.text);
    const fallback = literalValue(parameter?.value);
    return fallback === undefined || fallback === null ? undefined : String(fallback);
  }

  /**
   * Stand-ins for values known only at deployment time. A setting the template gains that
   * is neither traceable nor listed here fails the test, so it gets looked at.
   */
  const DEPLOYMENT_TIME_VALUES: Record<string, string> = {
    // storage primaryEndpoints.table and Cosmos documentEndpoint both end with a slash.
    HA_TABLE_ENDPOINT: `${TABLE_ENDPOINT}/`,
    HA_COSMOS_ENDPOINT: COSMOS_ENDPOINT,
    // main.bicep builds it from the identity's name and the server's host name.
    HA_POSTGRES_URL: "postgres://ha-id-example@ha-pg-example.postgres.database.azure.com:5432/ha?sslmode=verify-full",
    // The auth settings at main.bicep's defaults (no authAudience, no grants, no keys): blank.
    HA_AUTH_TENANT_ID: "",
    HA_GRANTS: "",
    HA_API_KEYS: "",
    // main.bicep leaves it at the module's default, blank (the write region); multi-region.bicep
    // gives each region's app its own region first: a value of that form.
    HA_COSMOS_PREFERRED_REGIONS: "North Europe,West Europe",
  };

  function environmentOf(settings: Map<string, Node>): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [name, node] of settings) {
      const value = templateValue(node) ?? DEPLOYMENT_TIME_VALUES[name];
      if (value !== undefined) env[name] = value;
      // Deployment-time values the app does not read (client ids, App Insights) stay out.
      else if (name.startsWith("HA_")) throw new Error(`app setting ${name} = ${node.text} has no test value`);
    }
    return env;
  }

  function configFor(store: "table" | "cosmos" | "postgres"): { env: Record<string, string>; config: ServerConfig } {
    const settings = appSettingsVariants(infra).find((variant) => stringValue(variant.get("HA_STORE")) === store);
    if (settings === undefined) throw new Error(`no app-settings variant with HA_STORE=${store}`);
    const env = environmentOf(settings);
    return { env, config: loadServerConfig(env) };
  }

  it("emits exactly these HA_* settings for the Table store", () => {
    const { env } = configFor("table");
    expect(Object.keys(env).filter((name) => name.startsWith("HA_")).sort()).toEqual([
      "HA_API_KEYS",
      "HA_AUTH_AUDIENCE",
      "HA_AUTH_TENANT_ID",
      "HA_GRANTS",
      "HA_INTERVAL_MS",
      "HA_LEASE_SECRET",
      "HA_MEMBERS_TABLE_NAME",
      "HA_STORE",
      "HA_STORE_CREATE",
      "HA_SWEEP_SCHEDULE",
      "HA_TABLE_ENDPOINT",
      "HA_TABLE_NAME",
      "HA_TIMEOUT_MS",
    ]);
  });

  it("emits exactly these HA_* settings for the Cosmos store", () => {
    const { env } = configFor("cosmos");
    expect(Object.keys(env).filter((name) => name.startsWith("HA_")).sort()).toEqual([
      "HA_API_KEYS",
      "HA_AUTH_AUDIENCE",
      "HA_AUTH_TENANT_ID",
      "HA_COSMOS_CONTAINER",
      "HA_COSMOS_DATABASE",
      "HA_COSMOS_ENDPOINT",
      "HA_COSMOS_MEMBERS_CONTAINER",
      "HA_COSMOS_PREFERRED_REGIONS",
      "HA_GRANTS",
      "HA_INTERVAL_MS",
      "HA_LEASE_SECRET",
      "HA_STORE",
      "HA_STORE_CREATE",
      "HA_SWEEP_SCHEDULE",
      "HA_TIMEOUT_MS",
    ]);
  });

  it("is accepted as a PostgreSQL configuration that signs in with the identity's tokens and creates its tables", () => {
    const { env, config } = configFor("postgres");
    expect(Object.keys(env).filter((name) => name.startsWith("HA_POSTGRES_")).sort()).toEqual(["HA_POSTGRES_AUTH", "HA_POSTGRES_URL"]);
    expect(config.store).toEqual({
      kind: "postgres",
      schema: "ha",
      connection: { mode: "url", url: DEPLOYMENT_TIME_VALUES["HA_POSTGRES_URL"], auth: "entra" },
      createIfMissing: true,
    });
  });

  it("keeps, at the template's defaults, the platform's function keys: no auth setting is effective", () => {
    for (const store of ["table", "cosmos", "postgres"] as const) {
      const { env } = configFor(store);
      expect(checksCallersItself(env), store).toBe(false);
      expect(loadAuthConfig(env)).toEqual({ identity: undefined, keys: [], grants: undefined });
    }
  });

  it("is accepted as a Table identity configuration with the template's timing", () => {
    const { env, config } = configFor("table");
    expect(config.timing).toEqual({ intervalMs: 1000, timeoutMs: 5000 });
    // main.bicep's default: blank, so the app keeps its token secret in the store (TokenKeys).
    expect(env["HA_LEASE_SECRET"]).toBe("");
    expect(config.leaseSecret).toBeUndefined();
    expect(config.store).toEqual({
      kind: "table",
      tableName: "leases",
      membersTableName: "members",
      connection: { mode: "identity", endpoint: TABLE_ENDPOINT },
      createIfMissing: false,
    });
  });

  it("is accepted as a Cosmos identity configuration with the template's names", () => {
    const { config } = configFor("cosmos");
    expect(config.store).toMatchObject({
      kind: "cosmos",
      databaseName: "ha",
      containerName: "leases",
      preferredRegions: ["North Europe", "West Europe"],
      connection: { mode: "identity" },
      createIfMissing: false,
    });
  });
});

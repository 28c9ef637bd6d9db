import type { LeaseTiming } from "../contract/timing.js";
import { ConfigError } from "./config-error.js";
import { readBoolean, readChoice, readHttpsUrl, readInteger, readString, type Env } from "./env.js";
import { loadMembersConfig, type MembersConfig } from "./members-config.js";
import { loadAdmissionConfig, type AdmissionConfig } from "./admission-config.js";

/**
 * Where leases live. `embedded` means no store was configured: only the local host can
 * serve that, by starting a store of its own (Azurite, or the Cosmos emulator).
 */
export type StoreConfig =
  | {
      readonly kind: "table";
      readonly tableName: string;
      /** The membership table (HA_MEMBERS_TABLE_NAME), in the same account; absent means DEFAULT_MEMBERS_TABLE_NAME. */
      readonly membersTableName?: string;
      readonly connection:
        | { readonly mode: "connection-string"; readonly connectionString: string }
        | { readonly mode: "identity"; readonly endpoint: string }
        | { readonly mode: "embedded" };
      readonly createIfMissing: boolean;
    }
  | {
      readonly kind: "cosmos";
      readonly databaseName: string;
      readonly containerName: string;
      /** The membership container (HA_COSMOS_MEMBERS_CONTAINER), in the same database; absent means DEFAULT_MEMBERS_CONTAINER_NAME. */
      readonly membersContainerName?: string;
      /**
       * The account's regions this instance reads from first, in order (HA_COSMOS_PREFERRED_REGIONS):
       * its own region first in a multi-region deployment (docs/deploy.md#several-regions).
       * Absent: the SDK's default, the write region.
       */
      readonly preferredRegions?: readonly string[];
      readonly connection:
        | { readonly mode: "key"; readonly endpoint: string; readonly key: string }
        | { readonly mode: "identity"; readonly endpoint: string }
        | { readonly mode: "embedded" };
      readonly createIfMissing: boolean;
    }
  | {
      readonly kind: "postgres";
      /** The schema that holds the tables (HA_POSTGRES_SCHEMA). */
      readonly schema: string;
      readonly connection:
        | {
            readonly mode: "url";
            /** A libpq URI (postgres://user:password@host:port/db?sslmode=…): TLS as it says. */
            readonly url: string;
            /** `entra`: the password is a Microsoft Entra token of DefaultAzureCredential (Azure Database for PostgreSQL). */
            readonly auth: "password" | "entra";
          }
        | { readonly mode: "embedded" };
      readonly createIfMissing: boolean;
    };

export interface ServerConfig {
  readonly timing: LeaseTiming;
  /** The time budget of all store calls made for one request. */
  readonly storeTimeoutMs: number;
  /** Signs lease tokens; undefined means a random per-process secret. */
  readonly leaseSecret: string | undefined;
  readonly store: StoreConfig;
  /** Membership's durations, bounds and sweep schedule (members-config.ts). */
  readonly members: MembersConfig;
  /** Load shedding (admission-config.ts); undefined when HA_MAX_IN_FLIGHT=0. */
  readonly admission: AdmissionConfig | undefined;
}

export const DEFAULT_INTERVAL_MS = 1000;
export const DEFAULT_TIMEOUT_MS = 5000;
export const DEFAULT_STORE_TIMEOUT_MS = 2000;
export const DEFAULT_MEMBERS_TABLE_NAME = "members";
export const DEFAULT_MEMBERS_CONTAINER_NAME = "members";
const NAME_PATTERN = /^[A-Za-z][A-Za-z0-9]{2,62}$/;
const COSMOS_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,254}$/;

/** Reads and validates the server's settings once; a bad value throws a ConfigError. */
export function loadServerConfig(env: Env): ServerConfig {
  const timing = loadTiming(env);
  return {
    timing,
    storeTimeoutMs: readInteger(env, "HA_STORE_TIMEOUT_MS", DEFAULT_STORE_TIMEOUT_MS, {
      min: 1,
      max: 60_000,
      example: DEFAULT_STORE_TIMEOUT_MS,
    }),
    leaseSecret: loadLeaseSecret(env),
    store: loadStoreConfig(env),
    members: loadMembersConfig(env, timing),
    admission: loadAdmissionConfig(env, timing),
  };
}

export function loadTiming(env: Env): LeaseTiming {
  const limits = { min: 1, max: 3_600_000 };
  const intervalMs = readInteger(env, "HA_INTERVAL_MS", DEFAULT_INTERVAL_MS, {
    ...limits,
    example: DEFAULT_INTERVAL_MS,
  });
  const timeoutMs = readInteger(env, "HA_TIMEOUT_MS", DEFAULT_TIMEOUT_MS, {
    ...limits,
    example: DEFAULT_TIMEOUT_MS,
  });
  if (timeoutMs <= 2 * intervalMs) {
    throw new ConfigError(
      "HA_TIMEOUT_MS",
      `HA_TIMEOUT_MS (${timeoutMs}) must be greater than 2 × HA_INTERVAL_MS (${intervalMs}): raise HA_TIMEOUT_MS above ${2 * intervalMs} or lower HA_INTERVAL_MS below ${Math.ceil(timeoutMs / 2)}.`,
    );
  }
  return { intervalMs, timeoutMs };
}

function loadLeaseSecret(env: Env): string | undefined {
  const secret = readString(env, "HA_LEASE_SECRET");
  if (secret !== undefined && secret.length < 32) {
    throw new ConfigError(
      "HA_LEASE_SECRET",
      `HA_LEASE_SECRET must be at least 32 characters (got ${secret.length}). Use a random value, for example the output of \`openssl rand -base64 32\`, or unset it.`,
    );
  }
  return secret;
}

export function loadStoreConfig(env: Env): StoreConfig {
  const kind = readChoice(env, "HA_STORE", ["table", "cosmos", "postgres"] as const, "table");
  if (kind === "postgres") return loadPostgresConfig(env);
  return kind === "table" ? loadTableConfig(env) : loadCosmosConfig(env);
}

export const DEFAULT_POSTGRES_SCHEMA = "ha";
/** An unquoted PostgreSQL identifier that needs no quoting: lower case, at most 63 bytes. */
const POSTGRES_NAME_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

function loadPostgresConfig(env: Env): StoreConfig {
  const schema = readString(env, "HA_POSTGRES_SCHEMA") ?? DEFAULT_POSTGRES_SCHEMA;
  if (!POSTGRES_NAME_PATTERN.test(schema)) {
    throw new ConfigError("HA_POSTGRES_SCHEMA", `HA_POSTGRES_SCHEMA must be 1–63 lower-case letters, digits or '_', not starting with a digit (got "${schema}").`);
  }
  const url = readString(env, "HA_POSTGRES_URL");
  const auth = readChoice(env, "HA_POSTGRES_AUTH", ["password", "entra"] as const, "password");
  if (url === undefined) {
    if (readString(env, "HA_POSTGRES_AUTH") !== undefined) {
      throw new ConfigError("HA_POSTGRES_AUTH", "HA_POSTGRES_AUTH is set but HA_POSTGRES_URL is not: set the server's URL too (postgres://<user>@<server>.postgres.database.azure.com/<database>?sslmode=verify-full).");
    }
    return { kind: "postgres", schema, connection: { mode: "embedded" }, createIfMissing: readBoolean(env, "HA_STORE_CREATE", true) };
  }
  checkPostgresUrl(url, auth);
  return { kind: "postgres", schema, connection: { mode: "url", url, auth }, createIfMissing: readBoolean(env, "HA_STORE_CREATE", auth !== "entra") };
}

/** A libpq URI naming a host and a user; with Entra ID, no password of its own (the token is the password). */
function checkPostgresUrl(raw: string, auth: "password" | "entra"): void {
  const example = "postgres://<user>:<password>@<host>:5432/<database>?sslmode=verify-full";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError("HA_POSTGRES_URL", `HA_POSTGRES_URL must be a PostgreSQL URI such as ${example} (got something that is not a URL).`);
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new ConfigError("HA_POSTGRES_URL", `HA_POSTGRES_URL must start with postgres:// or postgresql:// (got "${url.protocol}//"), as in ${example}.`);
  }
  if (url.hostname === "") throw new ConfigError("HA_POSTGRES_URL", `HA_POSTGRES_URL names no host: write it as ${example}.`);
  if (url.username === "") throw new ConfigError("HA_POSTGRES_URL", `HA_POSTGRES_URL names no user: write it as ${example}.`);
  if (auth === "entra" && url.password !== "") {
    throw new ConfigError("HA_POSTGRES_URL", "HA_POSTGRES_URL carries a password, but HA_POSTGRES_AUTH=entra uses a Microsoft Entra token as the password: remove the password from the URL, or unset HA_POSTGRES_AUTH.");
  }
}

function loadTableConfig(env: Env): StoreConfig {
  const tableName = readString(env, "HA_TABLE_NAME") ?? "leases";
  const membersSetting = readString(env, "HA_MEMBERS_TABLE_NAME");
  const membersTableName = membersSetting ?? DEFAULT_MEMBERS_TABLE_NAME;
  for (const [setting, value] of [
    ["HA_TABLE_NAME", tableName],
    ["HA_MEMBERS_TABLE_NAME", membersTableName],
  ] as const) {
    if (!NAME_PATTERN.test(value)) {
      throw new ConfigError(setting, `${setting} must be 3–63 letters and digits, starting with a letter (got "${value}").`);
    }
  }
  if (tableName.toLowerCase() === membersTableName.toLowerCase()) {
    throw new ConfigError("HA_MEMBERS_TABLE_NAME", `HA_MEMBERS_TABLE_NAME must name another table than HA_TABLE_NAME (both are "${tableName}"): leases and members are kept apart.`);
  }
  const connectionString = readString(env, "HA_TABLE_CONNECTION_STRING");
  const endpoint = readHttpsUrl(env, "HA_TABLE_ENDPOINT", "https://<account>.table.core.windows.net");
  if (connectionString !== undefined && endpoint !== undefined) {
    throw new ConfigError(
      "HA_TABLE_ENDPOINT",
      "Set either HA_TABLE_CONNECTION_STRING or HA_TABLE_ENDPOINT, not both: the endpoint is for managed identity, the connection string for keys or Azurite.",
    );
  }
  if (connectionString !== undefined && !/(^|;)\s*(AccountName|UseDevelopmentStorage|TableEndpoint|SharedAccessSignature)\s*=/i.test(connectionString)) {
    throw new ConfigError(
      "HA_TABLE_CONNECTION_STRING",
      "HA_TABLE_CONNECTION_STRING does not look like a storage connection string: expected AccountName=…;AccountKey=…;TableEndpoint=… (copy it from the storage account's Access keys).",
    );
  }
  const connection =
    connectionString !== undefined
      ? ({ mode: "connection-string", connectionString } as const)
      : endpoint !== undefined
        ? ({ mode: "identity", endpoint } as const)
        : ({ mode: "embedded" } as const);
  return {
    kind: "table",
    tableName,
    ...(membersSetting === undefined ? {} : { membersTableName }),
    connection,
    createIfMissing: readBoolean(env, "HA_STORE_CREATE", connection.mode !== "identity"),
  };
}

function loadCosmosConfig(env: Env): StoreConfig {
  const databaseName = readString(env, "HA_COSMOS_DATABASE") ?? "ha";
  const containerName = readString(env, "HA_COSMOS_CONTAINER") ?? "leases";
  const membersSetting = readString(env, "HA_COSMOS_MEMBERS_CONTAINER");
  const membersContainerName = membersSetting ?? DEFAULT_MEMBERS_CONTAINER_NAME;
  for (const [setting, value] of [
    ["HA_COSMOS_DATABASE", databaseName],
    ["HA_COSMOS_CONTAINER", containerName],
    ["HA_COSMOS_MEMBERS_CONTAINER", membersContainerName],
  ] as const) {
    if (!COSMOS_NAME_PATTERN.test(value)) {
      throw new ConfigError(
        setting,
        `${setting} must be 1–255 letters, digits, '-' or '_' (got "${value}").`,
      );
    }
  }
  if (containerName === membersContainerName) {
    throw new ConfigError("HA_COSMOS_MEMBERS_CONTAINER", `HA_COSMOS_MEMBERS_CONTAINER must name another container than HA_COSMOS_CONTAINER (both are "${containerName}"): leases and members are partitioned differently.`);
  }
  const endpoint = readHttpsUrl(env, "HA_COSMOS_ENDPOINT", "https://<account>.documents.azure.com:443");
  if (endpoint !== undefined && !endpoint.startsWith("https:")) {
    throw new ConfigError(
      "HA_COSMOS_ENDPOINT",
      `HA_COSMOS_ENDPOINT must be an https URL such as https://<account>.documents.azure.com:443 (got "${endpoint}"): Cosmos DB is only reached over TLS, so that its key never crosses a network in clear. ` +
        "For the Linux emulator (vNext), which serves http by default, start it with `--protocol https` and trust its certificate with NODE_EXTRA_CA_CERTS (docs/stores.md).",
    );
  }
  const key = readString(env, "HA_COSMOS_KEY");
  if (key !== undefined && endpoint === undefined) {
    throw new ConfigError("HA_COSMOS_ENDPOINT", "HA_COSMOS_KEY is set but HA_COSMOS_ENDPOINT is not: set the account's endpoint too.");
  }
  const connection =
    endpoint === undefined
      ? ({ mode: "embedded" } as const)
      : key === undefined
        ? ({ mode: "identity", endpoint } as const)
        : ({ mode: "key", endpoint, key } as const);
  const preferredRegions = readRegions(env, "HA_COSMOS_PREFERRED_REGIONS");
  return {
    kind: "cosmos",
    databaseName,
    containerName,
    ...(membersSetting === undefined ? {} : { membersContainerName }),
    ...(preferredRegions === undefined ? {} : { preferredRegions }),
    connection,
    createIfMissing: readBoolean(env, "HA_STORE_CREATE", connection.mode !== "identity"),
  };
}

/** An Azure region's name as Cosmos DB lists it: "West Europe", "East US 2" (or "westeurope"). */
const REGION_PATTERN = /^[A-Za-z][A-Za-z0-9 ]{1,48}[A-Za-z0-9]$/;

/** A comma-separated list of Azure region names, each once; undefined when unset or empty. */
function readRegions(env: Env, setting: string): readonly string[] | undefined {
  const value = readString(env, setting);
  if (value === undefined) return undefined;
  const regions = value.split(",").map((region) => region.trim());
  const bad = regions.find((region) => !REGION_PATTERN.test(region));
  if (bad !== undefined) {
    throw new ConfigError(setting, `${setting} must list Azure regions separated by commas, such as "West Europe,North Europe" (got ${JSON.stringify(bad)} in "${value}").`);
  }
  const seen = new Set<string>();
  for (const region of regions) {
    const key = region.replace(/ /g, "").toLowerCase();
    if (seen.has(key)) throw new ConfigError(setting, `${setting} names ${JSON.stringify(region)} twice: list each region once, this instance's own first.`);
    seen.add(key);
  }
  return regions;
}

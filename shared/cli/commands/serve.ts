import { isIP } from "node:net";
import { ConfigError } from "../../config/config-error.js";
import { loadAuthConfig, type AuthConfig } from "../../config/auth-config.js";
import type { Env } from "../../config/env.js";
import { loadServeSettings, type ServeSettings } from "../../config/serve-config.js";
import { loadServerConfig, type ServerConfig, type StoreConfig } from "../../config/server-config.js";
import { createAccess } from "../../http/access.js";
import { DataDirInUseError } from "../../host/data-dir-in-use-error.js";
import { startEmbeddedAzurite } from "../../host/embedded-azurite.js";
import { startEmbeddedCosmos } from "../../host/embedded-cosmos.js";
import { startEmbeddedPostgres } from "../../host/embedded-postgres.js";
import type { Operation } from "../../http/route.js";
import type { TimerOperation } from "../../http/timer.js";
import { startLocalHost } from "../../host/local-host.js";
import { startLocalTimers } from "../../host/local-timers.js";
import { METER_NAME } from "../../http/metric-names.js";
import { createRuntime } from "../../http/runtime.js";
import { createPrometheusMetrics } from "../../host/prometheus-metrics.js";
import { StoreUnavailableError } from "../../service/store-unavailable-error.js";
import type { CreateConfiguredStoreOptions } from "../../store/configured-store.js";
import { createCosmosStore } from "../../store/create-cosmos-store.js";
import { createPostgresStore } from "../../store/create-postgres-store.js";
import { createTableStore } from "../../store/create-table-store.js";
import type { CommandLine } from "../command-spec.js";
import { EXIT } from "../exit-codes.js";
import { UsageError } from "../usage-error.js";

export interface RunningService {
  readonly url: string;
  readonly banner: string;
  close(): Promise<void>;
}

/**
 * `npm start` / `ha-module serve`: the route table (`operations`, given by the composition
 * root) on a local host, over the configured store, or over an embedded Azurite (or, with
 * HA_STORE=cosmos, an embedded Cosmos emulator; with HA_STORE=postgres, an embedded
 * PostgreSQL, its data in HA_DATA_DIR) when none is configured.
 */
export async function startService(
  config: ServerConfig,
  settings: ServeSettings,
  operations: readonly Operation[],
  timers: readonly TimerOperation[] = [],
): Promise<RunningService> {
  const closers: Array<() => Promise<void>> = [];
  const closeAll = async (): Promise<void> => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  };
  try {
    let storeConfig: StoreConfig = config.store;
    const storeLabel = describeStore(storeConfig, settings);
    if (storeConfig.kind === "table" && storeConfig.connection.mode === "embedded") {
      const azurite = await startEmbeddedAzurite({ dataDir: settings.dataDir, inMemory: settings.inMemory });
      closers.push(() => azurite.close());
      storeConfig = {
        ...storeConfig,
        connection: { mode: "connection-string", connectionString: azurite.connectionString },
        createIfMissing: true,
      };
    }
    let storeOptions: CreateConfiguredStoreOptions = {};
    if (storeConfig.kind === "cosmos" && storeConfig.connection.mode === "embedded") {
      const cosmos = await startEmbeddedCosmos();
      closers.push(() => cosmos.close());
      storeConfig = {
        ...storeConfig,
        connection: { mode: "key", endpoint: cosmos.endpoint, key: cosmos.key },
        createIfMissing: true,
      };
      // The emulator's own certificate, made for this run: TLS verification stays on.
      storeOptions = { trustedCosmosCertificate: cosmos.certificatePem };
    }
    let postgresPassword: string | undefined;
    if (storeConfig.kind === "postgres" && storeConfig.connection.mode === "embedded") {
      const postgres = await startEmbeddedPostgres({ dataDir: settings.dataDir, inMemory: settings.inMemory });
      closers.push(() => postgres.close());
      storeConfig = { ...storeConfig, connection: { mode: "url", url: postgres.url, auth: "password" }, createIfMissing: true };
      // Drawn when its data directory was made, and kept there: never printed.
      postgresPassword = postgres.password;
    }
    const configured =
      storeConfig.kind === "cosmos"
        ? createCosmosStore(storeConfig, storeOptions)
        : storeConfig.kind === "postgres"
          ? createPostgresStore(storeConfig, postgresPassword === undefined ? {} : { password: postgresPassword })
          : createTableStore(storeConfig);
    closers.push(async () => configured.close());
    await prepareStore(() => configured.prepare({ abortSignal: AbortSignal.timeout(30_000) }), config.store);
    // Without the create step nothing has reached the store yet: ask it once, so that a
    // wrong setting is named now rather than by a 503 later. Not fatal: it may come up.
    const unreachable = storeConfig.createIfMissing
      ? undefined
      : await configured.store.ping({ abortSignal: AbortSignal.timeout(5_000) }).then(
          () => undefined,
          (error: unknown) => (error instanceof StoreUnavailableError ? unreachableStoreMessage(error, config.store, false) : Promise.reject(error)),
        );
    // Per process: GET /api/metrics serves what this process measured since it started.
    const metrics = createPrometheusMetrics(METER_NAME);
    closers.push(() => metrics.shutdown());
    const auth = settings.auth ?? loadAuthConfig({}, settings.apiKey);
    const runtime = createRuntime(config, { leases: configured.store, members: configured.members, secrets: configured.secrets, telemetry: { meter: metrics.meter, metricsText: () => metrics.text() } });
    // Serve once the token secret kept in the store is in use (or the store took a call's
    // budget without answering): every instance on the store then takes this one's tokens.
    await runtime.tokenKeys.settled(config.storeTimeoutMs);
    const host = await listen(settings, () =>
      startLocalHost({ operations, runtime: async () => runtime, port: settings.port, hostname: settings.host, access: createAccess(auth) }),
    );
    closers.push(() => host.close());
    // The timer functions (the membership sweeper) run here as Azure would run them.
    const log = (level: "warn" | "error", message: string): void => console[level](message);
    const localTimers = startLocalTimers({ timers, runtime: async () => runtime, periodMs: config.members.sweepPeriodMs, log });
    closers.push(() => localTimers.close());
    const { intervalMs, timeoutMs } = config.timing;
    return {
      url: host.url,
      banner: [
        `ha-module listening on ${host.url}${reachableFrom(settings.host, host.url)}`,
        `  I = ${intervalMs} ms, T = ${timeoutMs} ms, store: ${storeLabel}`,
        `  callers: ${describeCallers(auth)}`,
        // The key itself is never printed: a browser takes it as ?code=, which the operator fills in.
        `  dashboard: ${host.url}/dashboard${settings.apiKey === undefined ? "" : "?code=<HA_API_KEY>"}`,
        ...[exposureWarning(settings)].filter((line) => line !== undefined).map((line) => `  warning: ${line}`),
        ...(unreachable === undefined ? [] : [`  warning: ${unreachable} Until it answers, every call answers 503.`]),
      ].join("\n"),
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** The settings that say where the store is, for messages that must name them. */
function storeSettings(store: StoreConfig): string {
  if (store.kind === "table") return "HA_TABLE_CONNECTION_STRING or HA_TABLE_ENDPOINT";
  if (store.kind === "postgres") return store.connection.mode === "url" && store.connection.auth === "entra" ? "HA_POSTGRES_URL and the identity's access (HA_POSTGRES_AUTH=entra)" : "HA_POSTGRES_URL";
  return store.connection.mode === "key" ? "HA_COSMOS_ENDPOINT and HA_COSMOS_KEY" : "HA_COSMOS_ENDPOINT";
}

function unreachableStoreMessage(error: Error, store: StoreConfig, creating: boolean): string {
  const what = store.kind === "table" ? `table "${store.tableName}"` : store.kind === "postgres" ? `the tables of schema "${store.schema}"` : `container "${store.databaseName}/${store.containerName}"`;
  const tls = /certificate|self[- ]signed|CERT_|UNABLE_TO_VERIFY/i.test(`${error.message} ${String((error.cause as Error | undefined)?.message)}`)
    ? " Its TLS certificate is not trusted: for an emulator, save its certificate as PEM and start with NODE_EXTRA_CA_CERTS=<that file> (docs/stores.md)."
    : "";
  return creating
    ? `The store did not answer when asked to create ${what} (HA_STORE_CREATE is on): ${error.message}${tls} Check ${storeSettings(store)}: is the store running, and reachable from here? If ${what} exists already (and this identity may not create it), set HA_STORE_CREATE=false to skip this step.`
    : `The store does not answer: ${error.message}${tls} Check ${storeSettings(store)}.`;
}

/** The store's start-up step (HA_STORE_CREATE); a store that cannot be reached is named, with the settings to check. */
async function prepareStore(prepare: () => Promise<void>, store: StoreConfig): Promise<void> {
  try {
    await prepare();
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    if (store.connection.mode === "embedded") throw error; // ours: a bug, not a setting
    throw new StartupError(unreachableStoreMessage(error, store, true), { cause: error });
  }
}

/** Listening failures are settings to change: PORT, or HA_HOST. */
async function listen<T>(settings: ServeSettings, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    const { port, host } = settings;
    switch ((error as NodeJS.ErrnoException).code) {
      case "EADDRINUSE":
        throw new ConfigError("PORT", `PORT ${port} is in use on ${host} (another ha-module serve, or the Functions host?). Stop that process, or set PORT to another port (PORT=0 picks a free one).`);
      case "EACCES":
        throw new ConfigError("PORT", `PORT ${port} needs privileges to listen on: set PORT above 1023 (default 7071), or 0 for a free one.`);
      case "EADDRNOTAVAIL":
        throw new ConfigError("HA_HOST", `HA_HOST ${host} is not an address of this machine: set it to one of its addresses, 0.0.0.0 for every interface, or unset it for 127.0.0.1.`);
      default:
        throw error;
    }
  }
}

/** The store could not be reached at start-up; the message names the settings to check. */
export class StartupError extends Error {
  override readonly name = "StartupError";
}

/** The banner's line on who may call: what is checked, and whether grants limit writes. */
function describeCallers({ identity, keys, grants }: AuthConfig): string {
  const checks = [
    ...(keys.length === 0 ? [] : [`${keys.length === 1 ? "a key" : `${keys.length} named keys`} in x-functions-key`]),
    ...(identity === undefined ? [] : [`Microsoft Entra tokens of tenant ${identity.tenantId} for ${identity.audiences.join(", ")}`]),
  ];
  if (checks.length === 0) return "anyone (set HA_API_KEY or HA_API_KEYS to require a key)";
  return `${checks.join(" or ")}; ${grants === undefined ? "no HA_GRANTS: every caller may write every role and group" : `writes limited by ${grants.length} grant(s) of HA_GRANTS`}`;
}

/** A service other machines can reach, with no key to ask for: anyone there could take a lease. */
export function exposureWarning({ host, apiKey, auth }: Pick<ServeSettings, "host" | "apiKey"> & { auth?: AuthConfig }): string | undefined {
  if (auth !== undefined && (auth.keys.length > 0 || auth.identity !== undefined)) return undefined;
  const loopback = host === "localhost" || host === "::1" || host.startsWith("127.");
  if (loopback || apiKey !== undefined) return undefined;
  return `HA_HOST ${host} lets other machines in, and no key is required: anyone who reaches the port can take a lease. Set HA_API_KEY.`;
}

/** For a wildcard address, the URL a client on this machine uses. */
function reachableFrom(host: string, url: string): string {
  if (host !== "0.0.0.0" && host !== "::") return "";
  const local = new URL(url);
  local.hostname = isIP(host) === 6 ? "[::1]" : "127.0.0.1";
  return ` (every interface; from this machine: ${local.href})`;
}

function describeStore(store: StoreConfig, settings: ServeSettings): string {
  if (store.kind === "table") {
    switch (store.connection.mode) {
      case "embedded":
        return `table "${store.tableName}" on embedded Azurite (${settings.inMemory ? "in memory" : `data in ${settings.dataDir}`})`;
      case "connection-string":
        return `table "${store.tableName}" via HA_TABLE_CONNECTION_STRING`;
      case "identity":
        return `table "${store.tableName}" at ${store.connection.endpoint} (DefaultAzureCredential)`;
    }
  }
  if (store.kind === "postgres") {
    const schema = `postgres schema "${store.schema}"`;
    if (store.connection.mode === "embedded") return `${schema} on an embedded PostgreSQL (${settings.inMemory ? "in memory: leases are lost when it stops" : `data in ${settings.dataDir}`})`;
    return `${schema} at ${postgresServer(store.connection.url)}${store.connection.auth === "entra" ? " (Microsoft Entra token of DefaultAzureCredential)" : " (HA_POSTGRES_URL)"}`;
  }
  const container = `cosmos "${store.databaseName}/${store.containerName}"`;
  switch (store.connection.mode) {
    case "embedded":
      return `${container} on an embedded Cosmos emulator (in memory: leases are lost when it stops)`;
    case "key":
      return `${container} at ${store.connection.endpoint} (HA_COSMOS_KEY)`;
    case "identity":
      return `${container} at ${store.connection.endpoint} (DefaultAzureCredential)`;
  }
}

/** host:port/database of a PostgreSQL URL, without its user or password. */
function postgresServer(url: string): string {
  const parsed = new URL(url);
  return `${parsed.host}${parsed.pathname}`;
}

/**
 * Runs the service until SIGINT or SIGTERM; exits 2 with the message on a bad setting
 * (PORT in use included) or when another service holds HA_DATA_DIR, and 1 when the store
 * cannot be reached at start-up, with the settings to check.
 */
export async function serveCommand(line: CommandLine, env: Env, operations: readonly Operation[], timers: readonly TimerOperation[] = []): Promise<number> {
  if (line.positionals.length > 0) {
    throw new UsageError(`serve takes no arguments; it is configured by environment (got ${line.positionals.join(" ")}).`);
  }
  let config: ServerConfig;
  let settings: ServeSettings;
  try {
    config = loadServerConfig(env);
    settings = loadServeSettings(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`ha-module: ${error.message}`);
      return EXIT.usage;
    }
    throw error;
  }
  let service: RunningService;
  try {
    service = await startService(config, settings, operations, timers);
  } catch (error) {
    if (error instanceof DataDirInUseError || error instanceof ConfigError) {
      console.error(`ha-module: ${error.message}`);
      return EXIT.usage;
    }
    if (error instanceof StartupError) {
      console.error(`ha-module: ${error.message}`);
      return EXIT.failure;
    }
    throw error;
  }
  // Listen for the signals before the banner: whoever waits for it may signal at once.
  const stopRequested = new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  console.log(service.banner);
  await stopRequested;
  await service.close();
  console.log("ha-module stopped");
  return 0;
}

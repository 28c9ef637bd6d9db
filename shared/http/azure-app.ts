import type { Meter } from "@opentelemetry/api";
import type { TelemetryFailure } from "../contract/lease-view.js";
import { ConfigError } from "../config/config-error.js";
import { checksCallersItself, loadAuthConfig, type AuthConfig } from "../config/auth-config.js";
import { createAccess, PLATFORM_KEYS, type Access } from "./access.js";
import type { Env } from "../config/env.js";
import { DEFAULT_SWEEP_SCHEDULE } from "../config/members-config.js";
import { loadServerConfig, type ServerConfig, type StoreConfig } from "../config/server-config.js";
import type { LeaseStore } from "../lease/lease-store.js";
import type { MemberStore } from "../members/member-store.js";
import type { TokenSecretStore } from "../service/token-keys.js";
import { registerFunctions, type FunctionsApp } from "./register-functions.js";
import { registerTimers, type TimerApp } from "./register-timers.js";
import type { Operation } from "./route.js";
import { createRuntime, type Runtime, type RuntimeTelemetry } from "./runtime.js";
import type { TimerOperation } from "./timer.js";

/** The configured store as the runtime takes it (shared/store/create-table-store.ts and create-cosmos-store.ts make one). */
export interface ConfiguredStore {
  readonly store: LeaseStore;
  readonly members: MemberStore;
  /** Where the token secret is kept when HA_LEASE_SECRET is not set (the lease store's own row). */
  readonly secrets?: TokenSecretStore;
  /** The optional start-up step (HA_STORE_CREATE). */
  prepare(options?: { abortSignal?: AbortSignal }): Promise<void>;
}

/** What the Azure entry point starts from; tests give their own set-up steps. */
export interface AzureAppParts {
  readonly app: FunctionsApp & TimerApp;
  readonly operations: readonly Operation[];
  readonly timers: readonly TimerOperation[];
  readonly env: Env;
  /** Sets up telemetry and returns the runtime's meter (azure-telemetry.ts). */
  readonly setUpTelemetry: (env: Env) => Promise<Meter | undefined>;
  /** Makes the configured store's clients, without I/O (shared/store/create-table-store.ts, create-cosmos-store.ts); may load the store's SDK first. */
  readonly createStore: (config: StoreConfig) => ConfiguredStore | Promise<ConfiguredStore>;
  /** Where the one start-up report of a failure goes; console.error (the worker's log) by default. */
  readonly logError?: (message: string) => void;
}

/**
 * Starts the app in Azure, in the order that keeps it answering whatever goes wrong:
 *
 *  1. every function of the route table and every timer is registered first. Reading the
 *     settings cannot throw here (a bad one is kept as the error to answer with), so the
 *     Functions host always indexes as many functions as functions/routes.ts declares;
 *  2. telemetry is set up; a set-up that throws (a host without log hooks, a connection
 *     string the exporter refuses) is never a throw out of the entry point (which would leave
 *     the host an app of no functions);
 *  3. the store's clients and the runtime are made.
 *
 * With any auth setting (HA_AUTH_TENANT_ID, HA_AUTH_AUDIENCE, HA_API_KEYS, HA_GRANTS) the
 * functions are registered anonymous and this code checks every caller and its grants
 * (shared/http/access.ts); without, the Functions host checks its function keys, as before.
 *
 * A bad or missing setting is logged once, here, and every request, health included, is then
 * answered 503 Misconfigured with the message that names the setting and what to change
 * (dispatch.ts); the timers skip their runs. A fixed setting restarts the app.
 *
 * Telemetry that cannot start is the exception: monitoring must never stop the primaries it
 * watches. The app then serves as usual without the service's metrics; the failure is logged
 * once, here, and every health answer carries it with its fix (`telemetry`), so a deployment
 * that asked for telemetry never runs blind without saying so where a probe looks.
 *
 * Resolves when start-up is over (the entry point awaits it, so the worker reports the app
 * loaded only then); the runtime it gives, or the error, is what each request waits for.
 */
export async function startAzureApp(parts: AzureAppParts): Promise<void> {
  const logError = parts.logError ?? ((message: string) => console.error(message));
  let settings: ServerConfig | ConfigError;
  let auth: AuthConfig | undefined;
  try {
    settings = loadServerConfig(parts.env);
    auth = loadAuthConfig(parts.env);
  } catch (error) {
    settings = asConfigError(error, "HA_STORE");
  }
  // Any auth setting makes this code check callers (anonymous at the platform); a bad one
  // leaves every request to the runtime, which answers 503 Misconfigured: closed, never open.
  const access = !checksCallersItself(parts.env) ? PLATFORM_KEYS : auth === undefined || settings instanceof ConfigError ? UNTIL_FIXED : createAccess(auth);
  // Requests that arrive before start-up is over wait for it.
  let serve: (() => Promise<Runtime>) | undefined;
  let startUpOver!: () => void;
  const startedUp = new Promise<void>((resolve) => (startUpOver = resolve));
  const runtime = async (): Promise<Runtime> => {
    if (serve === undefined) await startedUp;
    return (serve as () => Promise<Runtime>)();
  };
  const schedule = settings instanceof ConfigError ? DEFAULT_SWEEP_SCHEDULE : settings.members.sweepSchedule;
  registerFunctions(parts.app, parts.operations, runtime, access);
  registerTimers(parts.app, parts.timers, runtime, schedule);

  let meter: Meter | undefined;
  let telemetryFailure: TelemetryFailure | undefined;
  try {
    meter = await parts.setUpTelemetry(parts.env);
  } catch (error) {
    telemetryFailure = telemetryFailureOf(error);
    logError(`ha-module: the service runs without telemetry: ${telemetryFailure.error} ${telemetryFailure.fix} GET /api/health shows this too.`);
  }

  const made = settings instanceof ConfigError ? settings : await makeRuntime(settings, { ...(meter === undefined ? {} : { meter }), ...(telemetryFailure === undefined ? {} : { failure: telemetryFailure }) }, parts.createStore);
  if (made instanceof ConfigError) {
    logError(`ha-module: every request is answered 503 Misconfigured until ${made.setting} is fixed: ${made.message}`);
    serve = () => Promise.reject(made);
  } else {
    serve = made;
  }
  startUpOver();
}

/**
 * The runtime over the configured store, its optional start-up step (HA_STORE_CREATE) run on
 * the first request and retried after a failure. Making the store's clients does no I/O; a
 * client that refuses its settings names the store setting it came from.
 */
async function makeRuntime(config: ServerConfig, telemetry: RuntimeTelemetry, createStore: AzureAppParts["createStore"]): Promise<ConfigError | (() => Promise<Runtime>)> {
  let configured: ConfiguredStore;
  let runtime: Runtime;
  try {
    configured = await createStore(config.store);
    runtime = createRuntime(config, { leases: configured.store, members: configured.members, ...(configured.secrets === undefined ? {} : { secrets: configured.secrets }), telemetry });
  } catch (error) {
    return asConfigError(error, storeSetting(config.store));
  }
  let ready: Promise<Runtime> | undefined;
  return () => {
    ready ??= configured.prepare({ abortSignal: AbortSignal.timeout(10_000) }).then(
      // The first requests wait (up to one store call's budget) for the token secret kept
      // in the store, so that this instance's tokens are taken by the others from the first.
      async () => {
        await runtime.tokenKeys.settled(config.storeTimeoutMs);
        return runtime;
      },
      (error: unknown) => {
        ready = undefined;
        throw error;
      },
    );
    return ready;
  };
}

/** Auth settings that do not load: every request reaches the runtime, which refuses it with the ConfigError. */
const UNTIL_FIXED: Access = { authLevel: "anonymous", authenticate: () => Promise.resolve({ kind: "unchecked" }), authorize: () => ({ mayRevoke: false, refusal: () => undefined }) };

/** The setting that turns telemetry on (Bicep always sets it). */
const TELEMETRY_SETTING = "APPLICATIONINSIGHTS_CONNECTION_STRING";

/**
 * What health shows of a telemetry set-up that threw. A host without log hooks (older than
 * 4.34, whose worker is older than 3.10) is told to move on, since no setting of ours fixes
 * it; anything else is the connection string (or its authentication string) being refused.
 */
function telemetryFailureOf(error: unknown): TelemetryFailure {
  const message = messageOf(error);
  const unsetIt = `or unset ${TELEMETRY_SETTING} to run without telemetry.`;
  return {
    status: "failed",
    setting: TELEMETRY_SETTING,
    error: `Telemetry could not start: ${message}`,
    fix: /log hooks/i.test(message)
      ? `Run the app on Functions host 4.34 or later (Node.js worker 3.10 or later), whose log hooks the Functions OpenTelemetry instrumentation needs, ${unsetIt}`
      : `Fix ${TELEMETRY_SETTING} (and APPLICATIONINSIGHTS_AUTHENTICATION_STRING, if set), ${unsetIt}`,
  };
}

/** The setting a store client's own refusal comes from. */
function storeSetting(store: StoreConfig): string {
  if (store.kind === "cosmos") return store.connection.mode === "key" ? "HA_COSMOS_KEY" : "HA_COSMOS_ENDPOINT";
  if (store.kind === "postgres") return "HA_POSTGRES_URL";
  return store.connection.mode === "identity" ? "HA_TABLE_ENDPOINT" : "HA_TABLE_CONNECTION_STRING";
}

function asConfigError(error: unknown, setting: string): ConfigError {
  if (error instanceof ConfigError) return error;
  return new ConfigError(setting, `${setting} was refused: ${messageOf(error)} Check its value.`);
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return /[.!?]$/.test(message) ? message : `${message}.`;
}

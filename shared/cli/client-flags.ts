import type { OptionSpec } from "./command-spec.js";
import { UsageError } from "./usage-error.js";
import { HaClient } from "../sdk/transport/ha-client.js";
import { ManagedIdentityCredential, type BearerTokenProvider } from "../sdk/auth/managed-identity.js";

export const DEFAULT_ENDPOINT = "http://127.0.0.1:7071/api";

export interface ClientSettings {
  /** As given: one URL, or several separated by commas (HaClient checks and splits them). */
  readonly endpoint: string;
  readonly apiKey: string | undefined;
  /** With --auth managed-identity (HA_AUTH), the identity's tokens; null: send the key, if any. */
  readonly credential: BearerTokenProvider | null;
}

/** The options every client command takes (primary, elect, run, release). */
export const CLIENT_OPTIONS: readonly OptionSpec[] = [
  {
    name: "endpoint",
    value: "URL",
    help: `the service's base URL, ending in /api; several instances' separated by commas,\neach call going to the next when one fails (env HA_ENDPOINT, default ${DEFAULT_ENDPOINT})`,
  },
  { name: "key", value: "KEY", help: "the function key, sent in x-functions-key (env HA_API_KEY)" },
  { name: "auth", value: "MODE", help: "key (default), or managed-identity: send this machine's managed identity's\nMicrosoft Entra token instead of a key (env HA_AUTH)" },
  { name: "client-id", value: "ID", help: "with managed-identity: the user-assigned identity's client id (env HA_CLIENT_ID;\ndefault: the system-assigned one)" },
  { name: "audience", value: "AUD", help: "with managed-identity: the service's audience, api://… or its client id\n(env HA_AUTH_AUDIENCE)" },
];

/** --endpoint and --key, with the environment filling what the flags leave out. */
export function clientSettings(values: Readonly<Record<string, string | boolean | undefined>>, env: NodeJS.ProcessEnv): ClientSettings {
  const endpoint = stringValue(values["endpoint"]) ?? nonEmpty(env["HA_ENDPOINT"]) ?? DEFAULT_ENDPOINT;
  const apiKey = stringValue(values["key"]) ?? nonEmpty(env["HA_API_KEY"]);
  const auth = (stringValue(values["auth"]) ?? nonEmpty(env["HA_AUTH"]) ?? "key").toLowerCase();
  if (auth !== "key" && auth !== "managed-identity") throw new UsageError(`--auth must be key or managed-identity (got ${JSON.stringify(auth)}).`);
  if (auth === "key") return { endpoint, apiKey, credential: null };
  const audience = stringValue(values["audience"]) ?? nonEmpty(env["HA_AUTH_AUDIENCE"]?.split(",")[0]);
  if (audience === undefined) {
    throw new UsageError("--auth managed-identity needs --audience (or HA_AUTH_AUDIENCE): the service's application id URI (api://…) or client id, what its HA_AUTH_AUDIENCE accepts.");
  }
  const clientId = stringValue(values["client-id"]) ?? nonEmpty(env["HA_CLIENT_ID"]);
  try {
    return { endpoint, apiKey, credential: new ManagedIdentityCredential({ audience, ...(clientId === undefined ? {} : { clientId }), env }) };
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(error.message);
    throw error;
  }
}

/** The HaClient of the client flags: the managed identity's tokens, or the key. */
export function clientOf(client: ClientSettings): HaClient {
  try {
    return new HaClient({ endpoint: client.endpoint, ...(client.apiKey === undefined ? {} : { apiKey: client.apiKey }), credential: client.credential });
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(error.message);
    throw error;
  }
}

function stringValue(value: string | boolean | undefined): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}

/** Exactly one positional utype. */
export function onlyUtype(command: string, positionals: readonly string[]): string {
  if (positionals.length !== 1 || positionals[0] === "") {
    throw new UsageError(`${command} takes exactly one utype (got ${positionals.length === 0 ? "none" : positionals.map((p) => JSON.stringify(p)).join(" ")}).`);
  }
  return positionals[0]!;
}

export function parsePort(flag: string, value: string | boolean | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = typeof value === "string" && /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new UsageError(`--${flag} must be a port number from 0 to 65535 (got ${JSON.stringify(value)}).`);
  }
  return port;
}

export function parseMs(flag: string, value: string | boolean | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = typeof value === "string" && /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(ms) || ms < 1) {
    throw new UsageError(`--${flag} must be a whole number of milliseconds, at least 1 (got ${JSON.stringify(value)}).`);
  }
  return ms;
}

const DURATION_UNITS_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/**
 * A duration with its unit, as consul and kubectl take them: `500ms`, `10s`, `2m`, `1h`,
 * or a bare `0`. A bare number other than 0 is refused: `--timeout 10` could mean 10 ms
 * or 10 s, and guessing wrong is a surprise either way.
 */
export function parseDuration(flag: string, value: string | boolean | undefined): number | undefined {
  if (value === undefined) return undefined;
  const found = typeof value === "string" ? /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)?$/.exec(value) : null;
  const amount = found === null ? Number.NaN : Number(found[1]);
  const unit = found?.[2] as keyof typeof DURATION_UNITS_MS | undefined;
  if (!Number.isFinite(amount) || (unit === undefined && amount !== 0)) {
    throw new UsageError(`--${flag} must be a duration with a unit, such as 500ms, 10s or 2m, or 0 (got ${JSON.stringify(value)}).`);
  }
  const ms = Math.round(amount * (unit === undefined ? 0 : DURATION_UNITS_MS[unit]));
  if (!Number.isSafeInteger(ms)) throw new UsageError(`--${flag} is too long (got ${JSON.stringify(value)}).`);
  return ms;
}

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

/** One or more amounts, each with its unit, as Go's time.ParseDuration (and so Docker) writes them. */
const DURATION = /^(?:[0-9]+(?:\.[0-9]+)?(?:ms|s|m|h))+$/;

/**
 * The command line's one reading of a duration, for every flag that takes one (--timeout,
 * the health flags, …): amounts with their units as Docker (Go's time.ParseDuration)
 * writes them, `500ms`, `10s`, `2m`, `1m30s`, `1.5h`, or a bare `0`. A bare number other
 * than 0 is refused: `--timeout 10` could mean 10 ms or 10 s, and guessing wrong is a
 * surprise either way. Whole milliseconds (rounded); at least `minMs` (0 by default), so a
 * flag for which 0 means nothing says so by name.
 */
export function parseDuration(flag: string, value: string | boolean | undefined, { minMs = 0 }: { readonly minMs?: number } = {}): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || (value !== "0" && !DURATION.test(value))) {
    throw new UsageError(`--${flag} must be a duration with a unit, such as 500ms, 10s, 2m or 1m30s${minMs > 0 ? "" : ", or 0"} (got ${JSON.stringify(value)}).`);
  }
  let exact = 0;
  for (const [, amount, unit] of value.matchAll(/([0-9.]+)(ms|s|m|h)/g)) exact += Number(amount) * DURATION_UNITS_MS[unit as keyof typeof DURATION_UNITS_MS];
  const ms = Math.round(exact);
  if (!Number.isSafeInteger(ms)) throw new UsageError(`--${flag} is too long (got ${JSON.stringify(value)}).`);
  if (ms < minMs) throw new UsageError(`--${flag} must be ${minMs <= 1 ? "longer than 0, such as 5s" : `at least ${minMs}ms`} (got ${JSON.stringify(value)}).`);
  return ms;
}

import { ConfigError } from "./config-error.js";
import { readString, type Env } from "./env.js";

/**
 * Who may call the service and what each caller may write (docs/deploy.md#how-workers-authenticate):
 * Microsoft Entra tokens of the configured tenant and audience, named keys, and the grants.
 */
export interface AuthConfig {
  /** Bearer tokens are accepted when set (HA_AUTH_TENANT_ID and HA_AUTH_AUDIENCE). */
  readonly identity: IdentityConfig | undefined;
  /** Named keys (HA_API_KEYS, and on the local host HA_API_KEY as the key named "default"). */
  readonly keys: readonly NamedKey[];
  /** HA_GRANTS; undefined: every authenticated caller may write anything, as before grants existed. */
  readonly grants: readonly Grant[] | undefined;
}

export interface IdentityConfig {
  /** The Microsoft Entra tenant (directory) id whose tokens are accepted. */
  readonly tenantId: string;
  /** The accepted `aud` values: the API's application id URI and/or its client id. */
  readonly audiences: readonly string[];
  /** Where the tenant's OpenID metadata is, without a trailing slash: https://login.microsoftonline.com by default. */
  readonly authority: string;
}

export interface NamedKey {
  readonly name: string;
  readonly value: string;
}

/**
 * One grant: `callers` (object or application ids of identities, `key:<name>`, or `*` for
 * every authenticated caller) may hold and release the roles matching `hold`, revoke the
 * roles matching `revoke`, and join and leave the groups matching `join`. Patterns are
 * exact names, or contain `*` for any run of characters.
 */
export interface Grant {
  readonly callers: readonly string[];
  readonly hold: readonly string[];
  readonly revoke: readonly string[];
  readonly join: readonly string[];
}

export const DEFAULT_AUTHORITY = "https://login.microsoftonline.com";
/** The name HA_API_KEY's key has in grants (`key:default`), as Azure names its first function key. */
export const DEFAULT_KEY_NAME = "default";

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KEY_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** The id characters of utypes and groups (docs/api.md#input-rules), and `*`. */
const PATTERN = /^[A-Za-z0-9._:*-]{1,128}$/;
const MIN_KEY_LENGTH = 16;
const GRANT_FIELDS = ["callers", "hold", "revoke", "join"] as const;

/**
 * The settings that make this code check callers itself. Read without validation: in Azure
 * the functions are registered before settings are checked, and any of these makes them
 * anonymous at the platform, so that a bad value is a 503 for everyone, never an open door.
 */
export const AUTH_SETTINGS = ["HA_AUTH_TENANT_ID", "HA_AUTH_AUDIENCE", "HA_API_KEYS", "HA_GRANTS"] as const;

export function checksCallersItself(env: Env): boolean {
  return AUTH_SETTINGS.some((name) => readString(env, name) !== undefined);
}

/**
 * Reads and validates the auth settings; a bad value throws a ConfigError naming it.
 * `defaultKey` is the local host's HA_API_KEY, kept as the key named "default".
 */
export function loadAuthConfig(env: Env, defaultKey?: string): AuthConfig {
  const identity = loadIdentity(env);
  const keys = loadKeys(env, defaultKey);
  const grants = loadGrants(env, keys, identity !== undefined);
  return { identity, keys, grants };
}

function loadIdentity(env: Env): IdentityConfig | undefined {
  const tenantId = readString(env, "HA_AUTH_TENANT_ID");
  const audience = readString(env, "HA_AUTH_AUDIENCE");
  if (tenantId === undefined && audience === undefined) {
    if (readString(env, "HA_AUTH_AUTHORITY") !== undefined) {
      throw new ConfigError("HA_AUTH_AUTHORITY", "HA_AUTH_AUTHORITY is set but HA_AUTH_TENANT_ID and HA_AUTH_AUDIENCE are not: set both to accept Microsoft Entra tokens, or unset HA_AUTH_AUTHORITY.");
    }
    return undefined;
  }
  if (tenantId === undefined) {
    throw new ConfigError("HA_AUTH_TENANT_ID", "HA_AUTH_AUDIENCE is set but HA_AUTH_TENANT_ID is not: set it to your Microsoft Entra tenant id (az account show --query tenantId -o tsv).");
  }
  if (!GUID.test(tenantId)) {
    throw new ConfigError("HA_AUTH_TENANT_ID", `HA_AUTH_TENANT_ID must be the tenant's id, a GUID such as 72f988bf-86f1-41af-91ab-2d7cd011db47 (got "${tenantId.slice(0, 80)}"): az account show --query tenantId -o tsv.`);
  }
  if (audience === undefined) {
    throw new ConfigError("HA_AUTH_AUDIENCE", "HA_AUTH_TENANT_ID is set but HA_AUTH_AUDIENCE is not: set it to the application id URI (api://…) or client id that workers request tokens for.");
  }
  const audiences = audience.split(",").map((value) => value.trim()).filter((value) => value !== "");
  if (audiences.length === 0 || audiences.some((value) => /\s/.test(value))) {
    throw new ConfigError("HA_AUTH_AUDIENCE", `HA_AUTH_AUDIENCE must be one or more audiences separated by commas, such as api://ha-module or a client id (got "${audience.slice(0, 120)}").`);
  }
  return { tenantId: tenantId.toLowerCase(), audiences, authority: loadAuthority(env) };
}

/** https, or http on this machine only (a test's local issuer): tokens are trusted on what this URL serves. */
function loadAuthority(env: Env): string {
  const raw = readString(env, "HA_AUTH_AUTHORITY");
  if (raw === undefined) return DEFAULT_AUTHORITY;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  const loopback = url !== undefined && url.protocol === "http:" && (url.hostname === "127.0.0.1" || url.hostname === "localhost" || url.hostname === "[::1]");
  if (url === undefined || (url.protocol !== "https:" && !loopback) || url.search !== "" || url.hash !== "") {
    throw new ConfigError("HA_AUTH_AUTHORITY", `HA_AUTH_AUTHORITY must be an https URL such as ${DEFAULT_AUTHORITY} (the Microsoft Entra sign-in host of your cloud), or unset it (got "${raw.slice(0, 120)}").`);
  }
  return raw.replace(/\/+$/, "");
}

function loadKeys(env: Env, defaultKey: string | undefined): NamedKey[] {
  const keys: NamedKey[] = defaultKey === undefined ? [] : [{ name: DEFAULT_KEY_NAME, value: defaultKey }];
  const raw = readString(env, "HA_API_KEYS");
  if (raw === undefined) return keys;
  refuseUnresolvedReference("HA_API_KEYS", raw);
  for (const [index, pair] of raw.split(",").entries()) {
    const at = pair.indexOf("=");
    const name = pair.slice(0, Math.max(0, at)).trim();
    const value = pair.slice(at + 1).trim();
    const which = `entry ${index + 1} of HA_API_KEYS`;
    if (at < 0 || !KEY_NAME.test(name)) {
      throw new ConfigError("HA_API_KEYS", `HA_API_KEYS must be name=key pairs separated by commas, names of 1–64 letters, digits, '.', '_' or '-': ${which} is not.`);
    }
    if (value.length < MIN_KEY_LENGTH || /[\s,]/.test(value)) {
      throw new ConfigError("HA_API_KEYS", `The key "${name}" in HA_API_KEYS must be at least ${MIN_KEY_LENGTH} characters without spaces or commas; use a random value such as the output of \`openssl rand -base64 32\`.`);
    }
    if (keys.some((key) => key.name === name)) {
      throw new ConfigError("HA_API_KEYS", `HA_API_KEYS names the key "${name}" twice${name === DEFAULT_KEY_NAME ? " (HA_API_KEY is the key named default)" : ""}: give each key its own name.`);
    }
    keys.push({ name, value });
  }
  return keys;
}

function loadGrants(env: Env, keys: readonly NamedKey[], identity: boolean): Grant[] | undefined {
  const raw = readString(env, "HA_GRANTS");
  if (raw === undefined) return undefined;
  refuseUnresolvedReference("HA_GRANTS", raw);
  if (!identity && keys.length === 0) {
    throw new ConfigError("HA_GRANTS", "HA_GRANTS is set, but no caller proves who it is: set HA_AUTH_TENANT_ID and HA_AUTH_AUDIENCE (identities), or HA_API_KEYS (named keys), or unset HA_GRANTS.");
  }
  let document: unknown;
  try {
    document = JSON.parse(raw);
  } catch (error) {
    throw new ConfigError("HA_GRANTS", `HA_GRANTS must be JSON, an array of grants such as [{"callers":["key:head-a"],"hold":["scheduler-a"]}]: ${(error as Error).message}.`);
  }
  if (!Array.isArray(document)) {
    throw new ConfigError("HA_GRANTS", 'HA_GRANTS must be a JSON array of grants such as [{"callers":["key:head-a"],"hold":["scheduler-a"]}].');
  }
  return document.map((entry: unknown, index) => parseGrant(entry, `grant ${index + 1} of HA_GRANTS`, keys, identity));
}

function parseGrant(entry: unknown, which: string, keys: readonly NamedKey[], identity: boolean): Grant {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    throw new ConfigError("HA_GRANTS", `${which} must be an object with "callers" and some of "hold", "revoke", "join".`);
  }
  const record = entry as Record<string, unknown>;
  const unknown = Object.keys(record).find((field) => !(GRANT_FIELDS as readonly string[]).includes(field));
  if (unknown !== undefined) {
    throw new ConfigError("HA_GRANTS", `${which} has the field "${unknown.slice(0, 40)}"; a grant has only ${GRANT_FIELDS.map((field) => `"${field}"`).join(", ")}.`);
  }
  const list = (field: (typeof GRANT_FIELDS)[number]): string[] => {
    const value = record[field] ?? [];
    if (!Array.isArray(value) || value.some((item) => typeof item !== "string")) {
      throw new ConfigError("HA_GRANTS", `"${field}" of ${which} must be an array of strings.`);
    }
    return value as string[];
  };
  const callers = list("callers");
  if (callers.length === 0) throw new ConfigError("HA_GRANTS", `${which} names no callers: list object ids, application ids, "key:<name>" or "*".`);
  for (const caller of callers) checkCaller(caller, which, keys, identity);
  const grant = { callers, hold: list("hold"), revoke: list("revoke"), join: list("join") };
  for (const field of ["hold", "revoke", "join"] as const) {
    const bad = grant[field].find((pattern) => !PATTERN.test(pattern));
    if (bad !== undefined) {
      throw new ConfigError("HA_GRANTS", `"${field}" of ${which} has the pattern "${bad.slice(0, 130)}": a pattern is 1–128 of A–Z, a–z, 0–9, '.', '_', ':', '-', with '*' for any run of characters.`);
    }
  }
  return grant;
}

function checkCaller(caller: string, which: string, keys: readonly NamedKey[], identity: boolean): void {
  if (caller === "*") return;
  if (caller.startsWith("key:")) {
    const name = caller.slice(4);
    if (!keys.some((key) => key.name === name)) {
      const known = keys.length === 0 ? "no keys are configured (HA_API_KEYS)" : `the keys are ${keys.map((key) => key.name).join(", ")}`;
      throw new ConfigError("HA_GRANTS", `${which} names "${caller.slice(0, 70)}", but ${known}: add that key to HA_API_KEYS or fix the name.`);
    }
    return;
  }
  if (!GUID.test(caller)) {
    throw new ConfigError("HA_GRANTS", `${which} names the caller "${caller.slice(0, 70)}": a caller is an identity's object id or application (client) id (a GUID), "key:<name>", or "*".`);
  }
  if (!identity) {
    throw new ConfigError("HA_GRANTS", `${which} names the identity ${caller}, but tokens are not accepted: set HA_AUTH_TENANT_ID and HA_AUTH_AUDIENCE.`);
  }
}

/** An app setting that still reads @Microsoft.KeyVault(…) was not resolved by the platform. */
function refuseUnresolvedReference(setting: string, value: string): void {
  if (/^@Microsoft\.KeyVault\(/i.test(value)) {
    throw new ConfigError(
      setting,
      `${setting} is a Key Vault reference the platform could not resolve: give the app's identity the Key Vault Secrets User role on the vault (and keyVaultReferenceIdentity its client id), check the secret's URI, then restart the app.`,
    );
  }
}

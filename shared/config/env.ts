import { isIP } from "node:net";
import { ConfigError } from "./config-error.js";

/** The environment as configuration reads it: only the HA_* names and PORT matter. */
export type Env = Readonly<Record<string, string | undefined>>;

/** The variable's trimmed value, or undefined when it is unset or blank. */
export function readString(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

export function readInteger(
  env: Env,
  name: string,
  fallback: number,
  { min, max, example }: { min: number; max: number; example: number },
): number {
  const raw = readString(env, name);
  if (raw === undefined) return fallback;
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(
      name,
      `${name} must be a whole number from ${min} to ${max} (got "${raw}"). Set it to, for example, ${example}, or unset it for the default ${fallback}.`,
    );
  }
  return value;
}

export function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = readString(env, name);
  if (raw === undefined) return fallback;
  const lower = raw.toLowerCase();
  if (lower === "true" || lower === "1") return true;
  if (lower === "false" || lower === "0") return false;
  throw new ConfigError(name, `${name} must be true or false (got "${raw}").`);
}

export function readChoice<T extends string>(
  env: Env,
  name: string,
  choices: readonly T[],
  fallback: T,
): T {
  const raw = readString(env, name);
  if (raw === undefined) return fallback;
  const found = choices.find((choice) => choice === raw.toLowerCase());
  if (found === undefined) {
    throw new ConfigError(name, `${name} must be one of ${choices.join(", ")} (got "${raw}").`);
  }
  return found;
}

export function readHttpsUrl(env: Env, name: string, example: string): string | undefined {
  const raw = readString(env, name);
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `${name} must be an absolute URL such as ${example} (got "${raw}").`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ConfigError(name, `${name} must be an http(s) URL such as ${example} (got "${raw}").`);
  }
  return raw.replace(/\/+$/, "");
}

/**
 * An address to listen on: an IPv4 or IPv6 literal (0.0.0.0 or :: for every interface),
 * or `localhost`. Host names are refused: one that resolves to several addresses would
 * listen on only one of them, silently.
 */
export function readListenAddress(env: Env, name: string, fallback: string): string {
  const raw = readString(env, name);
  if (raw === undefined) return fallback;
  const address = raw.startsWith("[") && raw.endsWith("]") ? raw.slice(1, -1) : raw;
  if (isIP(address) === 0 && address !== "localhost") {
    throw new ConfigError(
      name,
      `${name} must be an IP address of this machine to listen on (got "${raw}"): ${fallback} (the default) for this machine only, 0.0.0.0 (or ::) for every interface, or one interface's address.`,
    );
  }
  return address;
}

/**
 * Checks for options where they enter the SDK. Each throws a TypeError whose message names
 * the option and says what is expected, in the style "Expected `x` to be …, got …".
 */

import { addressLength, hasControlCharacter, ID_PATTERN, isDotSegment, MAX_ADDRESS_LENGTH } from "../../contract/input-rules.js";

/** The SDK's wait before its first answer tells it I (`retryDelayInMs`), for every SDK object alike. */
export const DEFAULT_RETRY_DELAY_MS = 1000;

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === "number" || typeof value === "boolean" || value === null || value === undefined) return String(value);
  return Array.isArray(value) ? "an array" : `a ${typeof value}`;
}

/** An options argument itself: an object, else a TypeError that shows one (`example`). */
export function checkOptionsObject(name: string, value: unknown, example: string): void {
  if (typeof value !== "object" || value === null) throw new TypeError(`Expected ${name} to be an object such as ${example}.`);
}

/** utype and uuid: 1–128 characters of [A-Za-z0-9._:-], not "." or "..", as the service requires. */
export function checkId(name: string, value: unknown): string {
  if (typeof value !== "string" || !ID_PATTERN.test(value)) {
    throw new TypeError(`Expected \`${name}\` to be 1–128 characters of A–Z, a–z, 0–9, '.', '_', ':' or '-', got ${describe(value)}.`);
  }
  if (isDotSegment(value)) {
    throw new TypeError(`Expected \`${name}\` to be a name a URL path can address, not ${describe(value)}.`);
  }
  return value;
}

export function checkOptionalAddress(name: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || value === "" || addressLength(value) > MAX_ADDRESS_LENGTH || hasControlCharacter(value)) {
    throw new TypeError(
      `Expected \`${name}\` to be where this participant can be reached (1–${MAX_ADDRESS_LENGTH} printable characters, e.g. "10.0.0.4:5800"), got ${describe(value)}.`,
    );
  }
  return value;
}

/** The service's base URL, without a trailing slash. */
export function checkEndpoint(name: string, value: unknown): string {
  let url: URL | undefined;
  try {
    url = typeof value === "string" ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new TypeError(`Expected \`${name}\` to be an http(s) URL such as http://127.0.0.1:7071/api, got ${describe(value)}.`);
  }
  return (value as string).replace(/\/+$/, "");
}

/**
 * One endpoint or several (docs/sdk.md#several-endpoints): a URL, an array of them, or one
 * string of them separated by commas, as HA_ENDPOINT gives them. Each is checked as
 * checkEndpoint does (named by its place in the list); none may be given twice.
 */
export function checkEndpoints(name: string, value: unknown): string[] {
  const listed = Array.isArray(value) ? (value as unknown[]) : typeof value === "string" && value.includes(",") ? value.split(",").map((part) => part.trim()) : [value];
  if (listed.length === 0) throw new TypeError(`Expected \`${name}\` to name at least one URL such as http://127.0.0.1:7071/api, got an empty list.`);
  const endpoints = listed.map((each, index) => checkEndpoint(listed.length === 1 && !Array.isArray(value) ? name : `${name}[${index}]`, each));
  const seen = new Map<string, number>();
  endpoints.forEach((endpoint, index) => {
    const key = sameEndpointKey(endpoint);
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      throw new TypeError(`Expected \`${name}\` to list each endpoint once, but ${endpoint} is at places ${earlier} and ${index}: remove one (a list names several instances of the service).`);
    }
    seen.set(key, index);
  });
  return endpoints;
}

/** Two spellings of one URL (host case, default port) are one endpoint. */
function sameEndpointKey(endpoint: string): string {
  const url = new URL(endpoint);
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}${url.search}`;
}

export function checkOptionalString(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "") {
    throw new TypeError(`Expected \`${name}\` to be a non-empty string, got ${describe(value)}.`);
  }
  return value;
}

export function checkPositiveMs(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new TypeError(`Expected \`${name}\` to be a positive number of milliseconds, got ${describe(value)}.`);
  }
  return value;
}

export function checkNonNegativeMs(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new TypeError(`Expected \`${name}\` to be 0 or a positive number of milliseconds, got ${describe(value)}.`);
  }
  return value;
}

export function checkOptionalSignal(name: string, value: unknown): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof AbortSignal)) {
    throw new TypeError(`Expected \`${name}\` to be an AbortSignal (from an AbortController), got ${describe(value)}.`);
  }
  return value;
}

export function checkOptionalFunction<T>(name: string, value: T | undefined): T | undefined {
  if (value !== undefined && typeof value !== "function") {
    throw new TypeError(`Expected \`${name}\` to be a function, got ${describe(value)}.`);
  }
  return value;
}

import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./usage.js";

export const DEFAULT_ENDPOINT = "http://127.0.0.1:7071/api";

export interface ClientSettings {
  readonly endpoint: string;
  readonly apiKey: string | undefined;
}

type Options = NonNullable<ParseArgsConfig["options"]>;

const CLIENT_OPTIONS = {
  endpoint: { type: "string" },
  key: { type: "string" },
} as const satisfies Options;

/**
 * Parses a command's flags strictly (an unknown flag is a UsageError) together with the
 * flags every client command shares; the environment fills what the flags leave out.
 */
export function parseCommandLine<O extends Options>(
  args: string[],
  options: O,
  env: NodeJS.ProcessEnv,
): { values: Record<string, string | boolean | undefined>; positionals: string[]; client: ClientSettings } {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...CLIENT_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const endpoint = (values["endpoint"] as string | undefined) ?? nonEmpty(env["HA_ENDPOINT"]) ?? DEFAULT_ENDPOINT;
  const apiKey = (values["key"] as string | undefined) ?? nonEmpty(env["HA_API_KEY"]);
  return { values, positionals: parsed.positionals, client: { endpoint, apiKey } };
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}

/** Exactly one positional utype. */
export function onlyUtype(command: string, positionals: string[]): string {
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

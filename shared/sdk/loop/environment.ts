/**
 * The SDK's defaults from the environment, the same variables the CLI reads: HA_ENDPOINT
 * for `endpoint`, HA_API_KEY for `apiKey`. An option given in code always wins; a blank
 * variable counts as unset.
 */
export function environmentDefault(name: "HA_ENDPOINT" | "HA_API_KEY", env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

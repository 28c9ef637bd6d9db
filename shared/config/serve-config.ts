import { loadAuthConfig, type AuthConfig } from "./auth-config.js";
import { readBoolean, readInteger, readListenAddress, readString, type Env } from "./env.js";

export interface ServeSettings {
  /** The address to listen on (HA_HOST). */
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly inMemory: boolean;
  readonly apiKey: string | undefined;
  /** Keys (HA_API_KEY as "default", HA_API_KEYS), tokens (HA_AUTH_TENANT_ID, HA_AUTH_AUDIENCE) and grants (HA_GRANTS); by default `apiKey` alone. */
  readonly auth?: AuthConfig;
}

/** The local host's own settings (the server's are in loadServerConfig). */
export function loadServeSettings(env: Env): ServeSettings {
  const apiKey = readString(env, "HA_API_KEY");
  return {
    host: readListenAddress(env, "HA_HOST", "127.0.0.1"),
    port: readInteger(env, "PORT", 7071, { min: 0, max: 65_535, example: 7071 }),
    dataDir: readString(env, "HA_DATA_DIR") ?? ".ha-data",
    inMemory: readBoolean(env, "HA_IN_MEMORY", false),
    apiKey,
    auth: loadAuthConfig(env, apiKey),
  };
}

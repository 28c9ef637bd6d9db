import type { CommandSpec } from "../command-spec.js";

/**
 * `serve`'s entry in the command table, apart from serve.ts: the client commands and
 * `--help` must not load the server (the Azure SDKs, the embedded stores) just to start.
 */
export const serveSpec: CommandSpec = {
  name: "serve",
  synopsis: "",
  summary: "run the lease service locally, in a clone of the repository (npm start)",
  details: [
    "Serves the REST API on http://127.0.0.1:7071/api over an embedded Azurite (data in .ha-data/),",
    "or over the store the environment configures. Configured by environment only; the main ones:",
    "  PORT          the port (default 7071; 0 picks a free one)",
    "  HA_HOST       the address to listen on (default 127.0.0.1, this machine only; 0.0.0.0 for all)",
    "  HA_API_KEY    require this key in x-functions-key, as Azure does",
    "  HA_DATA_DIR   where the embedded store keeps its data (default .ha-data); HA_IN_MEMORY=true for none",
    "  HA_STORE      table (default) or cosmos; HA_TABLE_CONNECTION_STRING, HA_COSMOS_ENDPOINT, …",
    "  HA_INTERVAL_MS, HA_TIMEOUT_MS   I and T (default 1000 and 5000)",
    "Every setting is in docs/configuration.md. A bad one exits 2 naming it.",
  ].join("\n"),
  options: [],
};

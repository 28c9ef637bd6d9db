/**
 * The Azure Functions entry point (package.json "main"). It registers every route of the
 * shared route table with app.http; the local host (`npm start`) serves the same table.
 */
import { app } from "../shared/http/azure-functions.js";
import { loadServerConfig } from "../shared/config/server-config.js";
import { handleRoute } from "../shared/http/route.js";
import { ROUTE_METHODS } from "../shared/http/route.js";
import { createRuntime, type Runtime } from "../shared/http/runtime.js";
import { createConfiguredStore } from "../shared/store/create-store.js";
import { routes } from "./routes.js";

// Read and validate once, at start-up: a bad setting stops the app with a message naming it.
const config = loadServerConfig(process.env);
const configured = createConfiguredStore(config.store);
const runtime = createRuntime(config, configured.store);
let ready: Promise<Runtime> | undefined;

/** The store's optional start-up step runs once, on the first request; a failure is retried. */
function getRuntime(): Promise<Runtime> {
  ready ??= configured.prepare({ abortSignal: AbortSignal.timeout(10_000) }).then(
    () => runtime,
    (error: unknown) => {
      ready = undefined;
      throw error;
    },
  );
  return ready;
}

for (const route of routes) {
  app.http(route.name, {
    route: route.route,
    methods: ROUTE_METHODS,
    authLevel: "function",
    handler: (request, context) => handleRoute(route, request, context, getRuntime),
  });
}

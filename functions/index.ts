/**
 * The Azure Functions entry point (package.json "main"): the composition root for Azure.
 * It registers every operation of the route table as a function of its own (see
 * registerFunctions), and the sweeper as a timer trigger; the local host (`npm start`)
 * serves the same table and runs the same timer.
 */
import { loadServerConfig } from "../shared/config/server-config.js";
import { app } from "../shared/http/azure-functions.js";
import { setUpAzureTelemetry } from "../shared/http/azure-telemetry.js";
import { registerFunctions } from "../shared/http/register-functions.js";
import { registerTimers } from "../shared/http/register-timers.js";
import { createRuntime, type Runtime } from "../shared/http/runtime.js";
import { createConfiguredStore } from "../shared/store/create-store.js";
import { operations } from "./routes.js";
import { timers } from "./timers.js";

// Read and validate once, at start-up: a bad setting stops the app with a message naming it.
const config = loadServerConfig(process.env);
// Before the runtime: its instruments are made on the meter this returns (none without
// APPLICATIONINSIGHTS_CONNECTION_STRING). See docs/operations.md.
const meter = await setUpAzureTelemetry(process.env);
const configured = createConfiguredStore(config.store);
const runtime = createRuntime(config, configured.store, undefined, configured.members, meter === undefined ? {} : { meter });
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

registerFunctions(app, operations, getRuntime);
registerTimers(app, timers, getRuntime, config.members.sweepSchedule);

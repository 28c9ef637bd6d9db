/**
 * The Azure Functions entry point (package.json "main"): the composition root for Azure.
 * It registers every operation of the route table as a function of its own (see
 * registerFunctions), and the sweeper as a timer trigger, before anything that can fail;
 * then it sets up telemetry and the store (startAzureApp). The local host (`npm start`)
 * serves the same table and runs the same timer.
 */
import { app } from "../shared/http/azure-functions.js";
import { startAzureApp } from "../shared/http/azure-app.js";
import { setUpAzureTelemetry } from "../shared/http/azure-telemetry.js";
import { createTableStore } from "../shared/store/create-table-store.js";
import { operations } from "./routes.js";
import { timers } from "./timers.js";

await startAzureApp({
  app,
  operations,
  timers,
  env: process.env,
  setUpTelemetry: setUpAzureTelemetry,
  // The Cosmos SDK and pg are loaded only by an app that uses them: the bundle keeps each in a chunk of its own.
  createStore: async (store) => {
    if (store.kind === "cosmos") return (await import("../shared/store/create-cosmos-store.js")).createCosmosStore(store);
    if (store.kind === "postgres") return (await import("../shared/store/create-postgres-store.js")).createPostgresStore(store);
    return createTableStore(store);
  },
});

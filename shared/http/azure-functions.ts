/**
 * @azure/functions is a bundled CommonJS module whose named exports Node's ESM loader
 * cannot see, so its classes are taken from the default export here, once.
 */
import functions from "@azure/functions";

export const app = functions.app;
export const HttpRequest = functions.HttpRequest;
export type HttpRequest = functions.HttpRequest;
export const InvocationContext = functions.InvocationContext;
export type InvocationContext = functions.InvocationContext;
export type { HttpFunctionOptions, HttpMethod, HttpResponseInit } from "@azure/functions";
/** The module itself, for the Functions OpenTelemetry instrumentation (azure-telemetry.ts). */
export const azureFunctionsModule = functions;

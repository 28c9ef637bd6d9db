import type { HttpFunctionOptions, HttpMethod } from "./azure-functions.js";
import { PLATFORM_KEYS, type Access } from "./access.js";
import { handleRoute } from "./dispatch.js";
import { allowedMethods, ROUTE_METHODS, routesOf, type Operation } from "./route.js";
import type { Runtime } from "./runtime.js";

/** The part of @azure/functions' `app` that registration uses; tests pass a recorder. */
export interface FunctionsApp {
  http(name: string, options: HttpFunctionOptions): void;
}

/**
 * Registers the route table with the Functions host: one function per operation, named
 * for it and bound to its one method, so Application Insights counts and times heartbeats
 * apart from polls; and per route one function for the methods no operation serves, which
 * answers our 405 with `Allow` (the Functions host would answer 404). Functions may share a
 * route when their methods differ; every function of a route dispatches through the same
 * handleRoute as the local host.
 *
 * With auth settings (`access`, shared/http/access.ts) the functions are anonymous at the
 * platform and every request is checked here instead: the Node worker is never told which
 * function key a request carried, so per-caller grants need keys and tokens this code checks.
 */
export function registerFunctions(app: FunctionsApp, operations: readonly Operation[], runtime: () => Promise<Runtime>, access: Access = PLATFORM_KEYS): void {
  const { authLevel } = access;
  for (const route of routesOf(operations)) {
    const handler: HttpFunctionOptions["handler"] = (request, context) => handleRoute(route, request, context, runtime, access);
    for (const method of allowedMethods(route)) {
      const operation = route.handlers[method] as Operation;
      app.http(operation.name, { route: route.route, methods: [operation.method], authLevel, handler });
    }
    const others = ROUTE_METHODS.filter((method: HttpMethod) => !allowedMethods(route).includes(method));
    if (others.length > 0) {
      app.http(route.methodNotAllowedName, { route: route.route, methods: others, authLevel, handler });
    }
  }
}

import { MAX_BODY_BYTES } from "../contract/input-rules.js";
import type { OperationDoc } from "../contract/operation-doc.js";
import type { HttpMethod, HttpResponseInit } from "./azure-functions.js";
import type { HandlerRequest } from "./handler-request.js";
import type { RequestArrival } from "../service/request-budget.js";
import type { Runtime } from "./runtime.js";
import type { Granted } from "./granted.js";

/** Where a handler logs what the caller is not told: the invocation's log (Application Insights in Azure). */
export interface RouteLog {
  warn(message: string): void;
  /** A bug: logged with its error (and so its stack), never shown to the caller. */
  error(message: string, error: unknown): void;
}

/**
 * `arrival` is when the request arrived: its store calls must fit in the budget from there.
 * `log` is for a handler that answers a failure itself (health's 503), so its cause still
 * reaches the operator. `granted` is what the caller's grants allow beyond the route itself
 * (shared/http/access.ts): whether a release that turns out a revoke may go ahead.
 */
export type RouteHandler = (request: HandlerRequest, runtime: Runtime, arrival: RequestArrival, log: RouteLog, granted: Granted) => Promise<HttpResponseInit>;

/**
 * One operation of the REST contract, declared once in functions/routes.ts. In Azure each
 * is a function of its own (named as the protocol names it: getPrimary, updateHeartBeat, …), so
 * Application Insights counts and times them apart; the local host serves the same table.
 */
export interface Operation {
  /** The function's name in Azure. */
  readonly name: string;
  /** The route below /api, in Functions syntax: "primary/{utype}". */
  readonly route: string;
  readonly method: HttpMethod;
  readonly handler: RouteHandler;
  /** Its description in GET /api/openapi.json (shared/http/openapi.ts): required, so no route is undocumented. */
  readonly doc: OperationDoc;
  /**
   * The largest body it takes, in bytes, when not MAX_BODY_BYTES (4 KiB): the participant
   * heartbeat's, which carries up to 32 parts. The local host reads no more than this; the
   * handler passes the same limit to readBody and parseJsonObject.
   */
  readonly maxBodyBytes?: number;
}

/** The largest body `operation` takes: its own limit, or MAX_BODY_BYTES. */
export function bodyLimitOf(operation: Operation): number {
  return operation.maxBodyBytes ?? MAX_BODY_BYTES;
}

/** The operations that share one route, by method: what a request to that path may be. */
export interface Route {
  readonly route: string;
  /** The name of the function that answers the route's other methods with 405 in Azure. */
  readonly methodNotAllowedName: string;
  readonly handlers: Readonly<Partial<Record<string, Operation>>>;
}

/**
 * The methods every route is registered for in Azure: those a route does not serve go to
 * its 405 function, so a wrong method gets our 405 with `Allow`, never the host's 404.
 */
export const ROUTE_METHODS: readonly HttpMethod[] = ["GET", "PUT", "DELETE", "POST", "PATCH"];

/** Groups the table by route, in the table's order; two operations on one route and method are a bug. */
export function routesOf(operations: readonly Operation[]): Route[] {
  const routes = new Map<string, { route: string; methodNotAllowedName: string; handlers: Record<string, Operation> }>();
  for (const operation of operations) {
    let route = routes.get(operation.route);
    if (route === undefined) {
      route = { route: operation.route, methodNotAllowedName: `${camelName(operation.route)}MethodNotAllowed`, handlers: {} };
      routes.set(operation.route, route);
    }
    if (Object.hasOwn(route.handlers, operation.method)) {
      throw new Error(`Two operations serve ${operation.method} /api/${operation.route}: ${route.handlers[operation.method]?.name} and ${operation.name}.`);
    }
    route.handlers[operation.method] = operation;
  }
  return [...routes.values()];
}

/** The methods a route serves, for 405 and its Allow header. */
export function allowedMethods(route: Route): string[] {
  return Object.keys(route.handlers);
}

/** The operation for `method`; own properties only, so "constructor" or "toString" is no method. */
export function operationFor(route: Route, method: string): Operation | undefined {
  return Object.hasOwn(route.handlers, method) ? route.handlers[method] : undefined;
}

/** "primary/{utype}" → "primaryUtype": a valid Azure function name for the route. */
function camelName(route: string): string {
  const words = route.split(/[^A-Za-z0-9]+/).filter((word) => word !== "");
  return words.map((word, index) => (index === 0 ? word : `${word[0]?.toUpperCase()}${word.slice(1)}`)).join("");
}

import type { RouteDefinition } from "../http/route.js";

export interface CompiledRoute {
  readonly definition: RouteDefinition;
  readonly pattern: RegExp;
  readonly paramNames: readonly string[];
}

export interface RouteMatch {
  readonly route: CompiledRoute;
  readonly params: Record<string, string>;
}

/** Turns "primary/{utype}" into a pattern under /api, as the Functions host routes it. */
export function compileRoute(definition: RouteDefinition): CompiledRoute {
  const paramNames: string[] = [];
  const source = definition.route
    .split("/")
    .map((segment) => {
      const param = /^\{([A-Za-z]+)\}$/.exec(segment);
      if (param?.[1] === undefined) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      paramNames.push(param[1]);
      return "([^/]+)";
    })
    .join("/");
  return { definition, paramNames, pattern: new RegExp(`^/api/${source}/?$`) };
}

export function matchRoute(routes: readonly CompiledRoute[], pathname: string): RouteMatch | undefined {
  for (const route of routes) {
    const found = route.pattern.exec(pathname);
    if (found === null) continue;
    const params: Record<string, string> = {};
    route.paramNames.forEach((name, index) => {
      const raw = found[index + 1] ?? "";
      try {
        params[name] = decodeURIComponent(raw);
      } catch {
        params[name] = raw; // not valid percent-encoding: validation will refuse it
      }
    });
    return { route, params };
  }
  return undefined;
}

/** The methods a route serves, for 405 and its Allow header. */
export function allowedMethods(route: CompiledRoute): string[] {
  return Object.keys(route.definition.handlers);
}

/** Own properties only: a method named like an Object.prototype member is not a handler. */
export function servesMethod(route: CompiledRoute, method: string): boolean {
  return Object.hasOwn(route.definition.handlers, method);
}

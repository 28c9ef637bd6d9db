import type { Route } from "../http/route.js";

export interface CompiledRoute {
  readonly route: Route;
  readonly pattern: RegExp;
  readonly paramNames: readonly string[];
}

export interface RouteMatch {
  readonly route: CompiledRoute;
  readonly params: Record<string, string>;
}

/**
 * Turns "primary/{utype}" into a pattern under /api, as the Functions host routes it: literal
 * segments (api too) match in any case, as ASP.NET Core's routing does (GET /api/HEALTH is
 * health there); a parameter keeps the case it was sent in.
 */
export function compileRoute(route: Route): CompiledRoute {
  const paramNames: string[] = [];
  const source = route.route
    .split("/")
    .map((segment) => {
      const param = /^\{([A-Za-z]+)\}$/.exec(segment);
      if (param?.[1] === undefined) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      paramNames.push(param[1]);
      return "([^/]+)";
    })
    .join("/");
  return { route, paramNames, pattern: new RegExp(`^/api/${source}/?$`, "i") };
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

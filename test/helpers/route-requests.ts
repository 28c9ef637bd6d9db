import { operations } from "../../functions/routes.js";
import { HttpRequest, InvocationContext } from "../../shared/http/azure-functions.js";
import { handleRoute } from "../../shared/http/dispatch.js";
import { routesOf } from "../../shared/http/route.js";
import { compileRoute, matchRoute } from "../../shared/host/route-table.js";
import type { Runtime } from "../../shared/http/runtime.js";
import type { Access } from "../../shared/http/access.js";

/** Where handler tests start their FakeClock: ha_time as a real wall-clock time, for renewedAt. */
export const WALL_START = Date.UTC(2026, 10, 20, 10, 0, 0);

export interface Reply {
  status: number;
  body: Record<string, unknown>;
}

const routes = routesOf(operations).map(compileRoute);

/** Sends one request through the same route table and dispatcher the Functions host uses. */
export async function send(runtime: Runtime, method: string, path: string, body?: unknown, context = new InvocationContext()): Promise<Reply> {
  const { status, body: answer } = await sendWithHeaders(runtime, method, path, body, context);
  return { status, body: answer };
}

/** As `send`, with request headers, and the answer's headers too. */
export async function sendWithHeaders(
  runtime: Runtime,
  method: string,
  path: string,
  body?: unknown,
  context = new InvocationContext(),
  headers: Record<string, string> = {},
  access?: Access,
): Promise<Reply & { headers: Record<string, string> }> {
  const url = new URL(`http://localhost/api${path}`);
  // The local host's own matcher: the same params, decoded the same way.
  const match = matchRoute(routes, url.pathname);
  if (match === undefined) throw new Error(`no route for ${path}`);
  const { route, params } = { route: match.route.route, params: match.params };
  const request = new HttpRequest({
    method,
    url: url.toString(),
    params,
    headers,
    ...(body === undefined ? {} : { body: { string: typeof body === "string" ? body : JSON.stringify(body) } }),
  });
  const response = await handleRoute(route, request, context, async () => runtime, access);
  return {
    status: response.status ?? 200,
    body: (response.jsonBody ?? {}) as Record<string, unknown>,
    headers: (response.headers ?? {}) as Record<string, string>,
  };
}

export const primaryOf = (reply: Reply): Record<string, unknown> | null => reply.body["primary"] as Record<string, unknown> | null;
export const errorCodeOf = (reply: Reply): unknown => (reply.body["error"] as { code?: unknown } | undefined)?.code;

import { randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { HttpRequest, InvocationContext, type HttpResponseInit } from "../http/azure-functions.js";
import { errorResponse, handleRoute, type RouteDefinition } from "../http/route.js";
import { MAX_BODY_BYTES } from "../http/validation.js";
import type { Runtime } from "../runtime.js";

export interface LocalHostOptions {
  readonly routes: readonly RouteDefinition[];
  readonly runtime: () => Promise<Runtime>;
  /** 0 picks a free port. */
  readonly port: number;
  readonly hostname?: string;
  /** When set, every request must carry it in x-functions-key (or ?code=), as in Azure. */
  readonly apiKey?: string | undefined;
  readonly log?: (level: "warn" | "error", message: string) => void;
}

export interface LocalHost {
  /** The API base URL, e.g. http://127.0.0.1:7071/api */
  readonly url: string;
  close(): Promise<void>;
}

interface CompiledRoute {
  readonly definition: RouteDefinition;
  readonly pattern: RegExp;
  readonly paramNames: string[];
}

/**
 * Serves the route table over node:http under /api, the way the Functions host would:
 * the same handlers, the same HttpRequest objects, and the function-key check when an
 * API key is configured. It exists because Core Tools cannot be installed everywhere.
 */
export async function startLocalHost(options: LocalHostOptions): Promise<LocalHost> {
  const compiled = options.routes.map(compileRoute);
  const log = options.log ?? ((level, message) => console[level](message));
  const server = createServer((request, response) => {
    serveOne(request, response, compiled, options, log).catch((error: unknown) => {
      log("error", `local host: ${error instanceof Error ? error.message : String(error)}`);
      if (!response.headersSent) {
        writeResponse(response, errorResponseInternal());
      } else {
        response.destroy();
      }
    });
  });
  server.keepAliveTimeout = 5_000;
  const hostname = options.hostname ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, hostname, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${hostname}:${port}/api`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function serveOne(
  request: IncomingMessage,
  response: ServerResponse,
  routes: CompiledRoute[],
  options: LocalHostOptions,
  log: NonNullable<LocalHostOptions["log"]>,
): Promise<void> {
  const url = new URL(request.url ?? "/", "http://127.0.0.1");
  if (options.apiKey !== undefined && !hasKey(request, url, options.apiKey)) {
    request.resume();
    writeResponse(response, errorResponse(401, "Unauthorized", "Send the API key in the x-functions-key header."));
    return;
  }
  const match = matchRoute(routes, url.pathname);
  if (match === undefined) {
    request.resume();
    writeResponse(response, errorResponse(404, "NotFound", `No route ${url.pathname}; see the REST contract in the README.`));
    return;
  }
  const body = await readLimited(request, MAX_BODY_BYTES + 1);
  const httpRequest = new HttpRequest({
    method: request.method ?? "GET",
    url: url.toString(),
    headers: flattenHeaders(request),
    params: match.params,
    ...(body.byteLength > 0 ? { body: { bytes: body } } : {}),
  });
  const context = new InvocationContext({
    functionName: match.route.definition.name,
    invocationId: randomUUID(),
    logHandler: (level, ...args) => {
      if (level === "warning") log("warn", args.map(String).join(" "));
      if (level === "error" || level === "critical") log("error", args.map(String).join(" "));
    },
  });
  const result = await handleRoute(match.route.definition, httpRequest, context, options.runtime);
  // A body cut off at the limit has unread bytes left: close rather than reuse the socket.
  if (body.byteLength > MAX_BODY_BYTES) response.setHeader("connection", "close");
  writeResponse(response, result);
}

function compileRoute(definition: RouteDefinition): CompiledRoute {
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

function matchRoute(
  routes: CompiledRoute[],
  pathname: string,
): { route: CompiledRoute; params: Record<string, string> } | undefined {
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

function hasKey(request: IncomingMessage, url: URL, apiKey: string): boolean {
  const header = request.headers["x-functions-key"];
  const given = (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get("code") ?? "";
  const a = Buffer.from(given, "utf8");
  const b = Buffer.from(apiKey, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Reads the body, but never more than `limit` bytes: the handler turns "too long" into 413. */
function readLimited(request: IncomingMessage, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (): void => {
      request.off("data", onData);
      request.off("end", finish);
      request.off("error", reject);
      resolve(Buffer.concat(chunks).subarray(0, limit));
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size >= limit) {
        request.pause();
        finish();
      }
    };
    request.on("data", onData);
    request.once("end", finish);
    request.once("error", reject);
  });
}

function flattenHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

function writeResponse(response: ServerResponse, result: HttpResponseInit): void {
  const headers = new Headers(result.headers as ConstructorParameters<typeof Headers>[0]);
  let payload: string | Uint8Array = "";
  if (result.jsonBody !== undefined) {
    payload = JSON.stringify(result.jsonBody);
    headers.set("content-type", "application/json; charset=utf-8");
  } else if (typeof result.body === "string") {
    payload = result.body;
  } else if (result.body instanceof Uint8Array) {
    payload = result.body;
  }
  response.statusCode = result.status ?? 200;
  headers.forEach((value, name) => response.setHeader(name, value));
  response.end(payload);
}

function errorResponseInternal(): HttpResponseInit {
  return { status: 500, jsonBody: { error: { code: "InternalError", message: "The server failed; see its log." } } };
}

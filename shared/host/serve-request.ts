import { STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import type { HttpResponseInit } from "../http/azure-functions.js";
import type { HandlerContext } from "../http/handler-request.js";
import { announcesBody, codingRefusal } from "../http/content-coding.js";
import { crossOriginRefusal } from "../http/cross-origin.js";
import { handleRoute, methodNotAllowed } from "../http/dispatch.js";
import { bodyLimitOf, operationFor } from "../http/route.js";
import type { Runtime } from "../http/runtime.js";
import { closeWith } from "./socket-answers.js";
import { hostError, rawErrorResponse } from "./host-errors.js";
import type { HostTimeouts } from "./host-timeouts.js";
import { declaredLength, lacksHost } from "./request-checks.js";
import { isCaller, type Access } from "../http/access.js";
import { discardRest, readBody } from "./request-body.js";
import { LocalRequest } from "./local-request.js";
import { parseRequestTarget } from "./request-target.js";
import { matchRoute, type CompiledRoute } from "./route-table.js";

export type HostLog = (level: "warn" | "error", message: string) => void;

export interface HostContext {
  readonly routes: readonly CompiledRoute[];
  readonly runtime: () => Promise<Runtime>;
  /** Who may call, and what each caller may write (shared/http/access.ts). */
  readonly access: Access;
  readonly timeouts: HostTimeouts;
  readonly log: HostLog;
}

/**
 * One request, checked in the order a caller can fix it: the target, the caller (a key or a token), the
 * route, the method, the body's coding, the origin a browser sent a write from, the body's size; only then is the request handed to
 * the route's handler, as a LocalRequest: what the Functions HttpRequest would show it. Whatever the host refuses it answers with the contract's
 * JSON error before reading the body, and then drops the body so the client can read it.
 */
export async function serveRequest(request: IncomingMessage, response: ServerResponse, host: HostContext): Promise<void> {
  const refuse = (answer: HttpResponseInit): void => {
    discardRest(request);
    // A client that asked to close (or spoke HTTP/1.0) while its body still arrives: Node
    // would close as soon as the answer is written, with the body still coming, and the
    // client's next write would meet a reset that destroys the unread answer. Written on
    // the socket instead, and the socket closed lingering (socket-answers.ts).
    if (!request.complete && !response.shouldKeepAlive) closeWith(request.socket, rawAnswer(answer));
    else writeResponse(response, answer);
  };
  const target = parseRequestTarget(request.url ?? "");
  if (!target.ok) return refuse(hostError("InvalidRequest", target.message));
  if (lacksHost(request)) return refuse(hostError("InvalidRequest", "The Host header is required in HTTP/1.1."));
  const { url } = target;
  const caller = await host.access.authenticate({ headers: { get: (name) => headerOf(request, name) ?? null }, query: url.searchParams });
  if (!isCaller(caller)) return refuse(caller);
  const match = matchRoute(host.routes, url.pathname);
  if (match === undefined) {
    return refuse(hostError("NotFound", `No route ${url.pathname.slice(0, 200)}; see the REST contract in docs/api.md.`));
  }
  // Before a handler sees the request (no HttpRequest can be built for TRACE or TRACK) and before the body is
  // read: the answers are handleRoute's own, given early so that a refused body is not read.
  const method = request.method ?? "";
  const route = match.route.route;
  const unbound = unboundMethod(method, url.pathname);
  if (unbound !== undefined) return refuse(unbound);
  const operation = operationFor(route, method);
  if (operation === undefined) return refuse(methodNotAllowed(route, method));
  const header = (name: string): string | undefined => headerOf(request, name);
  // 4 KiB, or the route's own limit (the participant heartbeat's 64 KiB).
  const limitBytes = bodyLimitOf(operation);
  const coding = codingRefusal(header, announcesBody(header), limitBytes);
  if (coding !== undefined) return refuse(hostError(coding.code, coding.message));
  // handleRoute's own refusal, given before the body is read: a cross-origin write's body is never read.
  const crossOrigin = crossOriginRefusal(method, header);
  if (crossOrigin !== undefined) return refuse(crossOrigin);
  if (declaredLength(request) > limitBytes) return refuse(tooLarge(`${declaredLength(request)} bytes`, limitBytes));

  const body = await readBody(request, { limitBytes, timeoutMs: host.timeouts.bodyTimeoutMs });
  switch (body.kind) {
    case "aborted":
      response.destroy();
      return;
    case "too-large":
      return refuse(tooLarge(`over ${limitBytes} bytes`, limitBytes));
    case "timed-out":
      // Answered on the socket, not through Node's response, which would close at once
      // and so reset a connection the slow client is still sending on.
      discardRest(request);
      closeWith(
        request.socket,
        rawErrorResponse("RequestTimeout", `The request body did not arrive within ${host.timeouts.bodyTimeoutMs} ms of its headers; send the whole request at once.`),
      );
      return;
    case "complete":
      break;
  }
  if (request.headers["content-length"] === undefined && body.bytes.byteLength > 0) return refuse(bodyWithoutLength());
  const handlerRequest = new LocalRequest(request, method, url, match.params, body.bytes);
  // What InvocationContext's log handler did here, without an invocation object per request.
  const context: HandlerContext = {
    warn: (...args) => host.log("warn", args.map(String).join(" ")),
    error: (...args) => host.log("error", args.map(String).join(" ")),
  };
  writeResponse(response, await handleRoute(route, handlerRequest, context, host.runtime, host.access, caller));
}

/**
 * HEAD and OPTIONS: no function is bound to them in Azure (docs/deploy/background.md#the-functions),
 * so the Functions host finds none and answers 404, and so does this host, saying why.
 * (With CORS configured the platform answers a preflight OPTIONS before the host sees it.)
 */
function unboundMethod(method: string, pathname: string): HttpResponseInit | undefined {
  if (method !== "HEAD" && method !== "OPTIONS") return undefined;
  const instead = method === "HEAD" ? "use GET" : "configure CORS on the function app for browser preflights";
  return hostError("NotFound", `No function answers ${method} ${pathname.slice(0, 200)}: the Azure Functions host answers 404 for it, and so does this host; ${instead}.`);
}

/**
 * A body sent without Content-Length (chunked): the Azure Functions host passes a function a
 * body only when Content-Length is above 0, so there the body would be lost and the request
 * refused as if it had none. Refused here with the cause instead.
 */
function bodyWithoutLength(): HttpResponseInit {
  return hostError(
    "InvalidRequest",
    "The body was sent without Content-Length (chunked); send Content-Length: the Azure Functions host passes a body to the service only when Content-Length is above 0.",
  );
}

function tooLarge(size: string, limitBytes: number): HttpResponseInit {
  return hostError("PayloadTooLarge", `The request body is ${size}; the limit is ${limitBytes}.`);
}

function headerOf(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

export function writeResponse(response: ServerResponse, result: HttpResponseInit): void {
  const { status, headers, payload } = answerParts(result);
  response.statusCode = status;
  // In the order a Fetch Headers iterates them (sorted by name), as the wire has always had them.
  for (const name of [...headers.keys()].sort()) response.setHeader(name, headers.get(name) as string);
  response.end(payload);
}

/** The same answer as whole HTTP/1.1 bytes that close the connection, for writing on the socket itself. */
export function rawAnswer(result: HttpResponseInit): Buffer {
  const { status, headers, payload } = answerParts(result);
  const body = typeof payload === "string" ? Buffer.from(payload, "utf8") : payload;
  headers.set("content-length", String(body.byteLength));
  headers.set("connection", "close");
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Unknown"}`, ...[...headers.keys()].sort().map((name) => `${name}: ${headers.get(name) as string}`), "", ""];
  return Buffer.concat([Buffer.from(lines.join("\r\n"), "latin1"), body]);
}

function answerParts(result: HttpResponseInit): { status: number; headers: Map<string, string>; payload: string | Uint8Array } {
  const headers = responseHeaders(result.headers);
  let payload: string | Uint8Array = "";
  if (result.jsonBody !== undefined) {
    payload = JSON.stringify(result.jsonBody);
    headers.set("content-type", "application/json; charset=utf-8");
  } else if (typeof result.body === "string") {
    payload = result.body;
  } else if (result.body instanceof Uint8Array) {
    payload = result.body;
  }
  return { status: result.status ?? 200, headers, payload };
}

/** Fetch Headers' whitespace: trimmed from both ends of a value. */
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/**
 * The answer's headers by lower-case name, as a Fetch Headers would hold them (values
 * trimmed, a name given twice in different cases joined with ", "). A handler's plain
 * object of strings, which is every answer we make, is read directly: a Headers per
 * request showed in the heartbeat's profile. Anything else still goes through Headers.
 */
function responseHeaders(init: HttpResponseInit["headers"]): Map<string, string> {
  const headers = new Map<string, string>();
  if (init === undefined) return headers;
  if (Object.getPrototypeOf(init) === Object.prototype && Object.values(init).every((value) => typeof value === "string")) {
    for (const [name, raw] of Object.entries(init as Record<string, string>)) {
      const key = name.toLowerCase();
      const value = raw.replace(EDGE_WHITESPACE, "");
      const before = headers.get(key);
      headers.set(key, before === undefined ? value : `${before}, ${value}`);
    }
    return headers;
  }
  new Headers(init as ConstructorParameters<typeof Headers>[0]).forEach((value, name) => headers.set(name, value));
  return headers;
}

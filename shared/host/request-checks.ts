import type { IncomingMessage } from "node:http";

/** HTTP/1.1 requires Host (RFC 9112 §3.2); Node's own check would answer without a body. */
export function lacksHost(request: IncomingMessage): boolean {
  return request.httpVersion === "1.1" && request.headers.host === undefined;
}

/** The Content-Length the client announced; Node's parser has already checked its syntax. */
export function declaredLength(request: IncomingMessage): number {
  const value = request.headers["content-length"];
  return value === undefined ? 0 : Number(value);
}

import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** The function key, in x-functions-key or ?code=, compared in constant time, as in Azure. */
export function hasKey(request: IncomingMessage, url: URL, apiKey: string): boolean {
  const header = request.headers["x-functions-key"];
  const given = (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get("code") ?? "";
  const a = Buffer.from(given, "utf8");
  const b = Buffer.from(apiKey, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}

/** HTTP/1.1 requires Host (RFC 9112 §3.2); Node's own check would answer without a body. */
export function lacksHost(request: IncomingMessage): boolean {
  return request.httpVersion === "1.1" && request.headers.host === undefined;
}

/** The Content-Length the client announced; Node's parser has already checked its syntax. */
export function declaredLength(request: IncomingMessage): number {
  const value = request.headers["content-length"];
  return value === undefined ? 0 : Number(value);
}

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

/**
 * A coding the host does not undo, named for the 415 message. The host hands the body to
 * the handlers as it arrived, so a gzip body labelled gzip would be parsed as if plain;
 * only `identity` content and `chunked` transfer are accepted. A request without a body
 * is not refused for the label alone: there is nothing to decode.
 */
export function unsupportedCoding(request: IncomingMessage): string | undefined {
  if (!hasBody(request)) return undefined;
  const content = codings(request.headers["content-encoding"]).find((coding) => coding !== "identity");
  if (content !== undefined) return `Content-Encoding ${JSON.stringify(content)}`;
  const transfer = codings(request.headers["transfer-encoding"]).find((coding) => coding !== "chunked");
  if (transfer !== undefined) return `Transfer-Encoding ${JSON.stringify(transfer)}`;
  return undefined;
}

/** The Content-Length the client announced; Node's parser has already checked its syntax. */
export function declaredLength(request: IncomingMessage): number {
  const value = request.headers["content-length"];
  return value === undefined ? 0 : Number(value);
}

function hasBody(request: IncomingMessage): boolean {
  return declaredLength(request) > 0 || request.headers["transfer-encoding"] !== undefined;
}

function codings(header: string | undefined): string[] {
  if (header === undefined) return [];
  return header
    .split(",")
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== "");
}

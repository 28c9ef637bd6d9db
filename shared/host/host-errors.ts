import { STATUS_CODES } from "node:http";
import type { HttpResponseInit } from "../http/azure-functions.js";
import type { ErrorCode } from "../http/http-error.js";
import { json } from "../http/route.js";

/**
 * The codes of answers that only the local host gives, because the request never
 * reached a handler: the HTTP layer refused it (in Azure the front end answers these).
 * They keep the contract's error shape, so a client parses every answer the same way.
 */
export type HostErrorCode =
  | ErrorCode
  /** 408: the request's headers or body did not arrive within the host's deadline. */
  | "RequestTimeout"
  /** 415: the body has a content or transfer coding the host does not decode. */
  | "UnsupportedMediaType"
  /** 431: the request line and headers are over the parser's limit (16 KiB). */
  | "HeadersTooLarge"
  /** 500: a bug; the last resort, logged, never with a stack. */
  | "InternalError";

export function hostError(
  status: number,
  code: HostErrorCode,
  message: string,
  headers: Record<string, string> = {},
): HttpResponseInit {
  const response = json(status, { error: { code, message } });
  return { ...response, headers: { ...(response.headers as Record<string, string>), ...headers } };
}

/**
 * A whole HTTP/1.1 error response as bytes, for the moments when Node has no
 * ServerResponse to write through (a request it could not parse, CONNECT). It always
 * closes the connection: after a parse error the stream cannot be trusted to frame
 * another request.
 */
export function rawErrorResponse(
  status: number,
  code: HostErrorCode,
  message: string,
  headers: Record<string, string> = {},
): Buffer {
  const body = Buffer.from(JSON.stringify({ error: { code, message } }), "utf8");
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}`,
    "content-type: application/json; charset=utf-8",
    "cache-control: no-store",
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    `content-length: ${body.byteLength}`,
    "connection: close",
    "",
    "",
  ];
  return Buffer.concat([Buffer.from(lines.join("\r\n"), "latin1"), body]);
}

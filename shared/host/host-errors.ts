import { STATUS_CODES } from "node:http";
import type { HttpResponseInit } from "../http/azure-functions.js";
import { ERROR_STATUS, type ErrorCode } from "../contract/error-codes.js";
import { errorResponse } from "../http/answers.js";

/**
 * Answers of the local host for requests that never reach a handler, because its HTTP
 * layer refused them (in Azure the front end answers these). They keep the contract's
 * error shape and codes, so a client parses every answer the same way.
 */
export function hostError(code: ErrorCode, message: string, headers: Record<string, string> = {}): HttpResponseInit {
  const response = errorResponse(code, message);
  return { ...response, headers: { ...(response.headers as Record<string, string>), ...headers } };
}

/**
 * A whole HTTP/1.1 error response as bytes, for the moments when Node has no
 * ServerResponse to write through (a request it could not parse, CONNECT). It always
 * closes the connection: after a parse error the stream cannot be trusted to frame
 * another request.
 */
export function rawErrorResponse(code: ErrorCode, message: string, headers: Record<string, string> = {}): Buffer {
  const status = ERROR_STATUS[code];
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

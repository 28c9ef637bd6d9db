import { maxHeaderSize, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { rawErrorResponse } from "./host-errors.js";
import type { HostTimeouts } from "./host-timeouts.js";

/**
 * How long a connection the host is closing keeps being read (and the bytes dropped)
 * after the error answer: closing with unread bytes resets the connection, and a reset
 * can destroy the answer before the client reads it. Apache's "lingering close", bounded.
 */
export const LINGER_MS = 2_000;

/** The request and response Node is working on for a socket, to know if an answer went out. */
export interface Exchange {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
}

/**
 * The server's `clientError` handler: Node could not read a request (a parse error, the
 * headers over the size limit, the request timeout). Node's own handler answers these
 * with a bare status line; this one answers with the contract's JSON error when the
 * client is still owed an answer, then closes.
 */
export function answerClientError(
  error: Error & { code?: string; reason?: string },
  socket: Duplex,
  exchange: Exchange | undefined,
  timeouts: HostTimeouts,
): void {
  if (closing.has(socket)) return; // Node reports every chunk that arrives after a parse error
  const owed = owedAnswer(exchange);
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  if (owed === "nothing") {
    // Its answer is written and may still be unread: closing at once, with its body still
    // coming, would reset the connection and destroy that answer in the client's kernel.
    closeWith(socket, NO_BYTES);
    return;
  }
  const answer = errorAnswer(error, timeouts);
  if (owed === "now" || exchange === undefined) {
    closeWith(socket, answer);
    return;
  }
  // A bad request pipelined behind a good one: the good one is answered first.
  closing.add(socket);
  exchange.response.once("finish", () => closeWith(socket, answer));
  exchange.response.once("close", () => {
    if (!exchange.response.writableFinished) socket.destroy();
  });
}

function errorAnswer(error: Error & { code?: string; reason?: string }, timeouts: HostTimeouts): Buffer {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return rawErrorResponse("HeadersTooLarge",
        `The request line and headers are over ${maxHeaderSize} bytes; send a shorter path and fewer or smaller headers.`);
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return rawErrorResponse("PayloadTooLarge", "The chunk extensions of the body are too large; send the body without chunk extensions.");
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return rawErrorResponse("RequestTimeout",
        `The request's headers did not arrive within ${timeouts.headersTimeoutMs} ms (or the whole request within ${timeouts.requestTimeoutMs} ms); send the whole request at once.`);
    default:
      return rawErrorResponse("InvalidRequest",
        `The request is not valid HTTP/1.1 (${describe(error)}): send an upper-case method, a percent-encoded path ` +
          "without spaces, tabs or raw non-ASCII bytes, and a body framed by Content-Length or by Transfer-Encoding: chunked, not both.");
  }
}

/**
 * The server's `connect` handler: without one Node drops a CONNECT without a word.
 * The host is not a proxy, so CONNECT is a method no route has.
 */
export function answerConnect(socket: Duplex, allow: readonly string[]): void {
  socket.on("error", () => socket.destroy()); // Node stops watching a CONNECT socket's errors
  closeWith(socket, rawErrorResponse("MethodNotAllowed",
    `CONNECT is not allowed: this host is not a proxy; use ${allow.join(", ")} on the routes under /api.`, { allow: allow.join(", ") }));
}

/**
 * Whether the client is still owed an answer for the request Node failed to read, and when:
 * - no request in flight, or the last one fully read and answered: the failure is a new
 *   request's, answer it now;
 * - the request in flight failed while being read (a broken body): answer it now, in
 *   place of the handler's answer, which will find the socket closed;
 * - the request in flight was read and is being answered: the failure is a request
 *   pipelined behind it, answered after it;
 * - the request in flight was answered while its body still arrives (a 413): it is owed
 *   nothing more, and the connection is closed (lingering, so that answer can still be read).
 */
function owedAnswer(exchange: Exchange | undefined): "now" | "after-response" | "nothing" {
  if (exchange === undefined) return "now";
  const { request, response } = exchange;
  if (response.writableFinished) return request.complete ? "now" : "nothing";
  return request.complete ? "after-response" : "now";
}

const closing = new WeakSet<Duplex>();
const NO_BYTES = Buffer.alloc(0);

/**
 * Writes a whole answer on the socket and closes it, lingering: what the client still
 * sends is read and dropped for up to LINGER_MS, so the close does not reset the
 * connection before the client has read the answer.
 */
export function closeWith(socket: Duplex, answer: Buffer): void {
  closing.add(socket);
  socket.end(answer);
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
}

function describe(error: Error & { code?: string; reason?: string }): string {
  const reason = typeof error.reason === "string" && error.reason.length <= 100 ? error.reason : "unparsable request";
  return error.code === undefined ? reason : `${error.code}: ${reason}`;
}

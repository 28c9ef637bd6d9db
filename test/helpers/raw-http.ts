import { once } from "node:events";
import { connect, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * HTTP/1.1 over a bare socket, for what fetch refuses to send (TRACE, CONNECT, raw tabs,
 * lowercase methods, CL+TE, slow or endless bodies). Every exchange is bounded: it ends
 * when the expected responses are in, when the server closes, or at `timeoutMs`.
 */

export interface RawResponse {
  readonly status: number;
  /** Header names in lower case; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface RawExchange {
  /** Final responses in order (1xx interim responses are skipped). */
  readonly responses: RawResponse[];
  /** The server closed (or reset) the connection before the exchange ended. */
  readonly closed: boolean;
  /** A socket error the client saw (EPIPE, ECONNRESET), if any. */
  readonly error: string | undefined;
  /** Nothing ended the exchange within timeoutMs. */
  readonly timedOut: boolean;
  readonly elapsedMs: number;
}

/** One step of what the client sends: bytes, or a pause (to be slow on purpose). */
export type RawStep = Buffer | string | { readonly pauseMs: number };

export interface RawExchangeOptions {
  readonly timeoutMs: number;
  /** The exchange ends once this many final responses are complete; default 1. */
  readonly responses?: number;
  /** The request is HEAD: its answer has headers only, whatever its Content-Length says. */
  readonly head?: boolean;
  /** Sends the request; by default the steps are written in order. Stop when `signal` aborts. */
  readonly send?: (socket: Socket, signal: AbortSignal) => Promise<void>;
}

export async function rawExchange(port: number, steps: readonly RawStep[], options: RawExchangeOptions): Promise<RawExchange> {
  const started = performance.now();
  const socket = connect(port, "127.0.0.1");
  socket.setNoDelay(true);
  let received = Buffer.alloc(0);
  let closed = false;
  let error: string | undefined;
  const wanted = options.responses ?? 1;
  const sending = new AbortController();
  const result = await new Promise<{ responses: RawResponse[]; timedOut: boolean }>((resolve) => {
    const finish = (timedOut: boolean): void => {
      clearTimeout(timer);
      sending.abort();
      resolve({ responses: parseResponses(received, closed, options.head).responses, timedOut });
    };
    const timer = setTimeout(() => finish(true), options.timeoutMs);
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (parseResponses(received, false, options.head).responses.length >= wanted) finish(false);
    });
    socket.on("error", (cause: NodeJS.ErrnoException) => (error ??= cause.code ?? cause.message));
    socket.on("close", () => {
      closed = true;
      finish(false);
    });
    const send = options.send ?? ((target: Socket, signal: AbortSignal) => writeSteps(target, steps, signal));
    socket.once("connect", () => {
      send(socket, sending.signal).catch((cause: Error) => {
        if (!sending.signal.aborted) error ??= cause.message;
      });
    });
  });
  socket.destroy();
  return { ...result, closed, error, elapsedMs: performance.now() - started };
}

async function writeSteps(socket: Socket, steps: readonly RawStep[], signal: AbortSignal): Promise<void> {
  for (const step of steps) {
    if (signal.aborted || socket.destroyed) return;
    if (typeof step === "object" && "pauseMs" in step) await sleep(step.pauseMs, undefined, { signal });
    else socket.write(step);
  }
}

/** Writes `totalBytes` of filler after the head, honouring backpressure, until `signal` aborts. */
export async function streamFiller(socket: Socket, signal: AbortSignal, totalBytes: number, chunked: boolean): Promise<void> {
  const isOpen = (): boolean => !signal.aborted && !socket.destroyed;
  const chunk = Buffer.alloc(64 * 1024, "x");
  for (let sent = 0; sent < totalBytes && isOpen(); sent += chunk.byteLength) {
    const framed = chunked ? Buffer.concat([Buffer.from(`${chunk.byteLength.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]) : chunk;
    if (!socket.write(framed)) await once(socket, "drain", { signal }).catch(() => undefined);
  }
  if (chunked && isOpen()) socket.write("0\r\n\r\n");
}

/** Parses complete responses from the bytes so far; a body without a length ends at close. */
export function parseResponses(bytes: Buffer, closed: boolean, head = false): { responses: RawResponse[]; rest: Buffer } {
  const responses: RawResponse[] = [];
  let rest = bytes;
  for (;;) {
    const headEnd = rest.indexOf("\r\n\r\n");
    if (headEnd < 0) break;
    const [statusLine = "", ...lines] = rest.subarray(0, headEnd).toString("latin1").split("\r\n");
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? Number.NaN);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const afterHead = rest.subarray(headEnd + 4);
    if (status >= 100 && status < 200) {
      rest = afterHead;
      continue;
    }
    const length = headers["content-length"];
    let body: Buffer;
    if (head) {
      body = Buffer.alloc(0);
      rest = afterHead;
    } else if (length !== undefined) {
      if (afterHead.byteLength < Number(length)) break;
      body = afterHead.subarray(0, Number(length));
      rest = afterHead.subarray(Number(length));
    } else if (headers["transfer-encoding"]?.includes("chunked") === true) {
      const chunked = dechunk(afterHead);
      if (chunked === undefined) break;
      body = chunked.body;
      rest = chunked.rest;
    } else {
      if (!closed) break;
      body = afterHead;
      rest = Buffer.alloc(0);
    }
    responses.push({ status, headers, body: body.toString("utf8") });
  }
  return { responses, rest };
}

function dechunk(bytes: Buffer): { body: Buffer; rest: Buffer } | undefined {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = bytes.indexOf("\r\n", offset);
    if (lineEnd < 0) return undefined;
    const size = Number.parseInt(bytes.subarray(offset, lineEnd).toString("latin1"), 16);
    if (Number.isNaN(size)) return undefined;
    const start = lineEnd + 2;
    if (size === 0) {
      const end = bytes.indexOf("\r\n", start);
      return end < 0 ? undefined : { body: Buffer.concat(parts), rest: bytes.subarray(end + 2) };
    }
    if (bytes.byteLength < start + size + 2) return undefined;
    parts.push(bytes.subarray(start, start + size));
    offset = start + size + 2;
  }
}

/** A request head with CRLFs; `headers` lines are written as given (so they can be malformed). */
export function head(requestLine: string, headers: readonly string[]): string {
  return `${requestLine}\r\n${headers.map((line) => `${line}\r\n`).join("")}\r\n`;
}

export interface SentThenRead {
  /** Final responses the client could read once it had sent everything. */
  readonly responses: RawResponse[];
  /** A socket error the client saw (EPIPE, ECONNRESET), if any. */
  readonly error: string | undefined;
}

/**
 * A client that writes its whole request (pauses included) before it reads a byte, as
 * many do: the socket is not read from until the last step is written, so an answer
 * the server sent early waits in the client's kernel, where a reset destroys it.
 */
export async function sendThenRead(port: number, steps: readonly RawStep[], timeoutMs: number): Promise<SentThenRead> {
  const socket = connect(port, "127.0.0.1");
  socket.setNoDelay(true);
  socket.pause();
  let error: string | undefined;
  socket.on("error", (cause: NodeJS.ErrnoException) => (error ??= cause.code ?? cause.message));
  let received = Buffer.alloc(0);
  const ended = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    const end = (): void => {
      clearTimeout(timer);
      resolve();
    };
    socket.on("close", end);
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (parseResponses(received, false).responses.length > 0) end();
    });
  });
  try {
    await once(socket, "connect");
    await writeSteps(socket, steps, AbortSignal.timeout(Math.round(timeoutMs)));
    socket.resume();
    await ended;
  } catch (cause) {
    error ??= cause instanceof Error ? cause.message : String(cause);
  } finally {
    socket.destroy();
  }
  return { responses: parseResponses(received, true).responses, error };
}

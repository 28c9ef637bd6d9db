import type { IncomingMessage } from "node:http";

/**
 * How much of a refused body the host still reads and drops after answering, so that the
 * client can finish sending and then read the answer: closing a socket with unread data
 * resets it, and the client sees EPIPE instead of the 413. Past this the host cuts the
 * connection; the server's request timeout bounds the time it spends.
 */
export const MAX_DISCARD_BYTES = 16 * 1024 * 1024;

export type BodyRead =
  | { readonly kind: "complete"; readonly bytes: Uint8Array }
  /** More than the limit arrived; the rest is left to `discardRest`. */
  | { readonly kind: "too-large" }
  /** The body did not finish within the deadline. */
  | { readonly kind: "timed-out" }
  /** The client went away before the body ended: nobody is left to answer. */
  | { readonly kind: "aborted" };

export interface ReadBodyOptions {
  readonly limitBytes: number;
  readonly timeoutMs: number;
}

/** Reads the whole body, but never more than `limitBytes` and never for longer than `timeoutMs`. */
export function readBody(request: IncomingMessage, { limitBytes, timeoutMs }: ReadBodyOptions): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: BodyRead): void => {
      clearTimeout(timer);
      request.off("data", onData);
      request.off("end", onEnd);
      request.off("error", onAbort);
      request.off("close", onAbort);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.byteLength;
      if (size > limitBytes) finish({ kind: "too-large" });
      else chunks.push(chunk);
    };
    const onEnd = (): void => finish({ kind: "complete", bytes: Buffer.concat(chunks) });
    const onAbort = (): void => finish({ kind: "aborted" });
    const timer = setTimeout(() => finish({ kind: "timed-out" }), timeoutMs);
    request.on("data", onData);
    request.once("end", onEnd);
    request.once("error", onAbort);
    request.once("close", onAbort);
  });
}

/** Reads and drops the rest of a body the host has already answered; see MAX_DISCARD_BYTES. */
export function discardRest(request: IncomingMessage, maxBytes: number = MAX_DISCARD_BYTES): void {
  if (request.complete) return;
  let dropped = 0;
  request.on("data", (chunk: Buffer) => {
    dropped += chunk.byteLength;
    if (dropped > maxBytes) request.socket.destroy();
  });
  request.resume();
}

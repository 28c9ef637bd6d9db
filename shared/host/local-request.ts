import type { IncomingMessage } from "node:http";
import type { HandlerRequest } from "../http/handler-request.js";

const NO_BYTES = new ArrayBuffer(0);

/**
 * The local host's request: what a Functions HttpRequest built from the same message would
 * show a handler (shared/http/handler-request.ts), read straight off node:http. The
 * HttpRequest wraps a Fetch Request (header validation, a body stream) that cost about as
 * much CPU per heartbeat as our whole handler; nothing here is computed before it is asked for.
 *
 * Matches the HttpRequest it replaces: header names case-insensitive and repeated values
 * joined with ", " (as the host flattened them for it); a GET or HEAD has no body, as the
 * Fetch Request drops it; an empty body is no body.
 */
export class LocalRequest implements HandlerRequest {
  readonly headers: { get(name: string): string | null };
  readonly body: Uint8Array | null;

  constructor(
    message: IncomingMessage,
    readonly method: string,
    private readonly target: URL,
    readonly params: Readonly<Record<string, string>>,
    bytes: Uint8Array,
  ) {
    const headers = message.headers;
    this.headers = {
      get: (name) => {
        const key = name.toLowerCase();
        if (!Object.hasOwn(headers, key)) return null;
        const value = headers[key];
        if (value === undefined) return null;
        return Array.isArray(value) ? value.join(", ") : value;
      },
    };
    this.body = bytes.byteLength === 0 || method === "GET" || method === "HEAD" ? null : bytes;
  }

  get url(): string {
    return this.target.href;
  }

  get query(): URLSearchParams {
    return this.target.searchParams;
  }

  arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = this.body;
    // A copy: the bytes may sit in Node's shared buffer pool.
    return Promise.resolve(bytes === null ? NO_BYTES.slice(0) : (bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer));
  }
}

import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { recordResponse } from "./openapi-responses.js";

export interface RecordingProxy {
  /** The proxy's API base, e.g. http://127.0.0.1:41632/api: give it to the CLI as its endpoint. */
  readonly url: string;
  /** Every request passed on or refused, in order of arrival: method, path (query included) and body text. */
  readonly requests: { readonly method: string; readonly path: string; readonly body: string }[];
  close(): Promise<void>;
}

export interface ProxyOptions {
  /** Asked before each request: a status to answer at once instead of passing it on (a key rotation, a deploy that answers 404 for a while). */
  readonly refuse?: () => 401 | 404 | undefined;
  /**
   * Asked before each request: lose it, as a lossy network does, never answering it (the
   * client's own budget ends the call): `request`, the service never sees it; `answer`, the
   * service acts on it and its answer is dropped.
   */
  readonly lose?: (request: { readonly method: string; readonly path: string; readonly body: string }) => "request" | "answer" | undefined;
}

/**
 * A pass-through HTTP proxy on 127.0.0.1 in front of a running service, for CLI-driven
 * end-to-end tests: the CLI's requests (the SDK's, in another process) go through it, and
 * every answer is recorded for the OpenAPI check (openapi-responses.ts) as it is passed on;
 * on demand it loses requests (`lose`).
 */
export async function startRecordingProxy(target: string, options: ProxyOptions = {}): Promise<RecordingProxy> {
  const origin = new URL(target).origin;
  const requests: { method: string; path: string; body: string }[] = [];
  const server = createServer((request, response) => {
    void (async () => {
      try {
        const body = await readAll(request);
        requests.push({ method: request.method ?? "GET", path: request.url ?? "/", body: body.toString() });
        const lost = options.lose?.(requests[requests.length - 1]!);
        if (lost === "request") return;
        const refusal = options.refuse?.();
        if (refusal !== undefined) {
          const message = refusal === 401 ? "Send the API key in the x-functions-key header." : "No route answers this URL.";
          response.writeHead(refusal, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: refusal === 401 ? "Unauthorized" : "NotFound", message } }));
          return;
        }
        const headers = Object.fromEntries(
          Object.entries(request.headers).filter((entry): entry is [string, string] => typeof entry[1] === "string" && !["host", "connection", "content-length"].includes(entry[0])),
        );
        const method = request.method ?? "GET";
        const path = request.url ?? "/";
        const answer = await fetch(`${origin}${path}`, { method, headers, ...(body.length > 0 ? { body } : {}) });
        const text = await answer.text();
        if (lost === "answer") return;
        const contentType = answer.headers.get("content-type");
        recordResponse({ origin, method, path, status: answer.status, contentType, body: text === "" ? {} : contentType?.includes("json") ? (JSON.parse(text) as unknown) : text });
        const passed: Record<string, string> = {};
        answer.headers.forEach((value, name) => {
          if (!["content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"].includes(name)) passed[name] = value;
        });
        response.writeHead(answer.status, passed).end(text);
      } catch (error) {
        response.writeHead(502, { "content-type": "text/plain" }).end(String(error));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${new URL(target).pathname}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readAll(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

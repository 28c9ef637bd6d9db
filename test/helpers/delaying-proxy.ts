import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** How long the proxy holds one method's requests before passing them on, and their answers after. */
export interface Holds {
  readonly beforeMs?: number;
  readonly afterMs?: number;
}

export interface DelayingProxy {
  /** The proxy's API base: give it to the CLI as its endpoint. */
  readonly url: string;
  /** "PUT /api/primary/x" for every request the service has answered, in order. */
  readonly served: string[];
  /** Resolves once the service has answered a request of `method` (its answer may still be held). */
  served$(method: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * A slow network in front of a running service, for real-process tests: requests of a
 * method are held `beforeMs` before they reach the service (and dropped if their client
 * went away meanwhile, as a request that never left would be), and their answers `afterMs`
 * after (the service has acted on them all the same).
 */
export async function startDelayingProxy(target: string, holds: Readonly<Record<string, Holds>>): Promise<DelayingProxy> {
  const origin = new URL(target).origin;
  const served: string[] = [];
  const waiters: { method: string; resolve: () => void }[] = [];
  const server = createServer((request, response) => {
    void (async () => {
      try {
        const method = request.method ?? "GET";
        const hold = holds[method] ?? {};
        const body = await readAll(request);
        await sleep(hold.beforeMs ?? 0);
        if (request.socket.destroyed) return;
        const headers = Object.fromEntries(
          Object.entries(request.headers).filter((entry): entry is [string, string] => typeof entry[1] === "string" && !["host", "connection", "content-length"].includes(entry[0])),
        );
        const answer = await fetch(`${origin}${request.url ?? "/"}`, { method, headers, ...(body.length > 0 ? { body } : {}) });
        const text = await answer.text();
        served.push(`${method} ${request.url ?? "/"}`);
        for (const waiter of waiters.filter((w) => w.method === method)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
        await sleep(hold.afterMs ?? 0);
        response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" }).end(text);
      } catch (error) {
        if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" }).end(String(error));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${new URL(target).pathname}`,
    served,
    served$: (method) => (served.some((line) => line.startsWith(`${method} `)) ? Promise.resolve() : new Promise((resolve) => void waiters.push({ method, resolve }))),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function sleep(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}

async function readAll(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

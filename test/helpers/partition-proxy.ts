import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface PartitionProxy {
  /** The proxy's API base: give it to one participant as its endpoint. */
  readonly url: string;
  /** Requests that reached the proxy while it was cut, and so never reached the service. */
  readonly dropped: number;
  /** From now on, every request is held unanswered, as a network that drops this participant's packets would. */
  cut(): void;
  /** Passes requests on again; those held while cut are dropped (their sockets destroyed), never passed on. */
  heal(): void;
  close(): Promise<void>;
}

/**
 * One participant's own path to a running service, for real-process tests of a partition
 * of that participant alone: everyone else talks to the service directly. While cut, a
 * request gets no answer at all (its caller times out), as when the network drops its
 * packets; it never reaches the service. Otherwise a plain pass-through (a service that
 * cannot be reached through it is a 502, as any proxy answers).
 */
export async function startPartitionProxy(target: string): Promise<PartitionProxy> {
  const origin = new URL(target).origin;
  let isCut = false;
  let dropped = 0;
  const held = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    void (async () => {
      if (isCut) {
        dropped += 1;
        held.add(response);
        response.on("close", () => held.delete(response));
        request.resume();
        return;
      }
      try {
        const body = await readAll(request);
        const headers = Object.fromEntries(
          Object.entries(request.headers).filter((entry): entry is [string, string] => typeof entry[1] === "string" && !["host", "connection", "content-length"].includes(entry[0])),
        );
        const method = request.method ?? "GET";
        const answer = await fetch(`${origin}${request.url ?? "/"}`, { method, headers, ...(body.length > 0 ? { body } : {}) });
        const text = await answer.text();
        // Cut while the service answered: the answer is lost on the way back (silence, as above).
        if (isCut) {
          held.add(response);
          response.on("close", () => held.delete(response));
          return;
        }
        const passed: Record<string, string> = {};
        answer.headers.forEach((value, name) => {
          if (!["content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"].includes(name)) passed[name] = value;
        });
        response.writeHead(answer.status, passed).end(text);
      } catch (error) {
        if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" }).end(String(error));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${new URL(target).pathname}`,
    get dropped() {
      return dropped;
    },
    cut: () => {
      isCut = true;
    },
    heal: () => {
      isCut = false;
      for (const response of held) response.destroy();
      held.clear();
    },
    close: () =>
      new Promise((resolve) => {
        for (const response of held) response.destroy();
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

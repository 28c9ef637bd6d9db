import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { PrimaryElector } from "../sdk/primary-elector.js";

export interface CheckPrimaryServer {
  /** e.g. http://127.0.0.1:5801/check-primary */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * CheckPrimary for co-located services (seed 003): `GET /check-primary` answers from the
 * elector's computed state at the moment of the request, 200 {"isPrimary":true,"epoch":…}
 * or 503 {"isPrimary":false}. It listens on 127.0.0.1 only: it is for this host.
 */
export async function startCheckPrimaryServer(elector: PrimaryElector, port: number): Promise<CheckPrimaryServer> {
  const server = createServer((request, response) => {
    request.resume();
    const path = new URL(request.url ?? "/", "http://127.0.0.1").pathname;
    let status: number;
    let body: object;
    if (path !== "/check-primary") {
      status = 404;
      body = { error: { code: "NotFound", message: "Only GET /check-primary is served here." } };
    } else if (request.method !== "GET") {
      status = 405;
      body = { error: { code: "MethodNotAllowed", message: "Use GET /check-primary." } };
    } else {
      const epoch = elector.epoch; // read once: undefined exactly when not primary now
      status = epoch === undefined ? 503 : 200;
      body = epoch === undefined ? { isPrimary: false } : { isPrimary: true, epoch };
    }
    response.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}/check-primary`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

import { createServer } from "node:http";
import { isIP, type AddressInfo } from "node:net";
import { UsageError } from "../usage-error.js";

/** CheckPrimary listens on this host only unless told otherwise: it is for co-located services. */
export const CHECK_HOST_DEFAULT = "127.0.0.1";

export interface CheckPrimaryServer {
  /** Where it listens, e.g. http://0.0.0.0:5801/check-primary */
  readonly url: string;
  /** How a process on this host reaches it (127.0.0.1 when it listens on every interface): HA_CHECK_URL. */
  readonly localUrl: string;
  close(): Promise<void>;
}

/**
 * What it reads of the elector: `epoch` is defined exactly while primary; `exclusiveTimeLeftMs()`
 * is 0 while a primary rides through an outage (docs/protocol.md#ride-through).
 */
export interface PrimaryState {
  readonly epoch: number | undefined;
  exclusiveTimeLeftMs?(): number;
}

/**
 * CheckPrimary for co-located services (docs/cli.md#run): `GET /check-primary` answers from the
 * elector's computed state at the moment of the request, 200 {"isPrimary":true,"epoch":…}
 * or 503 {"isPrimary":false}. 200 only while no other participant can be primary: while a
 * primary rides through an outage (`run --ride-through`) another may have been elected, and
 * those who ask here act without the epoch to fence their work, so the answer is then 503
 * {"isPrimary":false,"ridingThrough":true}. `HEAD` gives the same status without a body, for probes
 * that only look at it. It listens on `host` (127.0.0.1 by default: this host only).
 * A port in use or a host that is not this machine's is a UsageError naming the flag.
 */
export async function startCheckPrimaryServer(elector: PrimaryState, port: number, host: string = CHECK_HOST_DEFAULT): Promise<CheckPrimaryServer> {
  if (isIP(host) === 0 && host !== "localhost") {
    throw new UsageError(`--check-host must be an IP address of this machine, such as 127.0.0.1 or 0.0.0.0 (got ${JSON.stringify(host)}).`);
  }
  const server = createServer((request, response) => {
    request.resume();
    const path = new URL(request.url ?? "/", "http://127.0.0.1").pathname;
    let status: number;
    let body: object;
    const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };
    if (path !== "/check-primary") {
      status = 404;
      body = { error: { code: "NotFound", message: "Only GET or HEAD /check-primary is served here." } };
    } else if (request.method !== "GET" && request.method !== "HEAD") {
      status = 405;
      headers["allow"] = "GET, HEAD";
      body = { error: { code: "MethodNotAllowed", message: "Use GET or HEAD /check-primary." } };
    } else {
      const epoch = elector.epoch; // read once: undefined exactly when not primary now
      const riding = epoch !== undefined && elector.exclusiveTimeLeftMs !== undefined && elector.exclusiveTimeLeftMs() <= 0;
      status = epoch === undefined || riding ? 503 : 200;
      body = epoch === undefined ? { isPrimary: false } : riding ? { isPrimary: false, ridingThrough: true } : { isPrimary: true, epoch };
    }
    response.writeHead(status, headers);
    // For HEAD, Node sends the headers (with the length GET would have) and no body.
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => reject(listenRefusal(error, host, port)));
    server.listen(port, host, () => {
      server.removeAllListeners("error");
      resolve();
    });
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${urlHost(host)}:${bound}/check-primary`,
    localUrl: `http://${urlHost(localHostFor(host))}:${bound}/check-primary`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function listenRefusal(error: NodeJS.ErrnoException, host: string, port: number): Error {
  switch (error.code) {
    case "EADDRINUSE":
      return new UsageError(`--check-port ${port} is in use on ${host}: give another port, or 0 for a free one.`);
    case "EACCES":
      return new UsageError(`--check-port ${port} needs privileges on ${host}: give a port above 1023, or 0 for a free one.`);
    case "EADDRNOTAVAIL":
      return new UsageError(`--check-host ${host} is not an address of this machine: give one of its addresses, or 0.0.0.0 for all.`);
    default:
      return error;
  }
}

/** A wildcard address accepts connections to loopback too, which is what a local process should use. */
export function localHostFor(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "::1";
  return host;
}

function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { isIP, type AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { allowedMethods, routesOf, type Operation } from "../http/route.js";
import type { Runtime } from "../http/runtime.js";
import { createAccess, type Access } from "../http/access.js";
import { DEFAULT_KEY_NAME } from "../config/auth-config.js";
import { answerClientError, answerConnect, type Exchange } from "./socket-answers.js";
import { internalErrorAnswer } from "../http/failure-answer.js";
import { resolveHostTimeouts, type LocalHostTimeouts } from "./host-timeouts.js";
import { compileRoute } from "./route-table.js";
import { serveRequest, writeResponse, type HostContext, type HostLog } from "./serve-request.js";

export interface LocalHostOptions {
  /** The route table (functions/routes.ts), given by the composition root. */
  readonly operations: readonly Operation[];
  readonly runtime: () => Promise<Runtime>;
  /** 0 picks a free port. */
  readonly port: number;
  /** The address to listen on (HA_HOST); 127.0.0.1 by default: this machine only. */
  readonly hostname?: string;
  /** When set, every request must carry it in x-functions-key (or ?code=), as in Azure. Ignored when `access` is given. */
  readonly apiKey?: string | undefined;
  /** Keys, tokens and grants (shared/http/access.ts); by default `apiKey` alone, or nothing checked. */
  readonly access?: Access;
  readonly log?: HostLog;
  /** Deadlines for a client to send a request; 5 s for the headers and 5 s for the body by default. */
  readonly timeouts?: LocalHostTimeouts;
}

export interface LocalHost {
  /** The API base URL, e.g. http://127.0.0.1:7071/api */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves the route table over node:http under /api, the way the Functions host would:
 * the same handlers and dispatcher (given a LocalRequest, which shows them what the
 * Functions HttpRequest would), and the same checks of keys, tokens and grants as the app
 * makes in Azure when auth settings are given (shared/http/access.ts).
 * It exists because Core Tools cannot be installed everywhere.
 *
 * Guaranteed to any client, however hostile: every answer the host can still write is
 * the contract's JSON error or a handler's answer (Node's bare-status answers are all
 * replaced), no request holds a connection past the timeouts, and nothing the host
 * refuses reaches a handler, so nothing it refuses is written.
 */
export async function startLocalHost(options: LocalHostOptions): Promise<LocalHost> {
  const timeouts = resolveHostTimeouts(options.timeouts);
  const log = options.log ?? ((level, message) => console[level](message));
  const routes = routesOf(options.operations);
  const compiled = routes.map(compileRoute);
  const access = options.access ?? createAccess({ identity: undefined, keys: options.apiKey === undefined ? [] : [{ name: DEFAULT_KEY_NAME, value: options.apiKey }], grants: undefined });
  const host: HostContext = { routes: compiled, runtime: options.runtime, access, timeouts, log };
  const everyMethod = [...new Set(routes.flatMap(allowedMethods))];
  const exchanges = new WeakMap<Duplex, Exchange>();

  const onRequest = (request: IncomingMessage, response: ServerResponse): void => {
    exchanges.set(request.socket, { request, response });
    response.on("error", (error) => log("warn", `local host: response: ${error.message}`));
    serveRequest(request, response, host).catch((error: unknown) => {
      // The last resort: a bug. Logged with its stack; the caller gets no detail.
      log("error", `local host: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (response.headersSent) {
        response.destroy();
        return;
      }
      response.setHeader("connection", "close");
      writeResponse(response, internalErrorAnswer());
    });
  };
  const server = createServer(
    {
      // Checked by the host, which answers with a JSON error instead of Node's bare 400.
      requireHostHeader: false,
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      connectionsCheckingInterval: timeouts.checkIntervalMs,
      keepAliveTimeout: 5_000,
    },
    onRequest,
  );
  // An Expect other than 100-continue is ignored, as Kestrel does, rather than Node's bodiless 417.
  server.on("checkExpectation", onRequest);
  server.on("clientError", (error: Error, socket: Duplex) => answerClientError(error, socket, exchanges.get(socket), timeouts));
  server.on("connect", (_request: IncomingMessage, socket: Duplex) => answerConnect(socket, everyMethod));

  const hostname = options.hostname ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, hostname, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // After listening, an accept failure (EMFILE under a connection flood) must not crash the process.
  server.on("error", (error) => log("error", `local host: ${error.message}`));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${isIP(hostname) === 6 ? `[${hostname}]` : hostname}:${port}/api`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

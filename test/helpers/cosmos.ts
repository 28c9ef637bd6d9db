import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "node:https";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { createSelfSignedCertificate } from "../../shared/host/embedded-cosmos-certificate.js";
import { EMBEDDED_COSMOS_KEY, startEmbeddedCosmos, type EmbeddedCosmos } from "../../shared/host/embedded-cosmos.js";
import type { ConfiguredStore } from "../../shared/store/configured-store.js";
import { createCosmosStore } from "../../shared/store/create-cosmos-store.js";

/** A real @vercel/cosmosdb-server on 127.0.0.1 (a free port, in memory), for one test file. */
export function startTestCosmos(): Promise<EmbeddedCosmos> {
  return startEmbeddedCosmos({ port: 0 });
}

let containerCounter = 0;

/**
 * A Cosmos store built by the production factory (key mode) on fresh containers (leases and
 * members), so tests never see each other's rows. Only this client trusts the emulator's certificate.
 */
export async function createFreshCosmosStore(
  cosmos: Pick<EmbeddedCosmos, "endpoint" | "key" | "certificatePem">,
  containerName?: string,
  { createIfMissing = containerName === undefined }: { createIfMissing?: boolean } = {},
): Promise<ConfiguredStore> {
  containerCounter += 1;
  const configured = createCosmosStore(
    {
      kind: "cosmos",
      databaseName: "ha",
      containerName: containerName ?? `leases-${process.pid}-${containerCounter}`,
      membersContainerName: `members-${process.pid}-${containerCounter}`,
      connection: { mode: "key", endpoint: cosmos.endpoint, key: cosmos.key },
      createIfMissing,
    },
    { trustedCosmosCertificate: cosmos.certificatePem },
  );
  await configured.prepare({ abortSignal: AbortSignal.timeout(10_000) });
  return configured;
}

/** An HTTP answer the faulty emulator gives instead of serving a document request. */
export interface CosmosFault {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface FaultyCosmos extends EmbeddedCosmos {
  /** Answers the next document requests (reads and writes of items) with these faults, in order. */
  inject(...faults: CosmosFault[]): void;
  /** Document requests seen so far, faulted or served. */
  documentRequests(): number;
}

/**
 * The real emulator behind a request listener that can answer document requests with
 * scripted faults (429 with retry-after, 5xx), which the emulator itself never sends.
 * Database, container and account requests always reach the emulator.
 */
export async function startFaultyTestCosmos(): Promise<FaultyCosmos> {
  const require = createRequire(import.meta.url);
  const { createHttpsServer } = require("@vercel/cosmosdb-server") as {
    createHttpsServer(options: { cert: string; key: string; keepAlive?: boolean }): Server;
  };
  const { certificatePem, privateKeyPem } = createSelfSignedCertificate("ha-module faulty Cosmos emulator");
  const server = createHttpsServer({ cert: certificatePem, key: privateKeyPem, keepAlive: true });
  const [emulate] = server.listeners("request") as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  if (emulate === undefined) throw new Error("the emulator registered no request listener");
  server.removeAllListeners("request");
  const faults: CosmosFault[] = [];
  let documentRequests = 0;
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (!/\/docs(\/|$)/.test(req.url ?? "")) return emulate(req, res);
    documentRequests += 1;
    const fault = faults.shift();
    if (fault === undefined) return emulate(req, res);
    req.resume();
    res.writeHead(fault.status, { "content-type": "application/json", ...fault.headers });
    res.end(JSON.stringify({ code: String(fault.status), message: "injected fault" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `https://127.0.0.1:${port}`,
    key: EMBEDDED_COSMOS_KEY,
    certificatePem,
    inject: (...more) => void faults.push(...more),
    documentRequests: () => documentRequests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

import type { Server } from "node:https";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { createSelfSignedCertificate } from "./embedded-cosmos-certificate.js";

/**
 * The emulator accepts any key; this one only fills the SDK's required field. It is not
 * a secret and opens nothing but the in-process emulator.
 */
export const EMBEDDED_COSMOS_KEY = "embedded-cosmos-emulator-accepts-any-key";

export interface EmbeddedCosmos {
  /** https://127.0.0.1:<port> */
  readonly endpoint: string;
  readonly key: string;
  /** The one certificate this emulator serves: the only one its clients should trust. */
  readonly certificatePem: string;
  close(): Promise<void>;
}

export interface EmbeddedCosmosOptions {
  /** 0 (the default) picks a free port. */
  readonly port?: number;
}

type CreateHttpsServer = (options: { cert: string; key: string; keepAlive?: boolean }) => Server;

/**
 * Starts @vercel/cosmosdb-server inside this process on 127.0.0.1, serving HTTPS with a
 * certificate made for this run: the embedded store of `HA_STORE=cosmos npm start`,
 * and the Cosmos service that the tests run against. Data lives in memory only.
 */
export async function startEmbeddedCosmos(options: EmbeddedCosmosOptions = {}): Promise<EmbeddedCosmos> {
  const require = createRequire(import.meta.url);
  let createHttpsServer: CreateHttpsServer;
  try {
    createHttpsServer = require("@vercel/cosmosdb-server").createHttpsServer;
  } catch (error) {
    throw new Error(
      "The embedded Cosmos emulator needs the @vercel/cosmosdb-server package (a dev dependency): run `npm install`, or set HA_COSMOS_ENDPOINT.",
      { cause: error },
    );
  }
  const { certificatePem, privateKeyPem } = createSelfSignedCertificate("ha-module embedded Cosmos emulator");
  const server = createHttpsServer({ cert: certificatePem, key: privateKeyPem, keepAlive: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `https://127.0.0.1:${port}`,
    key: EMBEDDED_COSMOS_KEY,
    certificatePem,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

import type { Server } from "node:https";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { loadDevDependency } from "./dev-dependency.js";
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
  const createHttpsServer = loadCosmosEmulator();
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

/**
 * The emulator, from @vercel/cosmosdb-server: a dev dependency of ha-module, so a project
 * that installed ha-module lacks it and the message says what to install instead of
 * "run npm install". `require` is injectable for the test of that message.
 */
export function loadCosmosEmulator(require: NodeJS.Require = createRequire(import.meta.url)): CreateHttpsServer {
  return loadDevDependency(
    () => require("@vercel/cosmosdb-server").createHttpsServer,
    "HA_COSMOS_ENDPOINT",
    "HA_STORE=cosmos without HA_COSMOS_ENDPOINT makes `ha-module serve` embed a Cosmos emulator, but the " +
      "@vercel/cosmosdb-server package is not installed (ha-module lists it as a dev dependency, which installing " +
      "ha-module does not bring). Install it beside ha-module: `npm install --save-dev @vercel/cosmosdb-server`. " +
      "Or set HA_COSMOS_ENDPOINT (with HA_COSMOS_KEY) to an account or an emulator you run.",
  );
}

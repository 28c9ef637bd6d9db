import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { loadDevDependency } from "./dev-dependency.js";
import { lockDataDir, type DataDirLock } from "./data-dir-lock.js";
import { makeWritesDurable } from "./durable-azurite.js";

/** Azurite's well-known development account (public, documented, not a secret). */
const DEV_ACCOUNT = "devstoreaccount1";
const DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

export interface EmbeddedAzurite {
  readonly connectionString: string;
  readonly endpoint: string;
  close(): Promise<void>;
}

export interface EmbeddedAzuriteOptions {
  /**
   * Where table data persists; ignored when `inMemory`. The directory is locked while
   * this Azurite runs (another one on it gets a DataDirInUseError), and every write is
   * on disk before Azurite answers it.
   */
  readonly dataDir: string;
  readonly inMemory: boolean;
  /** 0 picks a free port. */
  readonly port?: number;
}

interface AzuriteTableServer {
  /** Azurite's LokiTableMetadataStore, where the tables live (see durable-azurite.ts). */
  readonly metadataStore?: unknown;
  start(): Promise<void>;
  close(): Promise<void>;
  getHttpServerAddress(): string;
}

interface Azurite {
  readonly TableServer: new (config: unknown) => AzuriteTableServer;
  readonly TableConfiguration: new (...args: unknown[]) => unknown;
}

/**
 * Starts Azurite's Table service inside this process on 127.0.0.1: the embedded default
 * store of `npm start`, and the real Table service that the tests run against.
 */
export async function startEmbeddedAzurite(options: EmbeddedAzuriteOptions): Promise<EmbeddedAzurite> {
  const { TableServer, TableConfiguration } = loadAzurite();
  let dbPath = "";
  let lock: DataDirLock | undefined;
  if (!options.inMemory) {
    const dir = resolve(options.dataDir);
    await mkdir(dir, { recursive: true });
    // Before Azurite reads the file: a directory held by another service is left alone.
    lock = await lockDataDir(dir);
    dbPath = join(dir, "__azurite_db_table__.json");
  }
  try {
    const config = new TableConfiguration(
      "127.0.0.1",
      options.port ?? 0,
      undefined, // keep-alive timeout: Azurite's default
      dbPath,
      false, // debug log
      false, // access log
      undefined,
      undefined,
      false, // loose
      true, // skip the API version check: the SDK may be newer than this Azurite
      "",
      "",
      "",
      undefined,
      false,
      options.inMemory,
    );
    const server = new TableServer(config);
    if (!options.inMemory) makeWritesDurable(server.metadataStore);
    await server.start();
    const endpoint = `${server.getHttpServerAddress()}/${DEV_ACCOUNT}`;
    return {
      endpoint,
      connectionString: `DefaultEndpointsProtocol=http;AccountName=${DEV_ACCOUNT};AccountKey=${DEV_KEY};TableEndpoint=${endpoint};`,
      close: async () => {
        try {
          await server.close();
        } finally {
          await lock?.release();
        }
      },
    };
  } catch (error) {
    await lock?.release();
    throw error;
  }
}

/**
 * Azurite's Table service, from the azurite package. ha-module lists it as a dev
 * dependency, so a clone has it after `npm install`, but a project that installed
 * ha-module does not: the message says what to install, or which setting avoids it.
 * `require` is injectable for the test of that message.
 */
export function loadAzurite(require: NodeJS.Require = createRequire(import.meta.url)): Azurite {
  return loadDevDependency(
    () => ({
      TableServer: require("azurite/dist/src/table/TableServer").default,
      TableConfiguration: require("azurite/dist/src/table/TableConfiguration").default,
    }),
    "HA_TABLE_CONNECTION_STRING",
    "No lease store is configured, so `ha-module serve` would embed Azurite, but the azurite package is not installed " +
      "(ha-module lists it as a dev dependency, which installing ha-module does not bring). Install it beside ha-module: " +
      "`npm install --save-dev azurite`. Or point the service at a store: HA_TABLE_CONNECTION_STRING (keys, or " +
      "UseDevelopmentStorage=true for an Azurite you run) or HA_TABLE_ENDPOINT (managed identity).",
  );
}

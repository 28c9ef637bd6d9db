import { createRequire } from "node:module";

/** Azurite's well-known development account (public, documented, not a secret). */
const DEV_ACCOUNT = "devstoreaccount1";
const DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

export interface TestAzuriteBlob {
  readonly connectionString: string;
  close(): Promise<void>;
}

interface AzuriteBlobServer {
  start(): Promise<void>;
  close(): Promise<void>;
  getHttpServerAddress(): string;
}

/** Azurite's Blob service inside this process on 127.0.0.1 (a free port, in memory), for one test file. */
export async function startTestAzuriteBlob(): Promise<TestAzuriteBlob> {
  const require = createRequire(import.meta.url);
  const BlobServer = require("azurite/dist/src/blob/BlobServer").default as new (config: unknown) => AzuriteBlobServer;
  const BlobConfiguration = require("azurite/dist/src/blob/BlobConfiguration").default as new (...args: unknown[]) => unknown;
  const config = new BlobConfiguration(
    "127.0.0.1",
    0,
    undefined, // keep-alive timeout: Azurite's default
    "", // metadata db path (in memory)
    "", // extent db path (in memory)
    [], // persistence paths (in memory)
    false, // access log
    undefined,
    false, // debug log
    undefined,
    false, // loose
    true, // skip the API version check: the SDK may be newer than this Azurite
    "",
    "",
    "",
    undefined,
    false,
    true, // in memory
  );
  const server = new BlobServer(config);
  await server.start();
  const endpoint = `${server.getHttpServerAddress()}/${DEV_ACCOUNT}`;
  return {
    connectionString: `DefaultEndpointsProtocol=http;AccountName=${DEV_ACCOUNT};AccountKey=${DEV_KEY};BlobEndpoint=${endpoint};`,
    close: () => server.close(),
  };
}

import { startEmbeddedCosmos, type EmbeddedCosmos } from "../../shared/host/embedded-cosmos.js";
import { createConfiguredStore, type ConfiguredStore } from "../../shared/store/create-store.js";

/** A real @vercel/cosmosdb-server on 127.0.0.1 (a free port, in memory), for one test file. */
export function startTestCosmos(): Promise<EmbeddedCosmos> {
  return startEmbeddedCosmos({ port: 0 });
}

let containerCounter = 0;

/**
 * A Cosmos store built by the production factory (key mode) on a fresh container, so
 * tests never see each other's leases. Only this client trusts the emulator's certificate.
 */
export async function createFreshCosmosStore(
  cosmos: Pick<EmbeddedCosmos, "endpoint" | "key" | "certificatePem">,
  containerName?: string,
): Promise<ConfiguredStore> {
  containerCounter += 1;
  const configured = createConfiguredStore(
    {
      kind: "cosmos",
      databaseName: "ha",
      containerName: containerName ?? `leases-${process.pid}-${containerCounter}`,
      connection: { mode: "key", endpoint: cosmos.endpoint, key: cosmos.key },
      createIfMissing: containerName === undefined,
    },
    { trustedCosmosCertificate: cosmos.certificatePem },
  );
  await configured.prepare({ abortSignal: AbortSignal.timeout(10_000) });
  return configured;
}

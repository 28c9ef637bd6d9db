import { Agent } from "node:https";
import { CosmosClient } from "@azure/cosmos";
import { afterAll, describe, expect, it } from "vitest";
import type { EmbeddedCosmos } from "../../shared/host/embedded-cosmos.js";
import { CosmosMemberStore } from "../../shared/store/members-cosmos-store.js";
import type { ConfiguredStore } from "../../shared/store/configured-store.js";
import { createFreshCosmosStore, startTestCosmos } from "../helpers/cosmos.js";
import { describeMemberStoreConformance } from "./member-store-conformance.js";

let cosmos: EmbeddedCosmos;
const opened: ConfiguredStore[] = [];

describeMemberStoreConformance("Azure Cosmos DB on @vercel/cosmosdb-server", {
  setUp: async () => {
    cosmos = await startTestCosmos();
  },
  tearDown: async () => {
    for (const configured of opened) configured.close();
    await cosmos.close();
  },
  createStore: async () => {
    const configured = await createFreshCosmosStore(cosmos);
    opened.push(configured);
    return configured.members;
  },
});

describe("Cosmos member container", () => {
  let emulator: EmbeddedCosmos | undefined;
  afterAll(async () => emulator?.close());

  it("is created partitioned on /group with only /group indexed, beside the lease container", async () => {
    emulator = await startTestCosmos();
    const client = new CosmosClient({ endpoint: emulator.endpoint, key: emulator.key, agent: new Agent({ ca: [emulator.certificatePem] }) });
    try {
      const container = client.database("ha").container("members-layout");
      await new CosmosMemberStore(container).createContainerIfMissing();
      const { resource } = await container.read();
      expect(resource?.partitionKey?.paths).toEqual(["/group"]);
      expect(resource?.indexingPolicy).toMatchObject({ includedPaths: [{ path: "/group/?" }], excludedPaths: [{ path: "/*" }] });
      const store = new CosmosMemberStore(container);
      await store.create({ group: "g", member: "m", session: "s", address: null, joinedAt: 1, renewedAt: 1, heartbeats: 1, leftAt: null, previous: null, endedSessions: [] });
      const { resource: item } = await container.item("m", "g").read<{ id: string; group: string }>();
      expect(item).toMatchObject({ id: "m", group: "g" });
    } finally {
      client.dispose();
    }
  });
});

import { Agent } from "node:https";
import { CosmosClient, type Container } from "@azure/cosmos";
import { expect, it } from "vitest";
import type { EmbeddedCosmos } from "../../shared/host/embedded-cosmos.js";
import { fencedCosmosItem, FencedWriteContendedError, type FenceableCosmosContainer } from "../../shared/sdk/index.js";
import { startTestCosmos } from "../helpers/cosmos.js";
import { describeFencedWrites, direct, type Around } from "./fenced-write-conformance.js";

let cosmos: EmbeddedCosmos;
let client: CosmosClient;
let container: Container;
let items = 0;

function connect(emulator: EmbeddedCosmos): CosmosClient {
  return new CosmosClient({ endpoint: emulator.endpoint, key: emulator.key, agent: new Agent({ ca: [emulator.certificatePem] }) });
}

/** The user's Container with its item calls passed through `around`. */
function aroundContainer(user: Container, around: Around): FenceableCosmosContainer {
  return {
    id: user.id,
    read: (...args) => user.read(...args),
    item: (id, partitionKey) => {
      const item = user.item(id, partitionKey);
      return {
        read: (...args) => around("read", () => item.read(...args)),
        replace: (...args) => around("write", () => item.replace(...args)),
      };
    },
    items: { create: (...args) => around("write", () => user.items.create(...args)) },
  };
}

describeFencedWrites("Cosmos item on the Cosmos emulator", {
  setUp: async () => {
    cosmos = await startTestCosmos();
    client = connect(cosmos);
    const { database } = await client.databases.createIfNotExists({ id: "fenced" });
    ({ container } = await database.containers.createIfNotExists({ id: "jobs", partitionKey: { paths: ["/tenant"] } }));
  },
  tearDown: async () => {
    client.dispose();
    await cosmos.close();
  },
  fresh: async () => {
    items += 1;
    const id = `job-${items}`;
    return {
      resourcePattern: new RegExp(`^Cosmos item "${id}" in container "jobs"$`),
      // The partition key is found from the container's definition: the item's `tenant`.
      write: (value, epoch, { around = direct, maxAttempts } = {}) =>
        fencedCosmosItem(aroundContainer(container, around), { maxAttempts }).upsert({ id, tenant: "contoso", value }, { epoch }),
      read: async () => {
        const { resource } = await container.item(id, "contoso").read<{ value: string; haEpoch?: unknown }>();
        return resource && { value: resource.value, epoch: resource.haEpoch };
      },
      writeUnfenced: async (value, mark) => {
        await container.items.upsert({ id, tenant: "contoso", value, ...(mark === undefined ? {} : { haEpoch: mark }) });
      },
    };
  },
});

it("takes the user's Container as it is: partition key given or found by a nested path, an item as read written back", async () => {
  const local = await startTestCosmos();
  const user = connect(local);
  try {
    const { database } = await user.databases.createIfNotExists({ id: "fenced" });
    const { container: nested } = await database.containers.createIfNotExists({ id: "nested", partitionKey: { paths: ["/owner/region"] } });
    const fenced = fencedCosmosItem(nested);
    await fenced.upsert({ id: "a", owner: { region: "west" }, n: 1 }, { epoch: 1 });
    const { resource } = await nested.item("a", "west").read<{ id: string; n: number }>();
    expect(resource).toMatchObject({ n: 1, haEpoch: 1 });
    // Read-modify-write: the item as read (_etag, _ts, the old mark) goes back as it is, marked with the new epoch.
    expect(await fenced.upsert({ ...resource!, n: 2 }, { epoch: 2, partitionKey: "west" })).toMatchObject({ previousEpoch: 1 });
    expect((await nested.item("a", "west").read()).resource).toMatchObject({ n: 2, haEpoch: 2 });
    await expect(fenced.upsert({ id: "b", n: 1 }, { epoch: 1 })).rejects.toThrow(/no value at the partition key path \/owner\/region of container "nested": add it, or pass `partitionKey`/);
  } finally {
    user.dispose();
    await local.close();
  }
});

it("rejects with the client's own error when the container is missing", async () => {
  const local = await startTestCosmos();
  const user = connect(local);
  try {
    const { database } = await user.databases.createIfNotExists({ id: "fenced" });
    const missing = await fencedCosmosItem(database.container("nosuchcontainer"))
      .upsert({ id: "a" }, { epoch: 1, partitionKey: "a" })
      .catch((error: unknown) => error);
    expect(missing).toMatchObject({ code: 404 });
    expect(missing).not.toBeInstanceOf(FencedWriteContendedError);
  } finally {
    user.dispose();
    await local.close();
  }
});

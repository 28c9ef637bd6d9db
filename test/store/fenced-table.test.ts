import { TableClient } from "@azure/data-tables";
import { expect, it } from "vitest";
import type { EmbeddedAzurite } from "../../shared/host/embedded-azurite.js";
import { fencedTableEntity, type FenceableTableClient } from "../../shared/sdk/index.js";
import { startTestAzurite } from "../helpers/azurite.js";
import { describeFencedWrites, direct, type Around } from "./fenced-write-conformance.js";

let azurite: EmbeddedAzurite;
let tables = 0;
let rows = 0;

/** The user's TableClient with its calls passed through `around`. */
function aroundTable(client: TableClient, around: Around): FenceableTableClient {
  return {
    tableName: client.tableName,
    getEntity: (...args) => around("read", () => client.getEntity(...args)),
    createEntity: (...args) => around("write", () => client.createEntity(...args)),
    updateEntity: (...args) => around("write", () => client.updateEntity(...args)),
  };
}

const markOf = (value: unknown): unknown => (typeof value === "bigint" ? Number(value) : value);

describeFencedWrites("Table entity on Azurite", {
  setUp: async () => {
    azurite = await startTestAzurite();
  },
  tearDown: () => azurite.close(),
  fresh: async () => {
    if (rows % 40 === 0) tables += 1;
    rows += 1;
    const client = TableClient.fromConnectionString(azurite.connectionString, `fenced${process.pid}x${tables}`, { allowInsecureConnection: true });
    if (rows % 40 === 1) await client.createTable();
    const keys = { partitionKey: "jobs", rowKey: `job-${rows}` };
    return {
      resourcePattern: new RegExp(`^table entity \\("jobs", "job-${rows}"\\) in table "fenced\\d+x\\d+"$`),
      write: (value, epoch, { around = direct, maxAttempts } = {}) =>
        fencedTableEntity(aroundTable(client, around), { maxAttempts }).upsert({ ...keys, value }, { epoch }),
      read: async () => {
        const found = await client.getEntity<{ value: string; haEpoch?: unknown }>(keys.partitionKey, keys.rowKey).catch((error: { statusCode?: number }) => {
          if (error.statusCode === 404) return undefined;
          throw error;
        });
        return found && { value: found.value, epoch: markOf(found.haEpoch) };
      },
      writeUnfenced: async (value, mark) => {
        await client.upsertEntity({ ...keys, value, ...(mark === undefined ? {} : { haEpoch: mark }) }, "Replace");
      },
    };
  },
});

it("takes the user's TableClient as it is, and keeps the entity's other properties and a Merge", async () => {
  const local = await startTestAzurite();
  try {
    const client = TableClient.fromConnectionString(local.connectionString, "merged", { allowInsecureConnection: true });
    await client.createTable();
    const fenced = fencedTableEntity(client);
    await fenced.upsert({ partitionKey: "p", rowKey: "r", a: 1, b: "two" }, { epoch: 2 });
    // Read-modify-write: the entity as read (etag, timestamp, the old mark) goes back as it is, marked with the new epoch.
    const read = await client.getEntity("p", "r");
    expect(await fenced.upsert({ ...read, b: "three" }, { epoch: 3 })).toMatchObject({ previousEpoch: 2 });
    await fenced.upsert({ partitionKey: "p", rowKey: "r", c: true }, { epoch: 3, mode: "Merge" });
    expect(await client.getEntity("p", "r")).toMatchObject({ a: 1, b: "three", c: true, haEpoch: 3n });
  } finally {
    await local.close();
  }
});

it("rejects with the client's own error when the table is missing, after one read and one create", async () => {
  const local = await startTestAzurite();
  try {
    const client = TableClient.fromConnectionString(local.connectionString, "nosuchtable", { allowInsecureConnection: true });
    const steps: string[] = [];
    const counted = aroundTable(client, (step, call) => (steps.push(step), call()));
    const missing = await fencedTableEntity(counted).upsert({ partitionKey: "p", rowKey: "r" }, { epoch: 1 }).catch((error: unknown) => error);
    expect(missing).toMatchObject({ name: "RestError", statusCode: 404, message: expect.stringContaining("TableNotFound") });
    expect(steps).toEqual(["read", "write"]);
  } finally {
    await local.close();
  }
});

it("marks with an Int64 property: an epoch of the service's clock (about 1.8e12) reads back as that Int64, never an Int32 or a Double", async () => {
  const local = await startTestAzurite();
  try {
    const client = TableClient.fromConnectionString(local.connectionString, "clockepochs", { allowInsecureConnection: true });
    await client.createTable();
    await fencedTableEntity(client).upsert({ partitionKey: "p", rowKey: "r" }, { epoch: 1_795_168_800_004 });
    // bigint is how @azure/data-tables reads an Edm.Int64 (a Double would read as a number).
    expect(await client.getEntity("p", "r")).toMatchObject({ haEpoch: 1_795_168_800_004n });
    const raw = await client.getEntity("p", "r", { disableTypeConversion: true });
    expect(raw["haEpoch"]).toEqual({ value: "1795168800004", type: "Int64" });
  } finally {
    await local.close();
  }
});

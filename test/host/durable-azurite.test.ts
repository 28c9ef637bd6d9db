import { mkdir, mkdtemp, readFile, rm, rmdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TableClient, TableServiceClient } from "@azure/data-tables";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWritesDurable } from "../../shared/host/durable-azurite.js";
import { startEmbeddedAzurite, type EmbeddedAzurite } from "../../shared/host/embedded-azurite.js";
import { createTableStore } from "../../shared/store/create-table-store.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";

/**
 * The embedded Azurite on disk answers a write only once the write is in its data file.
 * Each test reads the file the moment an answer arrives, with Azurite still running (so
 * nothing else could have saved it): what a SIGKILL at that instant would leave behind.
 */
describe("embedded Azurite on disk: every answered write is in the data file", () => {
  let dataDir: string;
  let azurite: EmbeddedAzurite | undefined;
  const onDisk = (): Promise<string> => readFile(join(dataDir, "__azurite_db_table__.json"), "utf8");
  const table = (name: string): TableClient =>
    TableClient.fromConnectionString(azurite!.connectionString, name, { allowInsecureConnection: true });

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "ha-azurite-disk-"));
    azurite = await startEmbeddedAzurite({ dataDir, inMemory: false });
  });
  afterEach(async () => {
    await azurite?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("covers every kind of Table write: tables, insert, replace, merge, upsert, delete, batch", async () => {
    const service = TableServiceClient.fromConnectionString(azurite!.connectionString, { allowInsecureConnection: true });
    await service.createTable("durabletable");
    expect(await onDisk()).toContain("durabletable");

    const client = table("durabletable");
    await client.createEntity({ partitionKey: "p", rowKey: "a", note: "inserted-1" });
    expect(await onDisk()).toContain("inserted-1");

    const { etag } = await client.getEntity("p", "a");
    await client.updateEntity({ partitionKey: "p", rowKey: "a", note: "replaced-2" }, "Replace", { etag });
    expect(await onDisk()).toContain("replaced-2");

    await client.updateEntity({ partitionKey: "p", rowKey: "a", extra: "merged-3" }, "Merge");
    expect(await onDisk()).toContain("merged-3");

    await client.upsertEntity({ partitionKey: "p", rowKey: "b", note: "upserted-4" }, "Replace");
    expect(await onDisk()).toContain("upserted-4");
    await client.upsertEntity({ partitionKey: "p", rowKey: "b", extra: "upserted-merge-5" }, "Merge");
    expect(await onDisk()).toContain("upserted-merge-5");

    await client.deleteEntity("p", "b");
    expect(await onDisk()).not.toContain("upserted-4");

    await client.submitTransaction([
      ["create", { partitionKey: "p", rowKey: "c", note: "batched-6" }],
      ["create", { partitionKey: "p", rowKey: "d", note: "batched-7" }],
    ]);
    const afterBatch = await onDisk();
    expect(afterBatch).toContain("batched-6");
    expect(afterBatch).toContain("batched-7");

    await service.deleteTable("durabletable");
    expect(await onDisk()).not.toContain("inserted-1");
  });

  it("keeps every write of a burst of concurrent lease writes", async () => {
    const configured = createTableStore({
      kind: "table",
      tableName: "leases",
      connection: { mode: "connection-string", connectionString: azurite!.connectionString },
      createIfMissing: true,
    });
    await configured.prepare();
    const utypes = Array.from({ length: 25 }, (_, i) => `burst-role-${i}`);
    const outcomes = await Promise.all(
      utypes.map((utype) => configured.store.create({ utype, uuid: `${utype}-holder`, address: null, epoch: 1, renewedAt: 1, revoked: false, endedUuids: [] })),
    );
    expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
    const file = await onDisk();
    expect(utypes.filter((utype) => !file.includes(`${utype}-holder`))).toEqual([]);
  });

  it("only ever replaces the file whole: a copy taken during a burst of writes is a complete state", async () => {
    const configured = createTableStore({
      kind: "table",
      tableName: "leases",
      connection: { mode: "connection-string", connectionString: azurite!.connectionString },
      createIfMissing: true,
    });
    await configured.prepare();
    let writing = true;
    const writes = Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        configured.store.create({ utype: `copy-role-${i}`, uuid: `copy-holder-${i}`, address: "x".repeat(400), epoch: 1, renewedAt: 1, revoked: false, endedUuids: [] }),
      ),
    ).finally(() => (writing = false));
    let copies = 0;
    while (writing) {
      const copy = await onDisk();
      expect(() => JSON.parse(copy), `copy ${copies} is not a whole file`).not.toThrow();
      copies += 1;
    }
    await writes;
    expect(copies).toBeGreaterThan(0);
  });

  it("fails a write whose save fails (the store is unavailable), and a later save writes it", async () => {
    const configured = createTableStore({
      kind: "table",
      tableName: "leases",
      connection: { mode: "connection-string", connectionString: azurite!.connectionString },
      createIfMissing: true,
    });
    await configured.prepare();
    // A directory where the save writes its temporary file: every save fails (even as root).
    const blocker = join(dataDir, "__azurite_db_table__.json~");
    await mkdir(blocker);
    await expect(
      configured.store.create({ utype: "unsaved", uuid: "unsaved-holder", address: null, epoch: 1, renewedAt: 1, revoked: false, endedUuids: [] }),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(await onDisk()).not.toContain("unsaved-holder");

    await rmdir(blocker);
    const outcome = await configured.store.create({ utype: "saved", uuid: "saved-holder", address: null, epoch: 1, renewedAt: 1, revoked: false, endedUuids: [] });
    expect(outcome.ok).toBe(true);
    const file = await onDisk();
    expect(file).toContain("saved-holder");
    expect(file, "the write whose save failed is written by the next save").toContain("unsaved-holder");
  });
});

describe("makeWritesDurable on an Azurite it was not written for", () => {
  // In memory: no file, no autosave timer; the checks look only at the methods.
  type StoreClass = new (path: string, inMemory: boolean) => object;
  const LokiTableMetadataStore = createRequire(import.meta.url)("azurite/dist/src/table/persistence/LokiTableMetadataStore")
    .default as StoreClass;

  it("accepts the installed Azurite's metadata store", () => {
    expect(() => makeWritesDurable(new LokiTableMetadataStore("unused.json", true))).not.toThrow();
  });

  it("refuses, at start-up, a metadata store with a method it cannot classify as a read or a write", () => {
    class NewerStore extends LokiTableMetadataStore {
      async renameTable(): Promise<void> {}
    }
    expect(() => makeWritesDurable(new NewerStore("unused.json", true))).toThrow(
      /cannot make its writes durable: .*renameTable.*azurite 3\.35/,
    );
  });

  it("refuses one whose write takes other parameters", () => {
    const store = new LokiTableMetadataStore("unused.json", true) as Record<string, unknown>;
    store["insertTableEntity"] = async (_context: unknown) => undefined;
    expect(() => makeWritesDurable(store)).toThrow(/no insertTableEntity\(5 parameters\)/);
  });
});

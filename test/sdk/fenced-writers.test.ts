import { describe, expect, it } from "vitest";
import {
  fencedBlob,
  fencedCosmosItem,
  fencedPostgresRow,
  fencedTableEntity,
  type FenceableBlockBlobClient,
  type FenceablePostgresClient,
  type FenceableCosmosContainer,
  type FenceableTableClient,
} from "../../shared/sdk/index.js";
import { parseStoredEpoch } from "../../shared/sdk/fencing/fenced-write.js";

/** A TableClient stand-in over one entity in memory, recording every call. */
function memoryTable(stored?: Record<string, unknown>, { failRead }: { failRead?: unknown } = {}) {
  const calls: string[] = [];
  let entity = stored === undefined ? undefined : { ...stored, etag: "e0" };
  const client: FenceableTableClient = {
    tableName: "state",
    getEntity: async () => {
      calls.push("getEntity");
      if (failRead !== undefined) throw failRead;
      if (entity === undefined) throw Object.assign(new Error("not found"), { statusCode: 404 });
      return entity;
    },
    createEntity: async (created) => {
      calls.push("createEntity");
      entity = { ...created, etag: "e1" };
      return { etag: "e1" };
    },
    updateEntity: async (updated) => {
      calls.push("updateEntity");
      entity = { ...updated, etag: "e2" };
      return { etag: "e2" };
    },
  };
  return { client, calls, current: () => entity };
}

const noCalls = (calls: string[]): (() => void) => () => expect(calls).toEqual([]);

describe("fenced writers: input checked where it enters, nothing written", () => {
  const badEpochs: Array<[unknown, RegExp]> = [
    [-1, /Expected `epoch` to be a non-negative integer, the epoch of the term doing the write, got -1\./],
    [1.5, /got 1\.5/],
    ["3", /got "3"/],
    [Number.NaN, /got NaN/],
    [2 ** 53, /got 9007199254740992/],
    [undefined, /got undefined \(an elector's `epoch` is undefined while it is not primary: do not write then\)/],
  ];
  for (const [epoch, message] of badEpochs) {
    it(`refuses epoch ${String(epoch)} in each writer`, async () => {
      const { client, calls } = memoryTable();
      await expect(fencedTableEntity(client).upsert({ partitionKey: "p", rowKey: "r" }, { epoch: epoch as number })).rejects.toThrow(message);
      await expect(fencedBlob(blobThatFails(calls)).upload("x", { epoch: epoch as number })).rejects.toThrow(message);
      await expect(fencedCosmosItem(containerThatFails(calls)).upsert({ id: "a" }, { epoch: epoch as number, partitionKey: "a" })).rejects.toThrow(message);
      noCalls(calls)();
    });
  }

  it("refuses a write without options, naming what to pass", async () => {
    const { client, calls } = memoryTable();
    await expect(fencedTableEntity(client).upsert({ partitionKey: "p", rowKey: "r" }, undefined as never)).rejects.toThrow(
      /Expected the write's options to be an object with `epoch`, e\.g\. \{ epoch: elector\.epoch \}, got undefined/,
    );
    expect(calls).toEqual([]);
  });

  it("refuses bad writer options when the writer is made", () => {
    const { client } = memoryTable();
    expect(() => fencedTableEntity(client, { maxAttempts: 0 })).toThrow(/Expected `maxAttempts` to be a positive integer, got 0\./);
    expect(() => fencedTableEntity(client, { maxAttempts: 2.5 })).toThrow(/got 2\.5/);
    expect(() => fencedBlob(blobThatFails([]), { epochField: "ha-epoch" })).toThrow(/Expected `epochField` to be 1–64 letters, digits or '_', starting with a letter or '_', got "ha-epoch"\./);
    expect(() => fencedCosmosItem(containerThatFails([]), "x" as never)).toThrow(/Expected the fenced writer's options to be an object, got "x"\./);
  });

  it("refuses something that is not the client it needs, saying which", () => {
    expect(() => fencedTableEntity({} as never)).toThrow(/Expected a TableClient from @azure\/data-tables/);
    expect(() => fencedBlob({ url: "u" } as never)).toThrow(/Expected a BlockBlobClient from @azure\/storage-blob \(e\.g\. containerClient\.getBlockBlobClient\(name\)\)/);
    expect(() => fencedCosmosItem(undefined as never)).toThrow(/Expected a Container from @azure\/cosmos/);
  });

  it("refuses a bad entity, mode, blob body or item", async () => {
    const calls: string[] = [];
    const { client } = memoryTable();
    await expect(fencedTableEntity(client).upsert({ partitionKey: "p" }, { epoch: 1 })).rejects.toThrow(/Expected the entity to have string `partitionKey` and `rowKey`\./);
    await expect(fencedTableEntity(client).upsert({ partitionKey: "p", rowKey: "r" }, { epoch: 1, mode: "Upsert" as never })).rejects.toThrow(/Expected `mode` to be "Replace" or "Merge", got "Upsert"\./);
    await expect(fencedBlob(blobThatFails(calls)).upload(42 as never, { epoch: 1 })).rejects.toThrow(/Expected the blob's data to be a string or a Uint8Array/);
    await expect(fencedCosmosItem(containerThatFails(calls)).upsert({ id: "" }, { epoch: 1 })).rejects.toThrow(/Expected the item to have a non-empty string `id`\./);
    expect(calls).toEqual([]);
  });
});

describe("fenced writers: the store's own failures and the caller's signal", () => {
  it("passes a store failure through as it is, writing nothing", async () => {
    const unavailable = Object.assign(new Error("Service Unavailable"), { statusCode: 503 });
    const { client, calls } = memoryTable(undefined, { failRead: unavailable });
    await expect(fencedTableEntity(client).upsert({ partitionKey: "p", rowKey: "r" }, { epoch: 1 })).rejects.toBe(unavailable);
    expect(calls).toEqual(["getEntity"]);
  });

  it("stops at an aborted signal before any call, and between the read and the write", async () => {
    const { client, calls } = memoryTable({ partitionKey: "p", rowKey: "r", haEpoch: 1 });
    const done = AbortSignal.abort(new Error("term over"));
    await expect(fencedTableEntity(client).upsert({ partitionKey: "p", rowKey: "r" }, { epoch: 1, signal: done })).rejects.toThrow("term over");
    expect(calls).toEqual([]);
    const controller = new AbortController();
    const aborting: FenceableTableClient = { ...client, getEntity: async (...args) => client.getEntity(...args).finally(() => controller.abort(new Error("demoted"))) };
    await expect(fencedTableEntity(aborting).upsert({ partitionKey: "p", rowKey: "r", v: 2 }, { epoch: 1, signal: controller.signal })).rejects.toThrow("demoted");
    expect(calls).toEqual(["getEntity"]);
  });

  it("refuses a signal that is not an AbortSignal", async () => {
    const { client } = memoryTable();
    await expect(fencedTableEntity(client).upsert({ partitionKey: "p", rowKey: "r" }, { epoch: 1, signal: {} as never })).rejects.toThrow(/Expected `signal` to be an AbortSignal/);
  });

  it("keeps the mark in the field it is told to", async () => {
    const { client, current } = memoryTable();
    await fencedTableEntity(client, { epochField: "fence" }).upsert({ partitionKey: "p", rowKey: "r" }, { epoch: 9 });
    expect(current()).toMatchObject({ fence: { value: "9", type: "Int64" } });
  });
});

describe("a blob made from a SAS URL", () => {
  it("is named without its query, so the signature stays out of errors and logs", async () => {
    const blob: FenceableBlockBlobClient = {
      url: "https://account.blob.core.windows.net/state/run.json?sv=2024-08-04&sig=SECRET",
      getProperties: async () => ({ etag: "e", metadata: { haepoch: "9" } }),
      upload: async () => ({ etag: "f" }),
    };
    const refused = await fencedBlob(blob).upload("x", { epoch: 3 }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ name: "FencedOutError", resource: "blob https://account.blob.core.windows.net/state/run.json", epoch: 3, storedEpoch: 9 });
    expect((refused as Error).message).not.toContain("SECRET");
  });
});

describe("a stored epoch mark", () => {
  it("reads as a number from each store's form: number, bigint (Table Int64), decimal string (blob metadata), { value }", () => {
    expect(parseStoredEpoch("r", "haEpoch", 7)).toBe(7);
    expect(parseStoredEpoch("r", "haEpoch", 7n)).toBe(7);
    expect(parseStoredEpoch("r", "haepoch", "12")).toBe(12);
    expect(parseStoredEpoch("r", "haEpoch", { value: "12", type: "Int64" })).toBe(12);
    expect(parseStoredEpoch("r", "haEpoch", undefined)).toBeUndefined();
    expect(parseStoredEpoch("r", "haEpoch", null)).toBeUndefined();
  });

  it("that is anything else is refused, since it may hide a newer term", () => {
    for (const odd of [-1, 1.5, "1e3", "", true, { value: "x" }, 2n ** 60n]) {
      expect(() => parseStoredEpoch("blob b", "haEpoch", odd)).toThrow(/The epoch mark `haEpoch` of blob b is .*, not a non-negative integer/);
    }
  });
});

function blobThatFails(calls: string[]): FenceableBlockBlobClient {
  return {
    url: "http://127.0.0.1/devstoreaccount1/c/b",
    getProperties: async () => {
      calls.push("getProperties");
      throw new Error("not expected");
    },
    upload: async () => {
      calls.push("upload");
      throw new Error("not expected");
    },
  };
}

function containerThatFails(calls: string[]): FenceableCosmosContainer {
  const fail = async (): Promise<never> => {
    calls.push("cosmos");
    throw new Error("not expected");
  };
  return { id: "c", read: fail, item: () => ({ read: fail, replace: fail }), items: { create: fail } };
}

describe("fencedPostgresRow on a stand-in pg client", () => {
  /** A `pg` client stand-in that records each statement and answers from `answers` in turn. */
  function recordingClient(answers: Array<Array<Record<string, unknown>> | Error>) {
    const statements: Array<{ text: string; values: unknown[] }> = [];
    const client: FenceablePostgresClient = {
      query: async (config) => {
        statements.push(config);
        const answer = answers.shift() ?? [];
        if (answer instanceof Error) throw answer;
        return { rows: answer };
      },
    };
    return { client, statements };
  }

  it("refuses a client, a table, a key or a row it cannot write, before any statement", async () => {
    const { client, statements } = recordingClient([]);
    expect(() => fencedPostgresRow({} as never, { table: "jobs", key: ["id"] })).toThrow(/Expected a client from pg \(a Pool, a Client or a PoolClient\)/);
    expect(() => fencedPostgresRow(client, { table: 'jobs"; DROP TABLE x; --', key: ["id"] })).toThrow(/Expected `table` to be name or schema\.name/);
    expect(() => fencedPostgresRow(client, { table: "a.b.c", key: ["id"] })).toThrow(/Expected `table`/);
    expect(() => fencedPostgresRow(client, { table: "jobs", key: [] })).toThrow(/Expected `key` to be the table's key columns/);
    expect(() => fencedPostgresRow(client, { table: "jobs", key: ["id"] }, { epochField: "id" })).toThrow(/not the mark's column `id`/);
    const fenced = fencedPostgresRow(client, { table: "jobs", key: ["id"] });
    await expect(fenced.upsert({ state: "x" }, { epoch: 1 })).rejects.toThrow(/no value for the key column\(s\) id of "jobs"/);
    await expect(fenced.upsert({ id: 1, "state; --": "x" }, { epoch: 1 })).rejects.toThrow(/column "state; --" is not a plain column name/);
    await expect(fenced.upsert({ id: 1 }, { epoch: -1 })).rejects.toThrow(/Expected `epoch` to be a non-negative integer/);
    expect(statements).toEqual([]);
  });

  it("reads the mark with xmin, then updates on that xmin with every value a parameter; a store failure passes through as it is", async () => {
    const { client, statements } = recordingClient([[{ mark: "3", version: "771" }], [{ version: "772" }]]);
    const result = await fencedPostgresRow(client, { table: "app.jobs", key: ["tenant", "id"] }).upsert({ tenant: "t", id: 7, state: "s" }, { epoch: 4 });
    expect(result).toEqual({ created: false, previousEpoch: 3, etag: "772", attempts: 1 });
    expect(statements).toEqual([
      { text: 'SELECT "ha_epoch" AS mark, xmin::text AS version FROM "app"."jobs" WHERE "tenant" = $1 AND "id" = $2', values: ["t", 7] },
      { text: 'UPDATE "app"."jobs" SET "state" = $3, "ha_epoch" = $4 WHERE "tenant" = $1 AND "id" = $2 AND xmin = $5::xid RETURNING xmin::text AS version', values: ["t", 7, "s", 4, "771"] },
    ]);
    const down = new Error("connect ECONNREFUSED 127.0.0.1:5432");
    const failing = recordingClient([down]);
    await expect(fencedPostgresRow(failing.client, { table: "jobs", key: ["id"] }).upsert({ id: 1 }, { epoch: 1 })).rejects.toBe(down);
    expect(failing.statements).toHaveLength(1);
  });

  it("stops at an aborted signal between the read and the write", async () => {
    const controller = new AbortController();
    const { client, statements } = recordingClient([[]]);
    const aborting: FenceablePostgresClient = { query: async (config) => client.query(config).finally(() => controller.abort(new Error("demoted"))) };
    await expect(fencedPostgresRow(aborting, { table: "jobs", key: ["id"] }).upsert({ id: 1 }, { epoch: 1, signal: controller.signal })).rejects.toThrow("demoted");
    expect(statements).toHaveLength(1);
  });
});

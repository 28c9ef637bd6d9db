import { TableClient } from "@azure/data-tables";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedAzurite } from "../../shared/host/embedded-azurite.js";
import { StoreUnavailableError } from "../../shared/service/store-unavailable-error.js";
import type { LeaseStore } from "../../shared/lease/lease-store.js";
import { createFreshTableStore, startTestAzurite } from "../helpers/azurite.js";
import { describeLeaseStoreConformance } from "./lease-store-conformance.js";
import { describeLeaseServiceOnStore } from "./lease-service-on-store.js";
import { LEASE_ROW_KEY } from "../../shared/store/table-store.js";
import { TERM_HISTORY_SLOTS } from "../../shared/contract/term-history.js";

let azurite: EmbeddedAzurite;

describeLeaseStoreConformance("Azure Table on Azurite", {
  setUp: async () => {
    azurite = await startTestAzurite();
  },
  tearDown: async () => azurite.close(),
  createStore: () => createFreshTableStore(azurite),
  // A string property over Table Storage's 64 KiB limit: 400 PropertyValueTooLarge.
  unwritableAddress: "x".repeat(70_000),
});

let azuriteForService: EmbeddedAzurite;
let serviceTables = 0;

describeLeaseServiceOnStore("Azure Table on Azurite", {
  setUp: async () => {
    azuriteForService = await startTestAzurite();
  },
  tearDown: async () => azuriteForService.close(),
  createStore: async () => {
    serviceTables += 1;
    const tableName = `service${process.pid}x${serviceTables}`;
    // A client of its own, as an operator's script would use, to delete rows behind the service.
    const raw = TableClient.fromConnectionString(azuriteForService.connectionString, tableName, { allowInsecureConnection: true });
    await raw.createTable();
    const store = await createFreshTableStore(azuriteForService, tableName);
    const int64 = (value: number) => ({ value: String(value), type: "Int64" as const });
    return {
      store,
      deleteEntry: async (utype) => void (await raw.deleteEntity(utype, LEASE_ROW_KEY)),
      // A history row as earlier versions wrote it: RowKey term-NN (the ring slot), no `transactional`.
      writeLegacyTerm: async ({ utype, epoch, uuid, address, startedAt, endedAt, endedBy }) =>
        void (await raw.upsertEntity(
          { partitionKey: utype, rowKey: `term-${String(epoch % TERM_HISTORY_SLOTS).padStart(2, "0")}`, epoch: int64(epoch), uuid, address: address ?? "", startedAt: int64(startedAt), endedAt: int64(endedAt), endedBy },
          "Replace",
        )),
    };
  },
});

describe("Table store failures", () => {
  let down: EmbeddedAzurite;
  let store: LeaseStore;

  beforeAll(async () => {
    down = await startTestAzurite();
    store = await createFreshTableStore(down);
    await down.close();
  });

  it("maps an unreachable Table service to StoreUnavailableError on every call", async () => {
    const lease = { utype: "a", uuid: "u", address: null, epoch: 1, renewedAt: 1, revoked: false, endedUuids: [] };
    await expect(store.read("a")).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.create(lease)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.replace(lease, "*")).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});

describe("Table store on a missing table", () => {
  let azuriteForMissing: EmbeddedAzurite;
  beforeAll(async () => {
    azuriteForMissing = await startTestAzurite();
  });
  afterAll(async () => azuriteForMissing.close());

  it("reports a missing table as unavailable rather than as an empty lease", async () => {
    const store = await createFreshTableStore(azuriteForMissing, "nosuchtable");
    await expect(store.read("a")).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.ping()).rejects.toThrow(/TableNotFound/);
  });
});

describe("Table store on rows written before `revoked` and `endedUuids` existed", () => {
  let legacy: EmbeddedAzurite;
  beforeAll(async () => {
    legacy = await startTestAzurite();
  });
  afterAll(async () => legacy.close());

  it("reads them as not revoked with no ended uuids, and renews and replaces them", async () => {
    const tableName = `legacy${process.pid}`;
    const raw = TableClient.fromConnectionString(legacy.connectionString, tableName, { allowInsecureConnection: true });
    await raw.createTable();
    const int64 = (value: number) => ({ value: String(value), type: "Int64" as const });
    await raw.createEntity({ partitionKey: "old", rowKey: "lease", uuid: "u", address: "h:1", epoch: int64(4), renewedAt: int64(1_000) });
    const store = await createFreshTableStore(legacy, tableName);
    const read = await store.read("old");
    expect(read).toMatchObject({ utype: "old", uuid: "u", address: "h:1", epoch: 4, renewedAt: 1_000, revoked: false, endedUuids: [] });
    const renewed = await store.renew("old", { renewedAt: 2_000 }, read!.etag);
    expect(renewed.ok).toBe(true);
    expect(await store.read("old")).toMatchObject({ address: "h:1", renewedAt: 2_000, revoked: false, endedUuids: [] });
    const replaced = await store.replace({ ...read!, renewedAt: 3_000, revoked: true, endedUuids: ["x"] }, renewed.ok ? renewed.etag : "");
    expect(replaced.ok).toBe(true);
    expect(await store.read("old")).toMatchObject({ revoked: true, endedUuids: ["x"] });
  });

  it("refuses a damaged row (an epoch that is no number, an ended list that is no list) as unavailable, naming the field", async () => {
    const tableName = `damaged${process.pid}`;
    const raw = TableClient.fromConnectionString(legacy.connectionString, tableName, { allowInsecureConnection: true });
    await raw.createTable();
    await raw.createEntity({ partitionKey: "badlist", rowKey: "lease", uuid: "u", address: "", epoch: 1, renewedAt: 1, endedUuids: "[not json" });
    await raw.createEntity({ partitionKey: "badepoch", rowKey: "lease", uuid: "u", address: "", epoch: "three", renewedAt: 1 });
    const store = await createFreshTableStore(legacy, tableName);
    await expect(store.read("badlist")).rejects.toThrow(/corrupt lease for "badlist": endedUuids/);
    // Today's NaN: an epoch that reads as NaN would make every takeover's epoch NaN too.
    await expect(store.read("badepoch")).rejects.toThrow(/corrupt lease for "badepoch": epoch/);
    await expect(store.read("badepoch")).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
